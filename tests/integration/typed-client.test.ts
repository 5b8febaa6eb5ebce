// A typed client made from openapi.json (API.md, "Spreadsheets and BI tools";
// issue 53): openapi-typescript generates the types, docs/examples/typed-client.ts
// calls slots/ with `flat: true` and `bom: true` through openapi-fetch, `tsc --strict`
// must accept it (the document once typed flat as a string enum: 5 errors), and
// its run against the service must give the answer.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { startListeningService, type ListeningService } from '../support/service.ts'
import { loadSite } from '../fixtures/site.ts'

const root = new URL('../../', import.meta.url).pathname
const TOKEN = 'typed-client-token-0123456789'

/** Runs a command to its end (at most two minutes): never spawnSync, which would stop the service in this process from answering it. */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, timeout: 120_000 })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString('utf8') })
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString('utf8') })
    child.once('error', reject)
    child.once('close', (status) => resolve({ status, output }))
  })
}

describe('a typed client generated from openapi.json (docs/examples/typed-client.ts)', function () {
  this.timeout(180_000)
  let db: TestDatabase
  let service: ListeningService
  let dir: string

  before(async () => {
    db = await createTestDatabase('typed_client')
    await loadSite(db)
    service = await startListeningService(db, { SITE_TIMEZONE: 'Europe/Berlin', AUTH_MODE: 'token', API_TOKENS: TOKEN })
    dir = mkdtempSync(join(tmpdir(), 'typed-client-'))
    // The recipe's folder: its generated types beside it, the project's packages, ES modules.
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n')
    copyFileSync(join(root, 'docs/examples/typed-client.ts'), join(dir, 'typed-client.ts'))
  })
  after(async () => {
    await service?.close()
    await db?.drop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('openapi-typescript makes its types, tsc --strict accepts flat: true and bom: true, and it runs against the service', async () => {
    const generated = await run(join(root, 'node_modules/.bin/openapi-typescript'), [join(root, 'openapi.json'), '-o', join(dir, 'booking-calendar.d.ts')], dir)
    expect(generated.status, generated.output).to.equal(0)
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', noEmit: true, allowImportingTsExtensions: true,
        skipLibCheck: true, types: ['node'], typeRoots: [join(root, 'node_modules/@types')],
      },
      files: ['typed-client.ts'],
    }))
    const checked = await run(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json', '--strict'], dir)
    expect(checked.output.trim(), 'tsc --strict').to.equal('')
    expect(checked.status).to.equal(0)

    const ran = await run(process.execPath, ['--import', 'tsx', 'typed-client.ts'], dir, {
      BOOKING_API_URL: `http://127.0.0.1:${service.port}/wp-json/booking-calendar/v1`, BOOKING_API_TOKEN: TOKEN,
      BOOKING_START: '2026-11-24', BOOKING_END: '2026-11-26',
    })
    expect(ran.status, ran.output).to.equal(0)
    expect(JSON.parse(ran.output)).to.deep.equal({
      // Booked and pending of 24 to 26 November, in booking order; 106 is expired.
      total: 5, ids: [102, 103, 101, 108, 107], csvStartsWithBom: true,
      csvHeader: 'id,service_id,service_slug,status,booking_date,start,end,all_day,created_date,customer_name,customer_email,customer_phone,note',
      occupancy: JSON.parse(ran.output).occupancy,
    })
    expect(JSON.parse(ran.output).occupancy).to.be.a('number').and.above(0)
  })
})
