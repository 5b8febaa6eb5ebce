// Where the API answers (API.md, "Where it answers"): the three prefixes, the
// namespace index, HEAD, OPTIONS, 404, 405, /healthz and /readyz.
import { expect } from 'chai'
import request, { pagingLinksOf } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { loadSite } from '../fixtures/site.ts'

describe('routing', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('routing')
    await loadSite(db)
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  describe('the three prefixes, trailing slash optional', () => {
    const forms = [
      '/wp-json/booking-calendar/v1/slots',
      '/wp-json/booking-calendar/v1/slots/',
      '/booking-calendar/v1/slots',
      '/booking-calendar/v1/slots/',
      '/?rest_route=/booking-calendar/v1/slots',
      '/?rest_route=/booking-calendar/v1/slots/',
      '/index.php?rest_route=/booking-calendar/v1/slots',
      // A run of slashes is one, as WordPress reads it (a base URL ending in / joined to a route starting with one).
      '/wp-json//booking-calendar/v1/slots',
      '/wp-json/booking-calendar/v1/slots//',
      '//wp-json/booking-calendar//v1///slots',
    ]
    for (const form of forms) {
      it(`answers ${form}`, async () => {
        const res = await request(t.app).get(form.includes('?') ? `${form}&status=reject&flat` : `${form}?status=reject&flat`).expect(200)
        expect(res.body.total).to.equal(1)
        expect(res.body.booked_slots[0].id).to.equal(104)
      })
    }

    it('keeps doubled slashes in the query: only the path\'s are one', async () => {
      const res = await request(t.app).get('/wp-json//booking-calendar/v1/slots?status=reject&flat&_fields=id&x=//y').expect(200)
      expect(res.body).to.deep.equal({ booked_slots: [{ id: 104 }], total: 1 })
      await request(t.app).get('/wp-json/booking-calendar/v1/nope//').expect(404)
    })

    it('takes the last of two rest_route parameters, as PHP does', async () => {
      const res = await request(t.app).get('/?rest_route=/wp/v2/posts&rest_route=/booking-calendar/v1/slots&per_page=1').expect(200)
      expect(res.headers['x-wp-total']).to.match(/^\d+$/)
    })

    it('keeps the other parameters of the rest_route form, and its Link headers keep rest_route', async () => {
      const res = await request(t.app).get('/?rest_route=/booking-calendar/v1/slots&per_page=1&page=1&flat').set('Host', 'site.example').expect(200)
      expect(res.body.booked_slots).to.have.length(1)
      expect(pagingLinksOf(res.headers.link)).to.equal('<http://site.example/?rest_route=/booking-calendar/v1/slots&per_page=1&page=2&flat>; rel="next"')
    })

    it('serves disabled-time/ under every prefix too', async () => {
      for (const form of ['/wp-json/booking-calendar/v1/disabled-time/', '/booking-calendar/v1/disabled-time', '/?rest_route=/booking-calendar/v1/disabled-time']) {
        const res = await request(t.app).get(form).expect(200)
        expect(res.body).to.have.property('disabled_times')
      }
    })
  })

  describe('the namespace index', () => {
    it('answers in the shape WordPress gives GET /wp-json/{namespace}, with every parameter in args', async () => {
      for (const path of ['/wp-json/booking-calendar/v1', '/wp-json/booking-calendar/v1/', '/booking-calendar/v1', '/?rest_route=/booking-calendar/v1']) {
        const res = await request(t.app).get(path).expect(200)
        expect(res.body.namespace, path).to.equal('booking-calendar/v1')
        expect(Object.keys(res.body.routes)).to.deep.equal(['/booking-calendar/v1', '/booking-calendar/v1/slots', '/booking-calendar/v1/disabled-time', '/booking-calendar/v1/summary', '/booking-calendar/v1/availability', '/booking-calendar/v1/changes', '/booking-calendar/v1/docs'])
      }
      const { body } = await request(t.app).get('/wp-json/booking-calendar/v1')
      const slots = body.routes['/booking-calendar/v1/slots']
      expect(slots.namespace).to.equal('booking-calendar/v1')
      expect(slots.methods).to.deep.equal(['GET'])
      expect(slots.endpoints[0].methods).to.deep.equal(['GET'])
      expect(Object.keys(slots.endpoints[0].args)).to.deep.equal(['status', 'service', 'start', 'end', 'filter_by', 'flat', 'bom', 'page', 'per_page', '_fields', 'format'])
      expect(slots.endpoints[0].args.status).to.deep.equal({
        type: 'array', items: { type: 'string', enum: ['pending', 'booked', 'reject', 'completed', 'expired'] },
        description: 'Only bookings in these statuses, comma-separated. Omitted: every status, legacy values included.', required: false,
      })
      expect(slots.endpoints[0].args.per_page).to.include({ type: 'integer', minimum: 1, maximum: 1000, required: false })
      for (const arg of Object.values<{ type: string; description: string; required: boolean }>(slots.endpoints[0].args)) {
        expect(arg.type).to.be.a('string')
        expect(arg.description).to.be.a('string').and.not.equal('')
        expect(arg.required).to.equal(false)
      }
      expect(Object.keys(body.routes['/booking-calendar/v1/disabled-time'].endpoints[0].args)).to.deep.equal(['service', 'start', 'end', '_fields', 'format'])
    })
  })

  describe('methods', () => {
    it('HEAD answers like GET, without a body', async () => {
      const res = await request(t.app).head('/wp-json/booking-calendar/v1/slots?status=booked').expect(200)
      expect(res.headers['x-wp-total']).to.equal('8')
      expect(res.headers['content-type']).to.equal('application/json; charset=utf-8')
      expect(res.text).to.equal(undefined)
    })

    it('OPTIONS answers 204 with Allow: GET, HEAD, OPTIONS', async () => {
      for (const path of ['/wp-json/booking-calendar/v1/slots', '/booking-calendar/v1/disabled-time/', '/wp-json/booking-calendar/v1']) {
        const res = await request(t.app).options(path).expect(204)
        expect(res.headers.allow).to.equal('GET, HEAD, OPTIONS')
      }
    })

    for (const method of ['post', 'put', 'patch', 'delete'] as const) {
      it(`${method.toUpperCase()} on a known route gives 405 rest_no_route with Allow`, async () => {
        const res = await request(t.app)[method]('/wp-json/booking-calendar/v1/slots').expect(405)
        expect(res.headers.allow).to.equal('GET, HEAD, OPTIONS')
        expect(res.body).to.deep.equal({ code: 'rest_no_route', message: 'Method not allowed: this API only reads. Use GET.', data: { status: 405 } })
      })
    }

    it('an unknown path gives 404 rest_no_route in WordPress\'s shape', async () => {
      for (const path of ['/wp-json/booking-calendar/v1/nope', '/wp-json/booking-calendar/v2/slots', '/wp-json/wp/v2/posts', '/index.php', '/?rest_route=/wp/v2/posts', '/wp-json/booking-calendar/v1/%E0%A4%A',
        // A query inside rest_route is no route, as in WordPress (it once took that query and dropped the real one's start).
        '/?rest_route=/booking-calendar/v1/slots?per_page=1&start=2026-11-23', '/?rest_route=/booking-calendar/v1/slots%3Fper_page=1']) {
        const res = await request(t.app).get(path).expect(404)
        expect(res.body, path).to.deep.equal({ code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } })
      }
    })
  })

  describe('health', () => {
    it('/healthz answers 200 and /readyz 200 while the database answers', async () => {
      expect((await request(t.app).get('/healthz').expect(200)).body).to.deep.equal({ status: 'ok' })
      // With changes/'s source (API.md, "GET changes/", Sources): a test's app reads digests.
      expect((await request(t.app).get('/readyz').expect(200)).body).to.deep.equal({ status: 'ok', changes: { source: 'digest', reason: 'this app was built without a choice of source (tests)' } })
    })
  })

  describe('headers', () => {
    it('sends no X-Powered-By, and headers fit for a JSON API', async () => {
      const res = await request(t.app).get('/wp-json/booking-calendar/v1/slots?status=reject').expect(200)
      expect(res.headers).to.not.have.property('x-powered-by')
      expect(res.headers['x-content-type-options']).to.equal('nosniff')
      expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/)
    })
  })
})
