// AUTH_MODE=wordpress against a real WordPress (Debian's package, served by
// php -S): application passwords made by WordPress, services written by
// wp_insert_post, verdicts cached, and never an open door when WordPress fails.
import { expect } from 'chai'
import request from '../support/request.ts'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { startWordPress, type WordPressSite } from '../support/wordpress.ts'

const SLOTS = '/wp-json/booking-calendar/v1/slots'
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`

describe('AUTH_MODE=wordpress, against a real WordPress', function () {
  this.timeout(180_000)
  let db: TestDatabase
  let wp: WordPressSite
  let now = Date.UTC(2026, 10, 21, 12)
  let t: TestApp

  const appWith = (env: Record<string, string> = {}, timeoutMs = 3000, cacheSize?: number) => createTestApp(db, {
    env: { AUTH_MODE: 'wordpress', WORDPRESS_URL: wp.url, AUTH_CACHE_SECONDS: '60', ...env },
    access: { now: () => now, timeoutMs, cacheSize },
  })

  before(async () => {
    db = await createTestDatabase('wordpress', 'wp_', 'plugin')
    wp = await startWordPress(db)
    const { Haircut, Стрижка: strizhka, Massage, Colouring } = wp.services
    await db.insert('booking_calendar_bookings', [
      { id: 1, service_id: Haircut, status: 'booked', booking_date: '2026-11-25', time_from: '09:00:00', time_to: '10:00:00', customer_name: 'Ann', customer_email: 'ann@example.com', customer_phone: '+49 1', note: 'n', created_at: '2026-11-20 10:00:00' },
      { id: 2, service_id: strizhka, status: 'pending', booking_date: '2026-11-26', time_from: null, time_to: null, customer_name: 'Bo', customer_email: 'bo@example.com', customer_phone: '', note: null, created_at: '0000-00-00 00:00:00' },
      { id: 3, service_id: Massage, status: 'booked', booking_date: '2026-11-27', time_from: '10:00:00', time_to: '11:00:00', customer_name: 'Cy', customer_email: 'cy@example.com', customer_phone: '', note: null, created_at: '2026-11-20 10:00:00' },
      { id: 4, service_id: Colouring, status: 'booked', booking_date: '2026-11-28', time_from: '10:00:00', time_to: '11:00:00', customer_name: 'Di', customer_email: 'di@example.com', customer_phone: '', note: null, created_at: '2026-11-20 10:00:00' },
    ])
    t = appWith()
  })
  after(async () => {
    await t?.close()
    await wp?.close()
    await db?.drop()
  })

  it('the administrator\'s application password gets 200, with customer data', async () => {
    const res = await request(t.app).get(`${SLOTS}?flat&service=haircut`).set('Authorization', basic(wp.admin)).expect(200)
    expect(res.body.booked_slots).to.have.length(1)
    expect(res.body.booked_slots[0].customer).to.deep.equal({ name: 'Ann', email: 'ann@example.com', phone: '+49 1' })
  })

  it('reads the services WordPress wrote: a Unicode slug, a trashed service by ID only, a draft', async () => {
    const auth = basic(wp.admin)
    const unicode = await request(t.app).get(`${SLOTS}?flat&service=%D0%A1%D1%82%D1%80%D0%B8%D0%B6%D0%BA%D0%B0`).set('Authorization', auth).expect(200)
    expect(unicode.body.booked_slots.map((b: { id: number; service_slug: string }) => [b.id, b.service_slug])).to.deep.equal([[2, 'стрижка']])
    const trashed = await request(t.app).get(`${SLOTS}?flat&service=${wp.services.Massage}`).set('Authorization', auth).expect(200)
    expect(trashed.body.booked_slots[0].service_slug).to.equal('massage')
    await request(t.app).get(`${SLOTS}?service=massage`).set('Authorization', auth).expect(404)
    const draft = await request(t.app).get(`${SLOTS}?flat&service=colouring`).set('Authorization', auth).expect(200)
    expect(draft.body.total).to.equal(1)
    const options = await request(t.app).get(`${SLOTS}?flat&_fields=start&service=haircut`).set('Authorization', auth).expect(200)
    expect(options.body.booked_slots).to.deep.equal([{ start: '2026-11-25T09:00:00+01:00' }])
  })

  it('a wrong password gets 401 with the code and message WordPress gave', async () => {
    const wrong = 'admin:abcd efgh ijkl mnop qrst uvwx'
    const direct = await fetch(`${wp.url}/wp-json/wp/v2/users/me?context=edit`, { headers: { Authorization: basic(wrong) } })
    const fromWordPress = await direct.json() as { code: string; message: string }
    expect(direct.status).to.equal(401)
    const res = await request(t.app).get(SLOTS).set('Authorization', basic(wrong)).expect(401)
    expect(res.body).to.deep.equal({ code: fromWordPress.code, message: fromWordPress.message, data: { status: 401 } })
  })

  it('a subscriber gets 403 rest_forbidden: good credentials, not allowed', async () => {
    const res = await request(t.app).get(SLOTS).set('Authorization', basic(wp.subscriber)).expect(403)
    expect(res.body).to.deep.equal({ code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 403 } })
  })

  it('AUTH_CAPABILITY chooses the capability: read lets the subscriber in', async () => {
    const readers = appWith({ AUTH_CAPABILITY: 'read' })
    try {
      await request(readers.app).get(SLOTS).set('Authorization', basic(wp.subscriber)).expect(200)
    } finally {
      await readers.close()
    }
  })

  it('no Authorization header gets 401 rest_not_logged_in without asking WordPress', async () => {
    const before = t.access.stats.wordpressCalls
    const res = await request(t.app).get(SLOTS).expect(401)
    expect(res.body).to.deep.equal({ code: 'rest_not_logged_in', message: 'You are not currently logged in.', data: { status: 401 } })
    expect(t.access.stats.wordpressCalls).to.equal(before)
  })

  it('guards every route under the prefixes, the namespace index and the rest_route form included; /healthz, /readyz and OPTIONS are open', async () => {
    for (const path of ['/wp-json/booking-calendar/v1', '/booking-calendar/v1/disabled-time', '/?rest_route=/booking-calendar/v1/slots', '/wp-json/booking-calendar/v1/openapi.json']) {
      const res = await request(t.app).get(path).expect(401)
      expect(res.body.code, path).to.equal('rest_not_logged_in')
    }
    await request(t.app).get('/healthz').expect(200)
    await request(t.app).get('/readyz').expect(200)
    const options = await request(t.app).options(SLOTS).expect(204)
    expect(options.headers.allow).to.equal('GET, HEAD, OPTIONS')
  })

  it('caches a verdict: the same credentials do not call WordPress again until AUTH_CACHE_SECONDS pass', async () => {
    const cached = appWith()
    try {
      const auth = basic(wp.admin)
      await request(cached.app).get(SLOTS).set('Authorization', auth).expect(200)
      await request(cached.app).get(SLOTS).set('Authorization', auth).expect(200)
      await request(cached.app).get(SLOTS).set('Authorization', auth).expect(200)
      expect(cached.access.stats).to.deep.equal({ wordpressCalls: 1, cacheHits: 2 })
      // The same counts reach GET /metrics.
      const metrics = (await request(cached.app).get('/metrics').expect(200)).text
      expect(metrics).to.match(/^booking_calendar_auth_cache_hits 2$/m)
      expect(metrics).to.match(/^booking_calendar_auth_wordpress_calls 1$/m)
      now += 61_000
      await request(cached.app).get(SLOTS).set('Authorization', auth).expect(200)
      expect(cached.access.stats.wordpressCalls).to.equal(2)
      // Refusals are verdicts too.
      await request(cached.app).get(SLOTS).set('Authorization', basic(wp.subscriber)).expect(403)
      await request(cached.app).get(SLOTS).set('Authorization', basic(wp.subscriber)).expect(403)
      expect(cached.access.stats.wordpressCalls).to.equal(3)
    } finally {
      await cached.close()
    }
  })

  it('keeps at most cacheSize verdicts: the oldest goes first', async () => {
    const small = appWith({}, 3000, 2)
    try {
      await request(small.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(200)
      await request(small.app).get(SLOTS).set('Authorization', basic(wp.subscriber)).expect(403)
      await request(small.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(200)
      expect(small.access.stats.wordpressCalls).to.equal(2)
      await request(small.app).get(SLOTS).set('Authorization', basic('admin:abcd efgh ijkl mnop qrst uvwx')).expect(401)
      // Three credentials in a cache of two: the administrator's verdict, the oldest, is gone.
      await request(small.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(200)
      expect(small.access.stats.wordpressCalls).to.equal(4)
    } finally {
      await small.close()
    }
  })

  it('does not follow a redirect to another host with the caller\'s credentials', async () => {
    // In front of the real WordPress: a server that sends every request to another host name.
    const seen: IncomingHttpHeaders[] = []
    const elsewhere = createServer((req, res) => { seen.push(req.headers); res.end('{}') })
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve))
    const redirector = createServer((req, res) => {
      res.writeHead(302, { Location: `http://localhost:${(elsewhere.address() as AddressInfo).port}${req.url}` }).end()
    })
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve))
    const redirected = createTestApp(db, {
      env: { AUTH_MODE: 'wordpress', WORDPRESS_URL: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`, AUTH_CACHE_SECONDS: '0' },
    })
    try {
      const res = await request(redirected.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(503)
      expect(res.body.code).to.equal('rest_auth_unavailable')
      expect(seen, 'the other host was never asked').to.deep.equal([])
    } finally {
      await redirected.close()
      redirector.close()
      elsewhere.close()
    }
  })

  it('does not follow a redirect to another port of the same host, nor to another scheme', async () => {
    const seen: IncomingHttpHeaders[] = []
    const elsewhere = createServer((req, res) => { seen.push(req.headers); res.end('{"capabilities":{"manage_options":true}}') })
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve))
    const port = (elsewhere.address() as AddressInfo).port
    for (const location of [`http://127.0.0.1:${port}`, `https://127.0.0.1:${port}`]) {
      const redirector = createServer((req, res) => { res.writeHead(302, { Location: `${location}${req.url}` }).end() })
      await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve))
      const redirected = createTestApp(db, {
        env: { AUTH_MODE: 'wordpress', WORDPRESS_URL: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`, AUTH_CACHE_SECONDS: '0' },
      })
      try {
        const res = await request(redirected.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(503)
        expect(res.body.code, location).to.equal('rest_auth_unavailable')
      } finally {
        await redirected.close()
        redirector.close()
      }
    }
    elsewhere.close()
    // It once followed to the other port (without the credentials), whose answer let the caller in.
    expect(seen, 'the other port was never asked').to.deep.equal([])
  })

  it('an answer whose body trickles in, or is over 1 MB: 503 within the timeout, not when the body ends', async () => {
    const trickling = createServer((_req, res) => {
      // The headers at once, then a space every 200 ms for 10 s, then a verdict that would let the caller in.
      res.writeHead(200, { 'Content-Type': 'application/json' })
      let spaces = 0
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer)
        if (++spaces < 50) return void res.write(' ')
        clearInterval(timer)
        res.end('{"capabilities":{"manage_options":true}}')
      }, 200)
    })
    const huge = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(`{"capabilities":{"manage_options":true},"pad":"${'x'.repeat(5_000_000)}"}`)
    })
    for (const server of [trickling, huge]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      for (const [name, server] of [['trickling', trickling], ['over 1 MB', huge]] as const) {
        const app = createTestApp(db, {
          env: { AUTH_MODE: 'wordpress', WORDPRESS_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, AUTH_CACHE_SECONDS: '0' },
          access: { timeoutMs: 1000 },
        })
        try {
          const started = Date.now()
          const res = await request(app.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(503)
          expect(res.body.code, name).to.equal('rest_auth_unavailable')
          expect(res.headers['retry-after'], name).to.equal('5')
          expect(Date.now() - started, name).to.be.below(2_500)
        } finally {
          await app.close()
        }
      }
    } finally {
      trickling.closeAllConnections()
      trickling.close()
      huge.close()
    }
  })

  it('concurrent requests with the same credentials share one call to WordPress', async () => {
    const shared = appWith()
    try {
      const auth = basic(wp.admin)
      const answers = await Promise.all(Array.from({ length: 8 }, () => request(shared.app).get(`${SLOTS}?per_page=1`).set('Authorization', auth)))
      expect(answers.map((res) => res.status)).to.deep.equal(Array(8).fill(200))
      expect(shared.access.stats.wordpressCalls).to.equal(1)
    } finally {
      await shared.close()
    }
  })

  it('WordPress stopped: 503 rest_auth_unavailable with Retry-After, never an open door; back once it is', async () => {
    const uncached = appWith({ AUTH_CACHE_SECONDS: '0' })
    try {
      await wp.stop()
      const res = await request(uncached.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(503)
      expect(res.headers['retry-after']).to.equal('5')
      expect(res.body).to.deep.equal({
        code: 'rest_auth_unavailable', message: 'The site cannot check credentials right now. Try again shortly.', data: { status: 503 },
      })
      await wp.start()
      await request(uncached.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(200)
    } finally {
      await wp.start() // a no-op unless the test failed while WordPress was stopped
      await uncached.close()
    }
  })

  it('WordPress slow or answering 5xx: 503 rest_auth_unavailable', async () => {
    const impatient = appWith({ AUTH_CACHE_SECONDS: '0' }, 1000)
    try {
      wp.misbehave('fail')
      const failing = await request(impatient.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(503)
      expect(failing.body.code).to.equal('rest_auth_unavailable')
      wp.misbehave('slow')
      const slow = await request(impatient.app).get(SLOTS).set('Authorization', basic(wp.admin)).expect(503)
      expect(slow.body.code).to.equal('rest_auth_unavailable')
    } finally {
      wp.misbehave('well')
      await impatient.close()
    }
    // Both workers of php -S may still sleep; wait until WordPress answers again.
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline) {
      const res = await fetch(`${wp.url}/wp-json/`).catch(() => undefined)
      if (res?.ok) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  })
})
