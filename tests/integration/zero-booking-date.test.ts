// A booking whose booking_date is the zero date (0000-00-00). The column is
// DATE NOT NULL, but a legacy site in a non-strict sql_mode can hold it. Such a
// day has no instant, so `start` and `end` are null: the only case where
// `start` is (docs/api.md, "Choices made where the contract is silent").
import { expect } from 'chai'
import { parse } from 'csv-parse/sync'
import request, { contractProblem } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { BOOKING_ORDER, HAIRCUT, loadSite } from '../fixtures/site.ts'

const URL = '/wp-json/booking-calendar/v1/slots'
const ZERO_DAY_ID = 117

const ZERO_DAY_RECORD = {
  id: ZERO_DAY_ID, service_id: HAIRCUT, service_slug: 'haircut', status: 'booked', booking_date: '0000-00-00',
  start: null, end: null, all_day: false, created_date: '2026-11-21T15:00:00+01:00', customer: null, note: 'legacy zero day',
}

describe('GET slots/ with a booking on the zero date', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('zero_booking_date')
    await loadSite(db)
    // The session's sql_mode only, as on a legacy site that writes in non-strict mode.
    await db.admin.query(`SET SESSION sql_mode = ''`)
    await db.insert('booking_calendar_bookings', [{
      id: ZERO_DAY_ID, service_id: HAIRCUT, status: 'booked', booking_date: '0000-00-00', time_from: '09:00:00', time_to: '10:00:00',
      customer_name: 'Customer 117', customer_email: 'c117@example.com', customer_phone: '+49 30 117', note: 'legacy zero day',
      created_at: '2026-11-21 15:00:00',
    }])
    await db.admin.query(`SET SESSION sql_mode = DEFAULT`)
    const [stored] = await db.admin.query(`SELECT CAST(booking_date AS CHAR) AS day FROM \`${db.prefix}booking_calendar_bookings\` WHERE id = ?`, [ZERO_DAY_ID])
    expect(stored).to.deep.equal([{ day: '0000-00-00' }])
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('an unfiltered export gives it first (the zero date sorts before every day), start and end null, and the answer matches openapi.json', async () => {
    const res = await request(t.app).get(`${URL}?flat`).expect(200)
    expect(res.body.total).to.equal(BOOKING_ORDER.length + 1)
    expect(res.body.booked_slots[0]).to.deep.equal(ZERO_DAY_RECORD)
    expect(res.body.booked_slots.slice(1).map((b: { id: number }) => b.id)).to.deep.equal(BOOKING_ORDER)
    // request() checked the answer already; checked here too, so this test fails if that check is ever dropped.
    expect(contractProblem('GET', `${URL}?flat`, res)).to.equal(undefined)
  })

  it('the grouped answer keeps it in its service, first', async () => {
    const res = await request(t.app).get(URL).expect(200)
    expect(res.body.booked_slots[String(HAIRCUT)][0]).to.deep.equal(ZERO_DAY_RECORD)
  })

  it('filter_by=created_date finds it by its created_at, with start and end null', async () => {
    const res = await request(t.app).get(`${URL}?flat&filter_by=created_date&start=2026-11-21&end=2026-11-21`).expect(200)
    const ids = res.body.booked_slots.map((b: { id: number }) => b.id)
    expect(ids).to.deep.equal([ZERO_DAY_ID, 109, 110, 116, 111, 112])
    expect(res.body.booked_slots[0]).to.deep.equal(ZERO_DAY_RECORD)
  })

  it('the calendar feed leaves it out: an event needs an instant', async () => {
    const res = await request(t.app).get(`${URL}?format=ics&filter_by=created_date&start=2026-11-21&end=2026-11-21`).expect(200)
    expect(res.text).to.include('UID:booking-109@')
    expect(res.text).to.not.include(`booking-${ZERO_DAY_ID}@`)
  })

  it('a booking_date range never matches it, given by both ends or by its end alone', async () => {
    for (const query of ['start=1000-01-01&end=2026-11-21', 'end=2026-11-21', 'end=2026-11-21&per_page=1']) {
      const res = await request(t.app).get(`${URL}?flat&${query}`).expect(200)
      const ids = res.body.booked_slots.map((b: { id: number }) => b.id)
      expect(ids, query).to.not.include(ZERO_DAY_ID)
      expect(ids.length, query).to.be.greaterThan(0)
      const all = await request(t.app).get(`${URL}?flat&start=1000-01-01&end=2026-11-21&_fields=id`).expect(200)
      expect(res.body.total, query).to.equal(all.body.total)
    }
  })

  it('CSV writes start and end as empty cells and booking_date as stored', async () => {
    const res = await request(t.app).get(`${URL}?format=csv&filter_by=created_date&start=2026-11-21&end=2026-11-21`).expect(200)
    const lines = res.text.split('\r\n')
    expect(lines[1]).to.equal(`${ZERO_DAY_ID},${HAIRCUT},haircut,booked,0000-00-00,,,false,2026-11-21T15:00:00+01:00,,,,legacy zero day`)
    const rows = parse<Record<string, string>>(res.text, { columns: true })
    expect(rows[0]).to.include({ id: String(ZERO_DAY_ID), booking_date: '0000-00-00', start: '', end: '', all_day: 'false' })
  })
})
