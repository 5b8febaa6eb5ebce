// API.md, "Errors": the database down (503, then normal again without a
// restart), a query past QUERY_TIMEOUT_MS (504, cancelled on the server), and
// 500 bodies that carry no SQL, stack trace or credential.
import { expect } from 'chai'
import request from '../support/request.ts'
import { adminConnection, createTestDatabase, testServer, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'
import { loadSite } from '../fixtures/site.ts'
import { createDb } from '../../db/connect.ts'
import { streamBookings } from '../../db/bookings.ts'
import { readSnapshot } from '../../db/snapshot.ts'

const SLOTS = '/wp-json/booking-calendar/v1/slots?status=reject&flat'

describe('failures', () => {
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('failures')
    await loadSite(db)
  })
  after(async () => {
    await db.drop()
  })

  describe('rest_database_unavailable', () => {
    let proxy: TcpProxy
    let t: TestApp

    before(async () => {
      proxy = await startTcpProxy(testServer().host, testServer().port)
      t = createTestApp(db, { port: proxy.port, env: { SITE_TIMEZONE: 'Europe/Berlin' } })
    })
    after(async () => {
      await t.close()
      await proxy.close()
    })

    it('answers 503 with Retry-After while the database is down, and normally once it is back, without a restart', async () => {
      await request(t.app).get(SLOTS).expect(200)
      await proxy.cut()
      for (let i = 0; i < 3; i++) {
        const down = await request(t.app).get(SLOTS).expect(503)
        expect(down.headers['retry-after']).to.equal('5')
        expect(down.body).to.deep.equal({
          code: 'rest_database_unavailable', message: 'The database cannot be reached. Try again shortly.', data: { status: 503 },
        })
      }
      const ready = await request(t.app).get('/readyz').expect(503)
      expect(ready.body.code).to.equal('rest_database_unavailable')
      await request(t.app).get('/healthz').expect(200)

      await proxy.restore()
      const back = await request(t.app).get(SLOTS).expect(200)
      expect(back.body.total).to.equal(1)
      await request(t.app).get('/readyz').expect(200)
    })
  })

  describe('rest_query_timeout', () => {
    it('answers 504 when a query runs past QUERY_TIMEOUT_MS, and the server cancels the query', async () => {
      const t = createTestApp(db, { env: { QUERY_TIMEOUT_MS: '300', SITE_TIMEZONE: 'UTC' } })
      const locker = await adminConnection({ database: db.name })
      try {
        // A write lock held elsewhere keeps our SELECT waiting for as long as it is held.
        await locker.query(`LOCK TABLES ${db.prefix}booking_calendar_bookings WRITE`)
        const started = Date.now()
        const res = await request(t.app).get(SLOTS).expect(504)
        expect(Date.now() - started).to.be.below(5000)
        expect(res.body).to.deep.equal({
          code: 'rest_query_timeout',
          message: 'The database did not answer in time; the query was cancelled. Try again in a moment; if a large report keeps failing, narrow its date range or ask for fewer bookings.',
          data: { status: 504 },
        })
        // The lock is still held: a query only abandoned by the client would still be waiting on the server.
        expect(await db.readerQueries()).to.deep.equal([])
      } finally {
        await locker.query('UNLOCK TABLES')
        await locker.end()
        await t.close()
      }
    })
  })

  describe('the first-row watchdog of streamed answers', () => {
    it('gives up on a streamed query when no first row comes within its bound, and kills it on the server', async () => {
      const server = testServer()
      const handle = createDb({
        host: server.host, port: server.port, user: server.readerUser, password: server.readerPassword, database: db.name,
        tablePrefix: db.prefix, poolSize: 2, queryTimeoutMs: 60_000,
      })
      const locker = await adminConnection({ database: db.name })
      try {
        await locker.query(`LOCK TABLES ${db.prefix}booking_calendar_bookings WRITE, ${db.prefix}posts WRITE`)
        let failure: { code?: string } | undefined
        const started = Date.now()
        try {
          await readSnapshot(handle.pool.stream, async (snapshot) => {
            for await (const batch of streamBookings(handle.db, snapshot, {}, 'booking', 300)) void batch
          })
        } catch (error) {
          failure = error as { code?: string }
        }
        // Our own bound, although the session's limit is a minute.
        expect(failure?.code).to.equal('BC_DB_TIMEOUT')
        expect(Date.now() - started).to.be.below(2_000)
        const deadline = Date.now() + 3_000
        while ((await db.readerQueries()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
        expect(await db.readerQueries()).to.deep.equal([])
      } finally {
        await locker.query('UNLOCK TABLES')
        await locker.end()
        await handle.close()
      }
    })
  })

  describe('rest_internal_error', () => {
    it('answers 500 with a fixed sentence: no SQL, stack trace or credential; the log has the cause', async () => {
      const broken = await createTestDatabase('broken')
      await loadSite(broken)
      await broken.admin.query(`ALTER TABLE ${broken.prefix}booking_calendar_bookings DROP COLUMN note`)
      const t = createTestApp(broken)
      try {
        const res = await request(t.app).get(SLOTS).set('X-Request-Id', 'broken-report-1').expect(500)
        expect(res.body).to.deep.equal({
          code: 'rest_internal_error', message: 'The server could not answer this request. The error has been logged.', data: { status: 500 },
        })
        expect(res.text).to.not.match(/select|note|at .*\.ts|password|bc_reader/i)
        const logged = t.logs.find((line) => line.msg === 'request failed')
        expect(logged, 'an error log line').to.not.equal(undefined)
        expect(JSON.stringify(logged)).to.include('Unknown column')
        // The log, never the answer, has the error's type and stack, to find where it came from.
        expect(logged).to.include({ errorType: 'Error' })
        expect((logged!.err as { stack: string }).stack).to.match(/\n\s+at /)
        // The error line and the request's own line both carry its id (requestLogger).
        expect(logged).to.include({ requestId: 'broken-report-1' })
        expect(t.logs.find((line) => line.msg === 'request')).to.include({ requestId: 'broken-report-1', status: 500 })
      } finally {
        await t.close()
        await broken.drop()
      }
    })
  })

  describe('a database that hangs once the last row is sent', () => {
    let proxy: TcpProxy
    let t: TestApp

    before(async () => {
      proxy = await startTcpProxy(testServer().host, testServer().port)
      t = createTestApp(db, { port: proxy.port, env: { SITE_TIMEZONE: 'Europe/Berlin', QUERY_TIMEOUT_MS: '1000', LOG_LEVEL: 'info' } })
    })
    after(async () => {
      await t.close()
      await proxy.close()
    })

    it('an answer sent whole is no answer cut: a COMMIT that then fails is logged as a failure after the answer', async function () {
      this.timeout(10_000)
      const whole = await request(t.app).get('/wp-json/booking-calendar/v1/slots?flat').expect(200)
      // Its COMMIT follows the answer's last byte: done before the next one's is withheld.
      await db.untilReaderIdle(5_000)
      // The transaction's COMMIT, after the last byte of the answer, never reaches the database.
      proxy.withhold('COMMIT')
      try {
        const res = await request(t.app).get('/wp-json/booking-calendar/v1/slots?flat').expect(200)
        expect(res.body).to.deep.equal(whole.body)
        for (let i = 0; i < 50 && !t.logs.some((line) => line.msg === 'failed after the answer was sent'); i++) await new Promise((resolve) => setTimeout(resolve, 100))
      } finally {
        proxy.withhold(undefined)
      }
      const after = t.logs.filter((line) => line.msg === 'failed after the answer was sent')
      expect(after, JSON.stringify(after)).to.have.length(1)
      expect(t.logs.filter((line) => String(line.msg).startsWith('answer cut'))).to.deep.equal([])
      expect(t.logs.filter((line) => line.msg === 'request').at(-1)).to.include({ status: 200, completed: true })
      const metrics = await request(t.app).get('/metrics').expect(200)
      expect(metrics.text).to.not.match(/^booking_calendar_answers_cut_total\{/m)
      // The connection that hung was destroyed, not given back: the next answer is whole.
      await request(t.app).get('/wp-json/booking-calendar/v1/slots?flat').expect(200)
    })
  })

  describe('read-only', () => {
    it('every pooled session is read-only: a write fails even for an account that may write', async () => {
      const server = testServer()
      await db.admin.query(`CREATE USER IF NOT EXISTS 'bc_writer'@'%' IDENTIFIED BY 'writer-pw'; GRANT ALL ON \`${db.name}\`.* TO 'bc_writer'@'%'`)
      const handle = createDb({
        host: server.host, port: server.port, user: 'bc_writer', password: 'writer-pw', database: db.name,
        tablePrefix: db.prefix, poolSize: 2, queryTimeoutMs: 5000,
      })
      try {
        const { sql } = await import('kysely')
        const readOnly = await sql<{ ro: number }>`SELECT @@session.tx_read_only AS ro`.execute(handle.db)
        expect(readOnly.rows).to.deep.equal([{ ro: 1 }])
        let failure: { errno?: number } | undefined
        try {
          await sql`INSERT INTO ${sql.table(`${db.prefix}options`)} (option_name, option_value) VALUES ('x', 'y')`.execute(handle.db)
        } catch (error) {
          failure = error as { errno?: number }
        }
        // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
        expect(failure?.errno).to.equal(1792)
      } finally {
        await handle.close()
        await db.admin.query(`DROP USER 'bc_writer'@'%'`)
      }
    })

    describe('a server whose sql_mode has NO_BACKSLASH_ESCAPES', () => {
      // mysql2 escapes a quote in a value as \', which such a server reads as a
      // backslash and the end of the string: a service slug could then carry SQL.
      let globalMode: string
      before(async () => {
        const [rows] = await db.admin.query('SELECT @@GLOBAL.sql_mode AS mode') as [Array<{ mode: string }>, unknown]
        globalMode = rows[0]!.mode
        await db.admin.query(`SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',NO_BACKSLASH_ESCAPES,PAD_CHAR_TO_FULL_LENGTH')`)
      })
      after(async () => {
        await db.admin.query('SET GLOBAL sql_mode = ?', [globalMode])
      })

      it('every session reads with the sql_mode the service is written for, so a value never becomes SQL', async () => {
        const t = createTestApp(db)
        try {
          const slots = '/wp-json/booking-calendar/v1/slots?flat&service='
          const unknown = await request(t.app).get(`${slots}nope`)
          expect(unknown.status).to.equal(404)
          for (const payload of ["x\\') OR (1=1) -- -", "x\\' OR 1=1 OR '"]) {
            const res = await request(t.app).get(`${slots}${encodeURIComponent(payload)}`)
            expect(res.status, payload).to.equal(404)
            expect(res.body.code, payload).to.equal(unknown.body.code)
          }
          const { sql } = await import('kysely')
          const mode = await sql<{ mode: string }>`SELECT @@SESSION.sql_mode AS mode`.execute(t.handle.db)
          expect(mode.rows[0]!.mode).to.equal('STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION')
        } finally {
          await t.close()
        }
      })
    })

    it('the test account the service reads with may only SELECT', async () => {
      const [grants] = await db.admin.query(`SHOW GRANTS FOR '${testServer().readerUser}'@'%'`) as [Record<string, string>[], unknown]
      const text = grants.map((row) => Object.values(row)[0]).join('\n')
      expect(text).to.match(/GRANT SELECT ON \*\.\*/)
      expect(text).to.not.match(/INSERT|UPDATE|DELETE|ALL PRIVILEGES/)
    })
  })
})
