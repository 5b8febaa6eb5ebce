// The database over its Unix socket (DATABASE_URL's ?socket=, WORDPRESS_DB_HOST
// as WordPress's DB_HOST takes it), and secrets read from files (X_FILE, as
// the official WordPress image reads them): API.md, "The database".
import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { demoDataSql } from '../../db/demo-data.ts'
import { createTestDatabase, describeOwnServer, testServer, type TestDatabase } from '../support/database.ts'
import { startListeningService, type ListeningService } from '../support/service.ts'

const SLOTS = '/wp-json/booking-calendar/v1/slots?per_page=5'
const BOOKINGS = 30

describeOwnServer('the database over a Unix socket, and secrets from files', 'it reads through the private server\'s socket', function () {
  this.timeout(120_000)
  let db: TestDatabase
  let dir: string
  const server = testServer()
  const running: ListeningService[] = []

  before(async () => {
    db = await createTestDatabase('socket')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
    dir = mkdtempSync(join(tmpdir(), 'bc-secrets-'))
  })
  after(async () => {
    await Promise.all(running.map((service) => service.close()))
    await db.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  const secretFile = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }

  async function expectAnswers(port: number): Promise<void> {
    const slots = await fetch(`http://127.0.0.1:${port}${SLOTS}`, { signal: AbortSignal.timeout(15_000) })
    expect(slots.status).to.equal(200)
    expect(((await slots.json()) as { total: number }).total).to.equal(BOOKINGS)
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200)
  }

  /** The service in this process with these variables only for the database (DATABASE_URL as given, or none). */
  async function serviceWith(env: Record<string, string>): Promise<ListeningService> {
    const service = await startListeningService({ databaseUrl: '', prefix: db.prefix }, env)
    running.push(service)
    return service
  }

  /** The reader's session as the server sees it: over the socket, its host is localhost. */
  async function readerHosts(): Promise<string[]> {
    const [rows] = await db.admin.query('SELECT DISTINCT host FROM information_schema.processlist WHERE user = ? AND db = ?', [server.readerUser, db.name])
    return (rows as Array<{ host: string }>).map((row) => row.host)
  }

  it('DATABASE_URL ?socket= answers, the host in the URL not used', async () => {
    const databaseUrl = `mysql://${server.readerUser}:${server.readerPassword}@nowhere.invalid/${db.name}?socket=${encodeURIComponent(server.socketPath!)}`
    const service = await serviceWith({ DATABASE_URL: databaseUrl })
    await expectAnswers(service.port)
    expect(await readerHosts()).to.deep.equal(['localhost'])
    await service.close()
    running.splice(running.indexOf(service), 1)
  })

  for (const form of ['localhost:SOCKET', ':SOCKET', 'SOCKET']) {
    it(`WORDPRESS_DB_HOST=${form} answers over the socket`, async () => {
      const service = await serviceWith({
        WORDPRESS_DB_HOST: form.replace('SOCKET', server.socketPath!), WORDPRESS_DB_USER: server.readerUser,
        WORDPRESS_DB_PASSWORD: server.readerPassword, WORDPRESS_DB_NAME: db.name,
      })
      await expectAnswers(service.port)
      expect(await readerHosts()).to.deep.equal(['localhost'])
      await service.close()
      running.splice(running.indexOf(service), 1)
    })
  }

  it('DATABASE_URL_FILE, and WORDPRESS_DB_PASSWORD_FILE: read at start, a trailing newline left off; the values never logged', async () => {
    const url = `mysql://${server.readerUser}:${server.readerPassword}@${server.host}:${server.port}/${db.name}`
    const fromUrl = await serviceWith({ DATABASE_URL_FILE: secretFile('database-url', `${url}\n`) })
    await expectAnswers(fromUrl.port)
    const fromPassword = await serviceWith({
      WORDPRESS_DB_HOST: `localhost:${server.socketPath}`, WORDPRESS_DB_USER: server.readerUser,
      WORDPRESS_DB_PASSWORD_FILE: secretFile('db-password', `${server.readerPassword}\r\n`), WORDPRESS_DB_NAME: db.name,
    })
    await expectAnswers(fromPassword.port)
    for (const service of [fromUrl, fromPassword]) expect(JSON.stringify(service.logs)).to.not.include(server.readerPassword)
  })

  it('X and X_FILE both set stop the start with one line, naming both and no value', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ DATABASE_URL: 'mysql://u:hunter2-secret@db/site', DATABASE_URL_FILE: secretFile('url-2', 'mysql://u:other-secret@db/site') }, 'DATABASE_URL and DATABASE_URL_FILE are both set: give one.'],
      [{ WORDPRESS_DB_HOST: 'db', WORDPRESS_DB_USER: 'u', WORDPRESS_DB_PASSWORD: 'hunter2-secret', WORDPRESS_DB_PASSWORD_FILE: secretFile('pw-2', 'other-secret') },
        'WORDPRESS_DB_PASSWORD and WORDPRESS_DB_PASSWORD_FILE are both set: give one.'],
      [{ DATABASE_URL: 'mysql://u:p@db/site', AUTH_MODE: 'token', API_TOKENS: 'hunter2-secret', API_TOKENS_FILE: secretFile('tokens', 'other-secret') }, 'API_TOKENS and API_TOKENS_FILE are both set: give one.'],
    ]
    for (const [env, line] of cases) {
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts'], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 30_000 })
      expect(run.status).to.equal(1)
      expect(run.stdout).to.equal('')
      expect(run.stderr).to.equal(`booking-calendar-api: ${line}\n`)
    }
  })
})
