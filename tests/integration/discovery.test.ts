// API.md, "WordPress's discovery": the REST API's root index at /wp-json/ (and
// /wp-json, /?rest_route=/, the sidecar's home /), and the api.w.org Link on
// every answer under the prefixes, checked with the real client: node-wpapi's
// WPAPI.discover() against the sidecar on its own host name, then calls through
// the client it returns.
import { expect } from 'chai'
import WPAPI from 'wpapi'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { startListeningService, type ListeningService } from '../support/service.ts'
import { loadSite, RECORDS } from '../fixtures/site.ts'
import { namespaceIndex } from '../../server/routes/index.ts'
import { readerStatementsDuring } from '../support/general-log.ts'

const PREFIX = '/wp-json/booking-calendar/v1'
const TOKEN = 'discovery-token-0123456789'
const HOST = 'bookings.example.com'
const ROOT_LINK = `<http://${HOST}/wp-json/>; rel="https://api.w.org/"`

describe('WordPress\'s discovery', () => {
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('discovery')
    await loadSite(db)
    await db.setOption('blogname', 'Seeded salon')
    await db.setOption('blogdescription', 'Haircuts & more')
    await db.setOption('siteurl', 'https://shop.example.com')
    await db.setOption('home', 'https://shop.example.com')
  })
  after(async () => { await db.drop() })

  describe('the root index and the Link header', () => {
    let t: TestApp
    before(() => { t = createTestApp(db, { env: { AUTH_MODE: 'token', API_TOKENS: TOKEN } }) })
    after(async () => { await t.close() })

    it('GET /wp-json/ answers WordPress\'s root index, open in token mode, at each of its addresses', async () => {
      const expected = {
        name: 'Seeded salon', description: 'Haircuts & more', url: 'https://shop.example.com', home: 'https://shop.example.com',
        gmt_offset: 1, timezone_string: 'Europe/Berlin', namespaces: ['booking-calendar/v1'], authentication: {},
        routes: {
          '/': { namespace: '', methods: ['GET'], endpoints: [{ methods: ['GET'], args: {} }], _links: { self: [{ href: `http://${HOST}/wp-json/` }] } },
          ...namespaceIndex().routes,
        },
      }
      for (const path of ['/wp-json/', '/wp-json', '/?rest_route=/', '/']) {
        const res = await request(t.app).get(path).set('Host', HOST).expect(200)
        expect(res.body, path).to.deep.equal(expected)
        expect(res.headers.link, path).to.equal(ROOT_LINK)
        expect(res.headers['content-type'], path).to.equal('application/json; charset=utf-8')
      }
      expect(Object.keys(expected.routes)).to.include.members(['/booking-calendar/v1/slots', '/booking-calendar/v1/summary', '/booking-calendar/v1/availability'])
      await request(t.app).head('/wp-json/').set('Host', HOST).expect(200)
      const options = await request(t.app).options('/wp-json/').expect(204)
      expect(options.headers.allow).to.equal('GET, HEAD, OPTIONS')
      await request(t.app).post('/wp-json/').expect(405)
    })

    it('every answer under the prefixes carries the api.w.org Link, refusals and errors too; paging links follow it', async () => {
      const auth = { Authorization: `Bearer ${TOKEN}` }
      const cases: [string, number, Record<string, string>][] = [
        [`${PREFIX}/slots?status=reject`, 200, auth],
        [`${PREFIX}/`, 200, auth],
        [`${PREFIX}/openapi.json`, 200, auth],
        ['/booking-calendar/v1/summary', 200, auth],
        ['/?rest_route=/booking-calendar/v1/availability', 200, auth],
        [`${PREFIX}/slots`, 401, {}],
        [`${PREFIX}/slots?start=nope`, 400, auth],
        [`${PREFIX}/nope`, 404, auth],
        [`${PREFIX}/slots?service=nope`, 404, auth],
      ]
      for (const [url, status, headers] of cases) {
        const res = await request(t.app).get(url).set('Host', HOST).set(headers).expect(status)
        expect(res.headers.link, url).to.equal(ROOT_LINK)
      }
      const post = await request(t.app).post(`${PREFIX}/slots`).set('Host', HOST).set(auth).expect(405)
      expect(post.headers.link).to.equal(ROOT_LINK)
      const options = await request(t.app).options(`${PREFIX}/slots`).set('Host', HOST).expect(204)
      expect(options.headers.link).to.equal(ROOT_LINK)
      const paged = await request(t.app).get(`${PREFIX}/slots?flat&per_page=1`).set('Host', HOST).set(auth).expect(200)
      expect(paged.headers.link).to.equal(`${ROOT_LINK}, <http://${HOST}${PREFIX}/slots?flat&per_page=1&page=2>; rel="next"`)
      // Outside the prefixes: no Link, as /healthz is no part of the REST API.
      expect((await request(t.app).get('/healthz').expect(200)).headers.link).to.equal(undefined)
    })

    it('costs the database one read for 20 calls, and shows a changed name within a minute (issue 63)', async () => {
      let clock = Date.parse('2026-03-02T10:00:00Z')
      const fresh = createTestApp(db, { now: () => clock })
      try {
        const reads = await readerStatementsDuring(db, async () => {
          for (let call = 0; call < 20; call++) {
            const res = await request(fresh.app).get('/wp-json/').set('Host', HOST).expect(200)
            expect(res.body.name).to.equal('Seeded salon')
          }
        }, 'blogname')
        expect(reads).to.have.length(1)
        await db.setOption('blogname', 'Renamed salon')
        // Within the minute: the name read before.
        clock += 30_000
        expect((await request(fresh.app).get('/wp-json/').expect(200)).body.name).to.equal('Seeded salon')
        // Past it: the call that finds it stale answers at once and reads it again beside.
        clock += 31_000
        await request(fresh.app).get('/wp-json/').expect(200)
        const deadline = Date.now() + 5_000
        let name: unknown
        do {
          name = (await request(fresh.app).get('/wp-json/').expect(200)).body.name
        } while (name !== 'Renamed salon' && Date.now() < deadline)
        expect(name).to.equal('Renamed salon')
      } finally {
        await db.setOption('blogname', 'Seeded salon')
        await fresh.close()
      }
    })

    it('the Link names the public address: PUBLIC_URL when set', async () => {
      const fixed = createTestApp(db, { env: { PUBLIC_URL: 'https://shop.example.com' } })
      try {
        const res = await request(fixed.app).get(`${PREFIX}/slots?status=reject`).set('Host', HOST).expect(200)
        expect(res.headers.link).to.equal('<https://shop.example.com/wp-json/>; rel="https://api.w.org/"')
      } finally {
        await fixed.close()
      }
    })
  })

  describe('node-wpapi', () => {
    let service: ListeningService
    before(async () => { service = await startListeningService(db, { SITE_TIMEZONE: 'Europe/Berlin', AUTH_MODE: 'token', API_TOKENS: TOKEN }) })
    after(async () => { await service.close() })

    it('WPAPI.discover() finds the sidecar on its own host name, and the client it returns calls the namespace\'s routes', async () => {
      const site = await WPAPI.discover(`http://127.0.0.1:${service.port}`)
      site.setHeaders('Authorization', `Bearer ${TOKEN}`)
      const bookings = site.namespace('booking-calendar/v1')
      const slots = await bookings.slots!().param('flat', 1).param('start', '2026-11-25').param('end', '2026-11-25').get() as { booked_slots: object[]; total: number }
      // Token mode shows customer; the rest of each record is as the fixture has it.
      const withoutCustomer = (record: object) => Object.fromEntries(Object.entries(record).filter(([key]) => key !== 'customer'))
      expect(slots.booked_slots.map(withoutCustomer)).to.deep.equal([RECORDS[102], RECORDS[103], RECORDS[101]].map(withoutCustomer))
      expect(slots.total).to.equal(3)
      const summary = await bookings.summary!().param('start', '2026-11-01').param('end', '2026-11-30').get() as { groups: { bookings: number }[] }
      expect(summary.groups.map((group) => group.bookings)).to.deep.equal([12])
      const refused = await WPAPI.discover(`http://127.0.0.1:${service.port}`)
      const error = await refused.namespace('booking-calendar/v1').slots!().get().then(() => undefined, (err: unknown) => err)
      expect(error).to.deep.include({ code: 'rest_not_logged_in' })
    })
  })
})
