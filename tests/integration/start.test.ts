// `npm start` on a fresh clone (after `npm ci`, before any build) builds dist/
// first, and again when a source is newer than the build; then it runs it.
import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = new URL('../..', import.meta.url).pathname

describe('npm start on a fresh clone', function () {
  this.timeout(180_000)
  let clone: string

  before(() => {
    clone = mkdtempSync(join(tmpdir(), 'bc-start-'))
    for (const path of ['server', 'db', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
      cpSync(join(root, path), join(clone, path), { recursive: true })
    }
    symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'))
  })
  after(() => rmSync(clone, { recursive: true, force: true }))

  // A bad PORT makes the built service stop at once with its one line: proof that dist/ runs.
  const start = () => spawnSync('npm', ['start', '--silent'], {
    cwd: clone, encoding: 'utf8', timeout: 150_000, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: 'eighty' },
  })

  it('builds dist/ when it is missing, then runs it', () => {
    expect(existsSync(join(clone, 'dist'))).to.equal(false)
    const run = start()
    expect(run.stderr).to.include('[start] building dist/ (npm run build), as it is missing or older than the sources\n')
    expect(run.stderr).to.include('booking-calendar-api: PORT must be a whole number from 1 to 65535.\n')
    expect(run.stderr).to.not.include('MODULE_NOT_FOUND')
    expect(existsSync(join(clone, 'dist/server/main.js'))).to.equal(true)
  })

  it('does not build again while dist/ is newer than every source', () => {
    const run = start()
    expect(run.stderr).to.not.include('[start] building')
    expect(run.stderr).to.include('booking-calendar-api: PORT must be a whole number from 1 to 65535.\n')
  })

  it('builds again when a source is newer than dist/', () => {
    const later = new Date(Date.now() + 60_000)
    utimesSync(join(clone, 'server/config.ts'), later, later)
    expect(start().stderr).to.include('[start] building dist/')
  })
})
