// Operating the service: the request log line, LOG_LEVEL,
// and GET /metrics in Prometheus's format, open or behind METRICS_TOKEN.
import { expect } from 'chai'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { loadSite } from '../fixtures/site.ts'
import { buildOpenApiDocument, withSiteAddress } from '../../server/openapi.ts'
import { spawn } from 'node:child_process'
import { testServer } from '../support/database.ts'
import { findFreePort } from '../../scripts/mariadb.ts'

const SLOTS = '/wp-json/booking-calendar/v1/slots'

/** The value of one sample of the metrics text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('operations', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('operations')
    await loadSite(db)
    await db.insert('booking_calendar_disabled_times', [
      { id: 1, service_id: 0, rule_type: 'weekly', weekday: 1, time_from: '18:00:00', time_to: '08:00:00', note: 'After hours' },
    ])
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  describe('the request log', () => {
    it('one JSON line per request: the incoming X-Request-Id, method, route, path without the query, status, duration, rows sent', async () => {
      t.logs.length = 0
      const res = await request(t.app).get(`${SLOTS}?flat&service=haircut&_fields=id`).set('X-Request-Id', 'report-42').expect(200)
      expect(res.headers['x-request-id']).to.equal('report-42')
      const line = t.logs.find((l) => l.msg === 'request')!
      expect(line).to.include({
        service: 'booking-calendar-api', requestId: 'report-42', method: 'GET', path: SLOTS, route: 'slots',
        status: 200, rowsSent: res.body.booked_slots.length, completed: true,
      })
      expect(res.body.booked_slots.length).to.be.above(2)
      expect(line.durationMs).to.be.a('number')
      expect(line.level).to.equal(30)
    })

    it('counts the periods of disabled-time/, and names no route for a path that has none', async () => {
      t.logs.length = 0
      const res = await request(t.app).get('/wp-json/booking-calendar/v1/disabled-time?start=2026-12-01&end=2026-12-31').expect(200)
      await request(t.app).get('/wp-json/nothing-here').expect(404)
      const [periods, missing] = t.logs.filter((l) => l.msg === 'request')
      expect(periods).to.include({ route: 'disabled-time', rowsSent: res.body.disabled_times.length })
      expect(res.body.disabled_times.length).to.be.above(0)
      expect(missing).to.include({ route: 'no_route', status: 404, rowsSent: 0 })
    })

    it('an X-Request-Id that is not a plain token is replaced by a new id', async () => {
      const res = await request(t.app).get('/healthz').set('X-Request-Id', 'bad id with spaces').expect(200)
      expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/)
    })

    it('LOG_LEVEL=warn leaves requests out of the log', async () => {
      const quiet = createTestApp(db, { env: { LOG_LEVEL: 'warn' } })
      try {
        await request(quiet.app).get(`${SLOTS}?flat`).expect(200)
        expect(quiet.logs).to.deep.equal([])
      } finally {
        await quiet.close()
      }
    })
  })

  describe('GET /metrics', () => {
    it('counts requests by route, method and status, times them, and counts the rows sent', async () => {
      const fresh = createTestApp(db)
      try {
        const slots = await request(fresh.app).get(`${SLOTS}?flat`).expect(200)
        await request(fresh.app).get(`${SLOTS}?flat`).expect(200)
        await request(fresh.app).get(`${SLOTS}?status=nope`).expect(400)
        const res = await request(fresh.app).get('/metrics').expect(200)
        expect(res.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/)
        const text = res.text
        expect(sample(text, 'http_requests_total{route="slots",method="GET",status="200"}')).to.equal(2)
        expect(sample(text, 'http_requests_total{route="slots",method="GET",status="400"}')).to.equal(1)
        expect(sample(text, 'http_request_duration_seconds_count{route="slots",method="GET",status="200"}')).to.equal(2)
        expect(sample(text, 'http_request_duration_seconds_bucket{le="+Inf",route="slots",method="GET",status="200"}')).to.equal(2)
        expect(sample(text, 'booking_calendar_rows_sent_total{route="slots"}')).to.equal(2 * slots.body.booked_slots.length)
        expect(slots.body.booked_slots.length).to.be.above(10)
      } finally {
        await fresh.close()
      }
    })

    it('shows the database pool: connections in use, idle, and requests waiting', async () => {
      await request(t.app).get(`${SLOTS}?flat`).expect(200)
      // The answer's connection goes back to the pool after its COMMIT, which may follow the last byte.
      let text = ''
      for (let i = 0; i < 50; i++) {
        text = (await request(t.app).get('/metrics').expect(200)).text
        if (sample(text, 'booking_calendar_db_pool_connections{state="in_use"}') === 0) break
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(sample(text, 'booking_calendar_db_pool_connections{state="in_use"}')).to.equal(0)
      expect(sample(text, 'booking_calendar_db_pool_connections{state="idle"}')).to.be.at.least(1)
      expect(sample(text, 'booking_calendar_db_pool_waiting')).to.equal(0)
      expect(sample(text, 'booking_calendar_auth_cache_hits')).to.equal(0)
      expect(text).to.include('process_resident_memory_bytes')
    })

    it('names the database server it is connected to: its kind and version', async () => {
      await request(t.app).get(`${SLOTS}?per_page=1`).expect(200)
      const text = (await request(t.app).get('/metrics').expect(200)).text
      const [version] = await db.admin.query('SELECT VERSION() AS version') as unknown as [[{ version: string }]]
      const expected = /mariadb/i.test(version[0].version) ? 'mariadb' : 'mysql'
      const [, number] = /^(?:5\.5\.5-)?(\d+\.\d+\.\d+)/.exec(version[0].version)!
      expect(sample(text, `booking_calendar_database_info{kind="${expected}",version="${number}"}`)).to.equal(1)
      expect(text.split('\n').filter((line) => line.startsWith('booking_calendar_database_info{'))).to.have.length(1)
    })

    it('METRICS_TOKEN guards it: 401 with WWW-Authenticate without the token or with a wrong one', async () => {
      const guarded = createTestApp(db, { env: { METRICS_TOKEN: 'scrape-secret' } })
      try {
        const none = await request(guarded.app).get('/metrics').expect(401)
        expect(none.body).to.deep.equal({
          code: 'rest_not_logged_in',
          message: 'The metrics need the token of METRICS_TOKEN: send it as Authorization: Bearer <token>.',
          data: { status: 401 },
        })
        expect(none.headers['www-authenticate']).to.equal('Bearer realm="metrics"')
        await request(guarded.app).get('/metrics').set('Authorization', 'Bearer wrong').expect(401)
        const ok = await request(guarded.app).get('/metrics').set('Authorization', 'Bearer scrape-secret').expect(200)
        expect(ok.text).to.include('http_requests_total')
        // The token guards /metrics only: the routes keep AUTH_MODE's rule (none here).
        await request(guarded.app).get(`${SLOTS}?flat`).expect(200)
      } finally {
        await guarded.close()
      }
    })
  })

  describe('GET /openapi.json', () => {
    it('serves the document, open whatever AUTH_MODE says: it describes the API, not its data', async () => {
      const guarded = createTestApp(db, { env: { AUTH_MODE: 'token', API_TOKENS: 'a-token' } })
      try {
        await request(guarded.app).get(`${SLOTS}?flat`).expect(401)
        const res = await request(guarded.app).get('/openapi.json').set('Host', 'shop.example.com').expect(200)
        expect(res.headers['content-type']).to.equal('application/json; charset=utf-8')
        expect(res.body).to.deep.equal(JSON.parse(JSON.stringify(withSiteAddress(buildOpenApiDocument(), 'http://shop.example.com'))))
        // Each server's site is the address the client used (it was always http://localhost:8080).
        expect(res.body.servers.map((server: { variables: { site: { default: string } } }) => server.variables.site.default))
          .to.deep.equal(['http://shop.example.com', 'http://shop.example.com'])
        const proxied = await request(guarded.app).get('/openapi.json').set({ Host: 'api.internal', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'shop.example.com' }).expect(200)
        expect(proxied.body.servers[0].variables.site.default).to.equal('https://shop.example.com')
      } finally {
        await guarded.close()
      }
    })

    it('is served under each prefix too, guarded like the rest of the namespace, with HEAD, OPTIONS and 405', async () => {
      const guarded = createTestApp(db, { env: { AUTH_MODE: 'token', API_TOKENS: 'a-token' } })
      const forms = ['/wp-json/booking-calendar/v1/openapi.json', '/booking-calendar/v1/openapi.json/', '/?rest_route=/booking-calendar/v1/openapi.json']
      try {
        for (const form of forms) {
          const refused = await request(guarded.app).get(form).expect(401)
          expect(refused.body.code, form).to.equal('rest_not_logged_in')
          const res = await request(guarded.app).get(form).set('Authorization', 'Bearer a-token').set('Host', 'shop.example.com').expect(200)
          expect(res.body, form).to.deep.equal(JSON.parse(JSON.stringify(withSiteAddress(buildOpenApiDocument(), 'http://shop.example.com'))))
        }
        await request(guarded.app).head(forms[0]!).set('Authorization', 'Bearer a-token').expect(200)
        const options = await request(guarded.app).options(forms[0]!).expect(204)
        expect(options.headers.allow).to.equal('GET, HEAD, OPTIONS')
        const post = await request(guarded.app).post(forms[0]!).set('Authorization', 'Bearer a-token').expect(405)
        expect([post.body.code, post.headers.allow]).to.deep.equal(['rest_no_route', 'GET, HEAD, OPTIONS'])
      } finally {
        await guarded.close()
      }
    })
  })

  describe('a database set up otherwise than the configuration says (TABLE_PREFIX, the account)', () => {
    const PROBLEM = 'A table the service reads is missing: check TABLE_PREFIX (the site\'s $table_prefix) and the database name.'

    it('/readyz: 503 saying the setup is at fault, the cause in the log line, no table name in the answer', async () => {
      const wrong = createTestApp(db, { env: { TABLE_PREFIX: 'shop_' } })
      try {
        const res = await request(wrong.app).get('/readyz').expect(503)
        expect(res.headers['retry-after']).to.equal('30')
        expect(res.body).to.deep.equal({
          code: 'rest_database_unavailable', message: 'The database cannot serve this service as it is set up; the cause is in the service\'s log.', data: { status: 503 },
        })
        const line = wrong.logs.find((entry) => entry.msg === 'not ready')
        expect(line).to.include({ problem: PROBLEM })
        expect((line!.err as { code: string }).code).to.equal('ER_NO_SUCH_TABLE')
      } finally {
        await wrong.close()
      }
    })

    for (const [what, env, problem] of [
      ['a wrong TABLE_PREFIX', { TABLE_PREFIX: 'shop_' }, PROBLEM],
      ['a wrong password', { DATABASE_URL_PASSWORD: 'not-the-password' }, 'The database refused the account: check the user, the password and the database name (DATABASE_URL, or WORDPRESS_DB_USER, WORDPRESS_DB_PASSWORD and WORDPRESS_DB_NAME).'],
    ] as const) {
      it(`at start, each worker logs ${what} at error with what to check, and runs on`, async function () {
        this.timeout(30_000)
        const server = testServer()
        const password = 'DATABASE_URL_PASSWORD' in env ? env.DATABASE_URL_PASSWORD : server.readerPassword
        const port = await findFreePort()
        const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
          env: {
            PATH: process.env.PATH, PORT: String(port), WORKERS: '2',
            DATABASE_URL: `mysql://${server.readerUser}:${encodeURIComponent(password)}@${server.host}:${server.port}/${db.name}`,
            TABLE_PREFIX: 'TABLE_PREFIX' in env ? env.TABLE_PREFIX : db.prefix,
          },
        })
        try {
          let output = ''
          child.stdout.on('data', (chunk) => { output += chunk })
          const errors = () => output.split('\n').filter((line) => line.includes('"level":50')).map((line) => JSON.parse(line) as Record<string, unknown>)
          const deadline = Date.now() + 20_000
          while (errors().length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
          expect(errors().map((line) => line.msg)).to.deep.equal([problem, problem])
          expect(new Set(errors().map((line) => line.worker))).to.deep.equal(new Set([1, 2]))
          expect(output).to.not.include(password === server.readerPassword ? 'no secret here' : password)
          expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).to.equal(200)
        } finally {
          child.kill('SIGKILL')
        }
      })
    }
  })
})
