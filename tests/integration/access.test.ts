// AUTH_MODE token and none, CORS, and what the logs never hold (API.md, "Access").
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp } from '../support/app.ts'
import { loadSite } from '../fixtures/site.ts'
import { findFreePort } from '../../scripts/mariadb.ts'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { launchChromium } from '../support/chromium.ts'

const SLOTS = '/wp-json/booking-calendar/v1/slots?status=reject&flat'

describe('access', () => {
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('access')
    await loadSite(db)
  })
  after(async () => {
    await db.drop()
  })

  describe('AUTH_MODE=token', () => {
    const env = { AUTH_MODE: 'token', API_TOKENS: 'first-token-0123456789, second-token-abcdef' }

    it('a token from API_TOKENS gets 200 and customer data; every token of the list works', async () => {
      const t = createTestApp(db, { env })
      try {
        const res = await request(t.app).get(SLOTS).set('Authorization', 'Bearer first-token-0123456789').expect(200)
        expect(res.body.booked_slots[0].customer).to.deep.equal({ name: 'Customer 104', email: 'c104@example.com', phone: '+49 30 104' })
        await request(t.app).get(SLOTS).set('Authorization', 'bearer second-token-abcdef').expect(200)
      } finally {
        await t.close()
      }
    })

    it('a wrong token, a prefix of a token, another scheme or none get 401', async () => {
      const t = createTestApp(db, { env })
      try {
        for (const header of ['Bearer wrong', 'Bearer first-token', 'Bearer first-token-0123456789x', 'Basic Zmlyc3QtdG9rZW4tMDEyMzQ1Njc4OQ==', 'Bearer ']) {
          const res = await request(t.app).get(SLOTS).set('Authorization', header).expect(401)
          expect(res.body.code, header).to.equal('rest_not_logged_in')
          expect(res.headers['www-authenticate']).to.equal('Bearer realm="booking-calendar-api"')
        }
        const none = await request(t.app).get(SLOTS).expect(401)
        expect(none.body).to.deep.equal({ code: 'rest_not_logged_in', message: 'You are not currently logged in.', data: { status: 401 } })
        const wrong = await request(t.app).get(SLOTS).set('Authorization', 'Bearer wrong').expect(401)
        expect(wrong.body).to.deep.equal({ code: 'rest_not_logged_in', message: 'The bearer token is not valid.', data: { status: 401 } })
      } finally {
        await t.close()
      }
    })

    it('a refusal is logged and counted under its route, not as no_route', async () => {
      const t = createTestApp(db, { env: { ...env, LOG_LEVEL: 'info' } })
      try {
        await request(t.app).get(SLOTS).expect(401)
        await request(t.app).get('/booking-calendar/v1/summary').expect(401)
        const lines = t.logs.filter((line) => line.msg === 'request')
        expect(lines.map((line) => [line.route, line.status])).to.deep.equal([['slots', 401], ['summary', 401]])
        const metrics = (await request(t.app).get('/metrics').expect(200)).text
        expect(metrics).to.include('http_requests_total{route="slots",method="GET",status="401"} 1')
        expect(metrics).to.include('http_requests_total{route="summary",method="GET",status="401"} 1')
        expect(metrics).to.not.include('route="no_route"')
      } finally {
        await t.close()
      }
    })

    it('guards the namespace index and unknown paths under the prefixes; /healthz, /readyz and OPTIONS stay open', async () => {
      const t = createTestApp(db, { env })
      try {
        await request(t.app).get('/wp-json/booking-calendar/v1/').expect(401)
        await request(t.app).get('/booking-calendar/v1/nope').expect(401)
        await request(t.app).get('/?rest_route=/booking-calendar/v1/disabled-time').expect(401)
        await request(t.app).get('//wp-json//booking-calendar/v1//slots').expect(401)
        await request(t.app).get('/healthz').expect(200)
        await request(t.app).get('/readyz').expect(200)
        await request(t.app).options('/wp-json/booking-calendar/v1/slots').expect(204)
      } finally {
        await t.close()
      }
    })
  })

  describe('AUTH_MODE=none', () => {
    it('customer is null, even with credentials, unless EXPOSE_CUSTOMER_DATA=true', async () => {
      const t = createTestApp(db)
      try {
        const res = await request(t.app).get(SLOTS).set('Authorization', 'Bearer anything').expect(200)
        expect(res.body.booked_slots[0].customer).to.equal(null)
      } finally {
        await t.close()
      }
    })

    /** The warnings main.ts logs before it listens, with this environment. */
    async function startupWarnings(env: Record<string, string>): Promise<string[]> {
      const port = await findFreePort()
      const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
        env: { PATH: process.env.PATH, DATABASE_URL: 'mysql://u:p@127.0.0.1:1/db', PORT: String(port), WORKERS: '1', ...env },
      })
      let output = ''
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk) => {
          output += chunk
          if (output.includes('"listening"')) resolve()
        })
      })
      child.kill('SIGTERM')
      const lines = output.trim().split('\n').map((line) => JSON.parse(line))
      // Up to "listening": the database's check at start comes after it (a warning of its own, the database here being absent).
      return lines.slice(0, lines.findIndex((line) => line.msg === 'listening')).filter((line) => line.level === 40).map((line) => line.msg as string)
    }

    it('warns at start-up when customer data is exposed without authentication', async function () {
      this.timeout(30_000)
      const warnings = await startupWarnings({ EXPOSE_CUSTOMER_DATA: 'true' })
      expect(warnings).to.have.length(1)
      expect(warnings[0]).to.match(/^EXPOSE_CUSTOMER_DATA is true while AUTH_MODE is none/)
    })

    it('warns at start-up when /metrics is open while the API is guarded, and not once METRICS_TOKEN is set', async function () {
      this.timeout(30_000)
      const [open, guarded] = await Promise.all([
        startupWarnings({ AUTH_MODE: 'token', API_TOKENS: 'a-token' }),
        startupWarnings({ AUTH_MODE: 'token', API_TOKENS: 'a-token', METRICS_TOKEN: 'metrics-token' }),
      ])
      expect(open).to.deep.equal(['/metrics is open while AUTH_MODE is token: anyone who can reach this service reads its request counts per route and status and the rows it sent; set METRICS_TOKEN to guard it'])
      expect(guarded).to.deep.equal([])
    })
  })

  describe('CORS', () => {
    it('is off by default: no CORS headers for any origin', async () => {
      const t = createTestApp(db)
      try {
        const res = await request(t.app).get(SLOTS).set('Origin', 'https://reports.example').expect(200)
        expect(res.headers).to.not.have.property('access-control-allow-origin')
      } finally {
        await t.close()
      }
    })

    it('allows the origins of CORS_ORIGINS only, preflight included, exposing the paging headers', async () => {
      const t = createTestApp(db, { env: { CORS_ORIGINS: 'https://reports.example, https://bi.example' } })
      try {
        const res = await request(t.app).get(SLOTS).set('Origin', 'https://bi.example').expect(200)
        expect(res.headers['access-control-allow-origin']).to.equal('https://bi.example')
        expect(res.headers['access-control-expose-headers']).to.equal('ETag, X-WP-Total, X-WP-TotalPages, Link, X-Request-Id')
        expect(res.headers.vary).to.include('Origin')
        const preflight = await request(t.app).options('/wp-json/booking-calendar/v1/slots')
          .set('Origin', 'https://reports.example').set('Access-Control-Request-Method', 'GET').expect(204)
        expect(preflight.headers['access-control-allow-origin']).to.equal('https://reports.example')
        expect(preflight.headers['access-control-allow-methods']).to.equal('GET, HEAD, OPTIONS')
        // What WordPress allows (rest_send_cors_headers): apiFetch's nonce header, and credentials.
        expect(preflight.headers['access-control-allow-headers']).to.equal('Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type, If-None-Match, X-Request-Id')
        expect(preflight.headers['access-control-allow-credentials']).to.equal('true')
        expect(res.headers['access-control-allow-credentials']).to.equal('true')
        const other = await request(t.app).get(SLOTS).set('Origin', 'https://evil.example').expect(200)
        expect(other.headers).to.not.have.property('access-control-allow-origin')
        expect(other.headers).to.not.have.property('access-control-allow-credentials')
      } finally {
        await t.close()
      }
    })

    it('lets a page of another origin, in Chromium, read the tag and revalidate to a 304 (issue 63)', async function () {
      this.timeout(120_000)
      const listen = (server: Server) => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)))
      // The page's origin: another port is another origin.
      const pageServer = createServer((_req, res) => res.setHeader('Content-Type', 'text/html').end('<!doctype html><title>reports</title>'))
      const pageOrigin = await listen(pageServer)
      const t = createTestApp(db, { env: { CORS_ORIGINS: pageOrigin } })
      const apiServer = t.app.listen(0, '127.0.0.1')
      await new Promise((resolve) => apiServer.once('listening', resolve))
      const browser = await launchChromium()
      try {
        const page = await browser.newPage()
        await page.goto(pageOrigin, { waitUntil: 'load' })
        const url = `http://127.0.0.1:${(apiServer.address() as AddressInfo).port}${SLOTS}`
        const seen = await page.evaluate(async (address) => {
          const first = await fetch(address, { cache: 'no-store' })
          const tag = first.headers.get('ETag')
          const total = first.headers.get('X-WP-Total')
          await first.text()
          const again = await fetch(address, { cache: 'no-store', headers: { 'If-None-Match': tag ?? '' } })
          return { first: first.status, tag, total, again: again.status }
        }, url)
        expect(seen.first).to.equal(200)
        expect(seen.tag).to.match(/^W\/"/)
        expect(seen.total).to.match(/^\d+$/)
        expect(seen.again).to.equal(304)
      } finally {
        await browser.close()
        apiServer.closeAllConnections()
        await new Promise((resolve) => apiServer.close(resolve))
        await new Promise((resolve) => pageServer.close(resolve))
        await t.close()
      }
    })
  })

  describe('logs', () => {
    it('never hold Authorization, cookies or customer fields', async () => {
      const t = createTestApp(db, { env: { AUTH_MODE: 'token', API_TOKENS: 'secret-token-for-logs' } })
      try {
        await request(t.app).get(`${SLOTS}&service=haircut`).set('Authorization', 'Bearer secret-token-for-logs').set('Cookie', 'wordpress_logged_in=cookie-secret').expect(200)
        await request(t.app).get(SLOTS).set('Authorization', 'Bearer wrong-secret-guess').expect(401)
        await request(t.app).get('/wp-json/booking-calendar/v1/slots?status=nope').set('Authorization', 'Bearer secret-token-for-logs').expect(400)
        const text = JSON.stringify(t.logs)
        expect(t.logs.filter((line) => line.msg === 'request')).to.have.length(3)
        for (const secret of ['secret-token-for-logs', 'wrong-secret-guess', 'cookie-secret', 'Customer 104', 'c104@example.com', '+49 30 104', 'reader-password']) {
          expect(text, secret).to.not.include(secret)
        }
        expect(text).to.not.match(/authorization|cookie/i)
      } finally {
        await t.close()
      }
    })
  })

  describe('security headers', () => {
    it('sends no X-Powered-By, and headers fit for a JSON API on answers and errors', async () => {
      const t = createTestApp(db)
      try {
        for (const res of [await request(t.app).get(SLOTS).expect(200), await request(t.app).get('/nope').expect(404)]) {
          expect(res.headers).to.not.have.property('x-powered-by')
          expect(res.headers['x-content-type-options']).to.equal('nosniff')
          expect(res.headers['x-frame-options']).to.equal('DENY')
          expect(res.headers['content-security-policy']).to.equal("default-src 'none'; frame-ancestors 'none'")
          // A tagged answer may be kept by its client and asked again (API.md, "Conditional requests"); anything else is not kept.
          expect(res.headers['cache-control']).to.equal(res.status === 200 ? 'private, no-cache' : 'no-store')
        }
      } finally {
        await t.close()
      }
    })
  })
})
