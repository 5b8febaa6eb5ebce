// GET slots/ over a real MariaDB holding every quirk of PLUGIN_TABLES.md.
import { expect } from 'chai'
import request, { invalidParamsData, pagingLinksOf } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { BOOKING_ORDER, RECORDS, loadSite, type BookingId } from '../fixtures/site.ts'

const URL = '/wp-json/booking-calendar/v1/slots'

/** API.md's grouped shape for these bookings: keys ascending by service ID, booking order inside. */
function grouped(ids: BookingId[]) {
  const groups: Record<string, unknown[]> = {}
  const ordered = BOOKING_ORDER.filter((id) => ids.includes(id))
  for (const serviceId of [...new Set(ordered.map((id) => RECORDS[id].service_id))].sort((a, b) => a - b)) {
    groups[String(serviceId)] = ordered.filter((id) => RECORDS[id].service_id === serviceId).map((id) => RECORDS[id])
  }
  return { booked_slots: groups, total: ordered.length }
}

function flat(ids: BookingId[]) {
  const ordered = BOOKING_ORDER.filter((id) => ids.includes(id))
  return { booked_slots: ordered.map((id) => RECORDS[id]), total: ordered.length }
}

const ALL = BOOKING_ORDER

describe('GET slots/', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('slots')
    await loadSite(db)
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  describe('grouping and order', () => {
    it('groups every booking by service ID, keys in ascending numeric order, without parameters', async () => {
      const res = await request(t.app).get(URL).expect(200)
      expect(res.headers['content-type']).to.equal('application/json; charset=utf-8')
      expect(res.headers['x-wp-total']).to.equal(String(ALL.length))
      expect(res.body).to.deep.equal(grouped(ALL))
      expect(Object.keys(res.body.booked_slots)).to.deep.equal(['1', '12', '15', '20', '21', '22', '23', '99'])
    })

    it('flat gives a plain array in booking_date, start (whole-day first), id order', async () => {
      const res = await request(t.app).get(`${URL}?flat`).expect(200)
      expect(res.body).to.deep.equal(flat(ALL))
    })

    it('no bookings at all gives {} and total 0', async () => {
      const res = await request(t.app).get(`${URL}?start=2030-01-01`).expect(200)
      expect(res.body).to.deep.equal({ booked_slots: {}, total: 0 })
      expect(res.headers['x-wp-total']).to.equal('0')
    })

    it('flat with no bookings gives []', async () => {
      const res = await request(t.app).get(`${URL}?start=2030-01-01&flat=1`).expect(200)
      expect(res.body).to.deep.equal({ booked_slots: [], total: 0 })
    })
  })

  describe('status', () => {
    it('status=booked matches mixed case and trailing spaces (Booked , BOOKED)', async () => {
      const res = await request(t.app).get(`${URL}?status=booked&flat=1`).expect(200)
      expect(res.body).to.deep.equal(flat([101, 103, 107, 109, 110, 112, 114, 116]))
    })

    it('takes a comma-separated list with spaces and letter case ignored', async () => {
      const res = await request(t.app).get(`${URL}?status=%20Reject%20,COMPLETED&flat=1`).expect(200)
      expect(res.body).to.deep.equal(flat([104, 105]))
    })

    it('takes status[]=a&status[]=b and a repeated status as lists', async () => {
      const a = await request(t.app).get(`${URL}?status[]=reject&status[]=expired&flat=1`).expect(200)
      const b = await request(t.app).get(`${URL}?status=reject&status=expired&flat=1`).expect(200)
      expect(a.body).to.deep.equal(flat([104, 106]))
      expect(b.body).to.deep.equal(flat([104, 106]))
    })

    it('refuses a parameter in nested brackets (status[][]=, service[x][y]=), which PHP reads as an array of arrays: left out, it dropped its filter without a word', async () => {
      const res = await request(t.app).get(`${URL}?status[][]=pending&service[x][y]=haircut&per_page[a][b]=1&other[a][b]=1`).expect(400)
      expect(res.body).to.deep.equal({
        code: 'rest_invalid_param',
        message: 'Invalid parameter(s): status, service, per_page',
        data: {
          status: 400,
          params: {
            status: 'status must be given as status=…, not in nested brackets (status[…][…]).',
            service: 'service must be given as service=…, not in nested brackets (service[…][…]).',
            per_page: 'per_page must be given as per_page=…, not in nested brackets (per_page[…][…]).',
          },
          details: {
            status: { code: 'rest_invalid_param', message: 'status must be given as status=…, not in nested brackets (status[…][…]).', data: null },
            service: { code: 'rest_invalid_param', message: 'service must be given as service=…, not in nested brackets (service[…][…]).', data: null },
            per_page: { code: 'rest_invalid_param', message: 'per_page must be given as per_page=…, not in nested brackets (per_page[…][…]).', data: null },
          },
        },
      })
    })

    it('omitted includes legacy values outside the five', async () => {
      const res = await request(t.app).get(`${URL}?flat=1&start=2026-11-28&end=2026-11-28`).expect(200)
      expect(res.body.booked_slots.map((b: { status: string }) => b.status)).to.deep.equal(['booked', 'legacy_hold', 'booked'])
    })

    it('empty (status=, status=,) is as if omitted, and so is an empty _fields, as in WordPress', async () => {
      const omitted = await request(t.app).get(`${URL}?flat=1&start=2026-11-28&end=2026-11-28`).expect(200)
      for (const query of ['status=', 'status=,', 'status[]=', '_fields=', 'status=&_fields=%20']) {
        const res = await request(t.app).get(`${URL}?flat=1&start=2026-11-28&end=2026-11-28&${query}`).expect(200)
        expect(res.body, query).to.deep.equal(omitted.body)
      }
      const csv = await request(t.app).get(`${URL}?format=csv&start=2026-11-28&end=2026-11-28&_fields=`).expect(200)
      const csvOmitted = await request(t.app).get(`${URL}?format=csv&start=2026-11-28&end=2026-11-28`).expect(200)
      expect(csv.text).to.equal(csvOmitted.text)
    })

    it('an unknown status gives 400 rest_invalid_param naming status, in params and in details as WordPress 5.5+ has them', async () => {
      const res = await request(t.app).get(`${URL}?status=booked,maybe`).expect(400)
      const sentence = 'status must be one or more of pending, booked, reject, completed, expired, comma-separated (got "maybe").'
      expect(res.body).to.deep.equal({
        code: 'rest_invalid_param', message: 'Invalid parameter(s): status',
        data: { status: 400, params: { status: sentence }, details: { status: { code: 'rest_invalid_param', message: sentence, data: null } } },
      })
    })
  })

  describe('service', () => {
    const cases: [string, string, BookingId[]][] = [
      ['by ID', '12', [115, 104, 105, 103, 101, 108, 107, 111]],
      ['by slug, ignoring letter case', 'HairCut', [115, 104, 105, 103, 101, 108, 107, 111]],
      ['by a Unicode slug stored percent-encoded', 'стрижка', [106, 102]],
      ['by a Unicode slug in capitals', 'СТРИЖКА', [106, 102]],
      ['by the stored percent-encoded form', '%d1%81%d1%82%d1%80%d0%b8%d0%b6%d0%ba%d0%b0', [106, 102]],
      ['trashed, by ID', '20', [110]],
      ['a draft, by slug', 'colouring', [113]],
      ['a private one, by slug', 'vip-styling', [114]],
      ['all digits without such an ID: by slug', '2027', [116]],
    ]
    for (const [name, value, ids] of cases) {
      it(`finds a service ${name} (service=${value})`, async () => {
        const res = await request(t.app).get(URL).query({ service: value, flat: '1' }).expect(200)
        expect(res.body).to.deep.equal(flat(ids))
      })
    }

    const misses: [string, string][] = [
      ['a trashed service by slug', 'massage'],
      ['a post that is no service (Hello world!)', '1'],
      ['a page\'s slug', 'hello-world'],
      ['an unknown slug', 'no-such-service'],
      ['an ID past 2^53', '99999999999999999999'],
    ]
    for (const [name, value] of misses) {
      it(`gives 404 rest_service_not_found for ${name}`, async () => {
        const res = await request(t.app).get(URL).query({ service: value }).expect(404)
        expect(res.body.code).to.equal('rest_service_not_found')
        expect(res.body.data).to.deep.equal({ status: 404 })
        expect(res.body.message).to.be.a('string').and.include('service')
      })
    }
  })

  describe('start and end', () => {
    it('takes the three forms as inclusive whole days', async () => {
      for (const [start, end] of [['2026-11-25', '2026-11-26'], ['25.11.2026', '26.11.2026'], ['25/11/2026', '26/11/2026']]) {
        const res = await request(t.app).get(URL).query({ start, end, flat: '1' }).expect(200)
        expect(res.body).to.deep.equal(flat([102, 103, 101, 108, 107]))
      }
    })

    it('start alone and end alone are open on the other side', async () => {
      const from = await request(t.app).get(`${URL}?start=2026-11-28&flat`).expect(200)
      expect(from.body).to.deep.equal(flat([116, 111, 112, 114]))
      const to = await request(t.app).get(`${URL}?end=2026-03-29&flat`).expect(200)
      expect(to.body).to.deep.equal(flat([115, 104]))
    })

    for (const bad of ['31.02.2026', '2026-2-3', '13/13/2026']) {
      it(`${bad} gives 400 naming start`, async () => {
        const res = await request(t.app).get(URL).query({ start: bad }).expect(400)
        expect(res.body).to.deep.equal({
          code: 'rest_invalid_param', message: 'Invalid parameter(s): start',
          data: invalidParamsData({ start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }),
        })
      })
    }

    it('start after end gives 400 naming start', async () => {
      const res = await request(t.app).get(`${URL}?start=2026-11-26&end=25.11.2026`).expect(400)
      expect(res.body.data.params).to.deep.equal({ start: 'start must not be after end (2026-11-26 is after 2026-11-25).' })
    })
  })

  describe('filter_by=created_date', () => {
    it('runs from 00:00:00 of start to 23:59:59 of end, site time', async () => {
      const res = await request(t.app).get(`${URL}?filter_by=created_date&start=2025-12-31&end=2026-07-01&flat`).expect(200)
      expect(res.body).to.deep.equal(flat([115, 104, 113]))
      const day = await request(t.app).get(`${URL}?filter_by=created_date&start=2026-11-29&end=2026-11-29&flat`).expect(200)
      expect(day.body).to.deep.equal(flat([114]))
    })

    it('never matches the zero date, even with end alone', async () => {
      const res = await request(t.app).get(`${URL}?filter_by=created_date&end=2026-03-01&flat`).expect(200)
      expect(res.body).to.deep.equal(flat([115, 104]))
    })
  })

  describe('paging', () => {
    it('per_page and page cut the bookings in booking order, with X-WP-Total, X-WP-TotalPages and Link', async () => {
      // status=booked in booking order: 103, 101, 107 | 109, 110, 116 | 112, 114.
      const res = await request(t.app).get(`${URL}?per_page=3&page=2&flat=1&status=booked`).set('Host', 'api.example').expect(200)
      expect(res.body).to.deep.equal({ booked_slots: [109, 110, 116].map((id) => RECORDS[id as BookingId]), total: 8 })
      expect(res.headers['x-wp-total']).to.equal('8')
      expect(res.headers['x-wp-totalpages']).to.equal('3')
      expect(pagingLinksOf(res.headers.link)).to.equal(
        '<http://api.example/wp-json/booking-calendar/v1/slots?per_page=3&page=1&flat=1&status=booked>; rel="prev", ' +
        '<http://api.example/wp-json/booking-calendar/v1/slots?per_page=3&page=3&flat=1&status=booked>; rel="next"')
    })

    it('groups a page after cutting it', async () => {
      const res = await request(t.app).get(`${URL}?per_page=4&page=2`).expect(200)
      // Booking order 106, 102, 103, 101 is page 2; grouped: 12 then 15.
      expect(res.body).to.deep.equal({ booked_slots: { 12: [RECORDS[103], RECORDS[101]], 15: [RECORDS[106], RECORDS[102]] }, total: 16 })
    })

    it('the last page has only rel="prev"; without per_page there is no X-WP-TotalPages', async () => {
      const last = await request(t.app).get(`${URL}?per_page=10&page=2`).expect(200)
      expect(pagingLinksOf(last.headers.link)).to.match(/page=1>; rel="prev"$/)
      const all = await request(t.app).get(URL).expect(200)
      expect(all.headers).to.not.have.property('x-wp-totalpages')
      expect(pagingLinksOf(all.headers.link)).to.equal(undefined)
    })

    it('a page past the last gives 400 rest_invalid_page_number', async () => {
      const res = await request(t.app).get(`${URL}?per_page=10&page=3`).expect(400)
      expect(res.body).to.deep.equal({
        code: 'rest_invalid_page_number',
        message: 'The page number requested is larger than the number of pages available.',
        data: { status: 400 },
      })
    })

    it('when nothing matches, every page answers 200 with no bookings', async () => {
      const res = await request(t.app).get(`${URL}?per_page=10&page=7&start=2030-01-01`).expect(200)
      expect(res.body).to.deep.equal({ booked_slots: {}, total: 0 })
      expect(res.headers['x-wp-totalpages']).to.equal('0')
    })

    it('page without per_page is an error', async () => {
      const res = await request(t.app).get(`${URL}?page=2`).expect(400)
      expect(res.body.data.params).to.have.property('page')
    })
  })

  describe('_fields', () => {
    it('keeps only the named fields of each booking, also when streamed', async () => {
      const res = await request(t.app).get(`${URL}?_fields=id,start&status=reject`).expect(200)
      expect(res.body).to.deep.equal({ booked_slots: { 12: [{ id: 104, start: '2026-03-29T03:30:00+02:00' }] }, total: 1 })
    })

    it('works on a page and with _fields[]', async () => {
      const res = await request(t.app).get(`${URL}?_fields[]=id&_fields[]=note&per_page=1&flat`).expect(200)
      expect(res.body).to.deep.equal({ booked_slots: [{ id: 115, note: 'last of the year' }], total: 16 })
    })
  })

  describe('customer', () => {
    it('is null without authentication unless EXPOSE_CUSTOMER_DATA=true', async () => {
      const res = await request(t.app).get(`${URL}?status=reject&flat`).expect(200)
      expect(res.body.booked_slots[0].customer).to.equal(null)
      const exposed = createTestApp(db, { env: { EXPOSE_CUSTOMER_DATA: 'true' } })
      try {
        const shown = await request(exposed.app).get(`${URL}?status=reject&flat`).expect(200)
        expect(shown.body.booked_slots[0]).to.deep.equal({
          ...RECORDS[104], customer: { name: 'Customer 104', email: 'c104@example.com', phone: '+49 30 104' },
        })
      } finally {
        await exposed.close()
      }
    })
  })

  describe('the other parameters', () => {
    it('flat in every accepted form; anything else is an error', async () => {
      for (const form of ['flat', 'flat=', 'flat=1', 'flat=TRUE', 'flat=True']) {
        const res = await request(t.app).get(`${URL}?${form}&status=reject`).expect(200)
        expect(res.body.booked_slots, form).to.be.an('array')
      }
      for (const form of ['flat=0', 'flat=FALSE']) {
        const res = await request(t.app).get(`${URL}?${form}&status=reject`).expect(200)
        expect(res.body.booked_slots, form).to.not.be.an('array')
      }
      await request(t.app).get(`${URL}?flat=yes`).expect(400)
    })

    it('a single-valued parameter given twice is an error', async () => {
      const res = await request(t.app).get(`${URL}?service=12&service=15`).expect(400)
      expect(res.body.data.params).to.deep.equal({ service: 'service must be given only once.' })
    })

    it('names every bad parameter at once', async () => {
      const res = await request(t.app).get(`${URL}?start=tomorrow&per_page=5000&filter_by=x`).expect(400)
      expect(res.body.message).to.equal('Invalid parameter(s): start, filter_by, per_page')
      expect(Object.keys(res.body.data.params)).to.deep.equal(['start', 'filter_by', 'per_page'])
    })

    it('ignores unknown parameters', async () => {
      const res = await request(t.app).get(`${URL}?status=reject&flat&context=view&_embed=1`).expect(200)
      expect(res.body).to.deep.equal(flat([104]))
    })

    it("ignores unknown parameters named after Object.prototype's members (they once gave a 500)", async () => {
      for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty[]', 'valueOf[x]']) {
        const res = await request(t.app).get(`${URL}?status=reject&flat&${name}=1`)
        expect(res.status, name).to.equal(200)
        expect(res.body, name).to.deep.equal(flat([104]))
      }
    })
  })
})
