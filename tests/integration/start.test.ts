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

  it('SIGTERM to npm stops the service gracefully, not npm alone (the script execs node, so the signal reaches it)', async function () {
    const { spawn } = await import('node:child_process')
    const { findFreePort } = await import('../../scripts/mariadb.ts')
    const port = await findFreePort()
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: clone, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), WORKERS: '1', DATABASE_URL: 'mysql://u:p@127.0.0.1:1/db' },
    })
    let output = ''
    npm.stdout.on('data', (chunk) => { output += chunk })
    for (let i = 0; i < 300 && !output.includes('"listening"'); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(output).to.include('"listening"')
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))
    npm.kill('SIGTERM')
    await exited
    // The service logged its stop, and nothing listens on its port any more.
    for (let i = 0; i < 50 && !output.includes('"msg":"stopped"'); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(output).to.include('"msg":"stopped"')
    const { connect } = await import('node:net')
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.destroy(); resolve(false) })
      socket.once('error', () => resolve(true))
    })
    expect(refused).to.equal(true)
  })

  it('builds again when a source is newer than dist/', () => {
    const later = new Date(Date.now() + 60_000)
    utimesSync(join(clone, 'server/config.ts'), later, later)
    expect(start().stderr).to.include('[start] building dist/')
  })
})
