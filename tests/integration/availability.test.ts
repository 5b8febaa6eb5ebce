// GET availability/ (API.md, "GET availability/") over a real MariaDB: the
// fixture site's quirks (back-to-back bookings, a legacy 'Booked ' status, a
// slot past midnight, an open end, 24:00, a whole day, a zero-length legacy
// row, a rejected booking), rules past midnight, both clock changes, the
// parameters and their errors, CSV, _fields, a long answer streamed, and the
// agreement with summary/'s open_minutes over the demo data.
import { expect } from 'chai'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { HAIRCUT, loadSite, NUMERIC_SLUG, STRIZHKA } from '../fixtures/site.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { dayToMs, daysInclusive, timeToSeconds } from '../../server/domain/day-arithmetic.ts'

const API = '/wp-json/booking-calendar/v1/'
/** Sunday 2026-11-29, 12:00 in Berlin. */
const NOW = Date.parse('2026-11-29T11:00:00Z')

describe('GET availability/', function () {
  this.timeout(60_000)
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('availability')
    await loadSite(db)
    await db.insert('booking_calendar_disabled_times', [
      // Haircut: Wednesday evenings closed until Thursday 07:00 (a window past midnight).
      { id: 1, service_id: HAIRCUT, rule_type: 'weekly', weekday: 3, date_from: null, date_to: null, time_from: '20:00:00', time_to: '07:00:00', note: 'Closed overnight' },
      // The whole site: a day off.
      { id: 2, service_id: 0, rule_type: 'date', weekday: null, date_from: '2026-11-27', date_to: null, time_from: null, time_to: null, note: 'Staff day' },
    ])
    t = createTestApp(db, { now: () => NOW })
  })
  after(async () => {
    await t?.close()
    await db?.drop()
  })

  it('windows: the range less the service\'s disabled periods and its blocking bookings, each with wall-clock minutes', async () => {
    const res = await request(t.app).get(`${API}availability?service=${HAIRCUT}&start=2026-11-25&end=2026-11-26`).expect(200)
    expect(res.headers['content-type']).to.equal('application/json; charset=utf-8')
    expect(res.body).to.deep.equal({
      free: [
        // 08:00-09:00 ('Booked ') and 09:00-10:00 (booked) back to back: one stretch taken.
        { service_id: HAIRCUT, service_slug: 'haircut', start: '2026-11-25T00:00:00+01:00', end: '2026-11-25T08:00:00+01:00', minutes: 480 },
        // Closed from 20:00 to Thursday 07:00 (the rule past midnight).
        { service_id: HAIRCUT, service_slug: 'haircut', start: '2026-11-25T10:00:00+01:00', end: '2026-11-25T20:00:00+01:00', minutes: 600 },
        // Thursday: a pending booking from 10:00 with no end takes the rest of the day (18:00-24:00 too).
        { service_id: HAIRCUT, service_slug: 'haircut', start: '2026-11-26T07:00:00+01:00', end: '2026-11-26T10:00:00+01:00', minutes: 180 },
      ],
      start: '2026-11-25', end: '2026-11-26', timezone: 'Europe/Berlin', blocking: ['pending', 'booked', 'completed'],
    })
  })

  it('blocking: only these statuses take time; a status outside them frees its time', async () => {
    const res = await request(t.app).get(`${API}availability?service=haircut&start=2026-11-26&end=2026-11-26&blocking=Booked`).expect(200)
    expect(res.body.free).to.deep.equal([
      { service_id: HAIRCUT, service_slug: 'haircut', start: '2026-11-26T07:00:00+01:00', end: '2026-11-26T18:00:00+01:00', minutes: 660 },
    ])
    expect(res.body.blocking).to.deep.equal(['booked'])
  })

  it('a slot past midnight the day before takes the range\'s first hours; a whole-day booking its day', async () => {
    const res = await request(t.app).get(`${API}availability?service=${STRIZHKA}&start=2026-11-25&end=2026-11-26&blocking=expired,pending`).expect(200)
    // 106: expired, 2026-11-24 22:00 to 02:00; 102: pending, all of 2026-11-25.
    expect(res.body.free).to.deep.equal([
      { service_id: STRIZHKA, service_slug: 'стрижка', start: '2026-11-26T00:00:00+01:00', end: '2026-11-27T00:00:00+01:00', minutes: 1440 },
    ])
    const freed = await request(t.app).get(`${API}availability?service=${STRIZHKA}&start=2026-11-25&end=2026-11-25&blocking=booked`).expect(200)
    expect(freed.body.free).to.deep.equal([
      { service_id: STRIZHKA, service_slug: 'стрижка', start: '2026-11-25T00:00:00+01:00', end: '2026-11-26T00:00:00+01:00', minutes: 1440 },
    ])
  })

  it('every published service when service is not given, by service_id; the site-wide day off for each; a zero-length legacy row takes nothing', async () => {
    const res = await request(t.app).get(`${API}availability?start=2026-11-27&end=2026-11-28`).expect(200)
    expect(res.body.free).to.deep.equal([
      // 111 (legacy_hold, 10:00 to 10:00) never blocks; 2026-11-27 is off for everyone.
      { service_id: HAIRCUT, service_slug: 'haircut', start: '2026-11-28T00:00:00+01:00', end: '2026-11-29T00:00:00+01:00', minutes: 1440 },
      { service_id: STRIZHKA, service_slug: 'стрижка', start: '2026-11-28T00:00:00+01:00', end: '2026-11-29T00:00:00+01:00', minutes: 1440 },
      // 116: a whole day (time_from NULL) on 2026-11-28.
    ])
  })

  it('duration: bookable start times on the wall clock, every step minutes; limit=1 is each service\'s next free time', async () => {
    const res = await request(t.app).get(`${API}availability?service=${HAIRCUT}&start=2026-11-25&end=2026-11-25&duration=90&step=60&limit=3`).expect(200)
    expect(res.body).to.deep.equal({
      free: [
        { service_id: HAIRCUT, service_slug: 'haircut', start: '2026-11-25T00:00:00+01:00', end: '2026-11-25T01:30:00+01:00' },
        { service_id: HAIRCUT, service_slug: 'haircut', start: '2026-11-25T01:00:00+01:00', end: '2026-11-25T02:30:00+01:00' },
        { service_id: HAIRCUT, service_slug: 'haircut', start: '2026-11-25T02:00:00+01:00', end: '2026-11-25T03:30:00+01:00' },
      ],
      start: '2026-11-25', end: '2026-11-25', timezone: 'Europe/Berlin', blocking: ['pending', 'booked', 'completed'], duration: 90, step: 60,
    })
    const next = await request(t.app).get(`${API}availability?start=2026-11-26&end=2026-12-02&duration=30&limit=1`).expect(200)
    expect(next.body.free.map((item: { service_id: number; start: string }) => [item.service_id, item.start])).to.deep.equal([
      [HAIRCUT, '2026-11-26T07:00:00+01:00'], [STRIZHKA, '2026-11-26T00:00:00+01:00'], [NUMERIC_SLUG, '2026-11-26T00:00:00+01:00'],
    ])
  })

  it('clocks forward (2026-03-29, Berlin): 02:00 does not exist and is left out; offsets change at 03:00', async () => {
    const res = await request(t.app).get(`${API}availability?service=${NUMERIC_SLUG}&start=2026-03-29&end=2026-03-29&duration=60`).expect(200)
    const starts = res.body.free.map((item: { start: string }) => item.start)
    expect(starts).to.have.length(23)
    expect(starts.slice(0, 4)).to.deep.equal(['2026-03-29T00:00:00+01:00', '2026-03-29T01:00:00+01:00', '2026-03-29T03:00:00+02:00', '2026-03-29T04:00:00+02:00'])
    // 01:00 + 60 minutes on the wall clock is 02:00, which moves forward by the gap.
    expect(res.body.free[1].end).to.equal('2026-03-29T03:00:00+02:00')
    const window = await request(t.app).get(`${API}availability?service=${NUMERIC_SLUG}&start=2026-03-29&end=2026-03-29`).expect(200)
    expect(window.body.free).to.deep.equal([
      { service_id: NUMERIC_SLUG, service_slug: '2027', start: '2026-03-29T00:00:00+01:00', end: '2026-03-30T00:00:00+02:00', minutes: 1440 },
    ])
  })

  it('clocks back (2026-10-25, Berlin): 02:00 occurs twice and is listed once, at its first occurrence', async () => {
    const res = await request(t.app).get(`${API}availability?service=${NUMERIC_SLUG}&start=2026-10-25&end=2026-10-25&duration=60`).expect(200)
    const starts = res.body.free.map((item: { start: string }) => item.start)
    expect(starts).to.have.length(24)
    expect(starts.slice(1, 4)).to.deep.equal(['2026-10-25T01:00:00+02:00', '2026-10-25T02:00:00+02:00', '2026-10-25T03:00:00+01:00'])
  })

  it('a fixed-offset site (SITE_TIMEZONE=+05:45) writes its offset on every time', async () => {
    const fixed = createTestApp(db, { now: () => NOW, env: { SITE_TIMEZONE: '+05:45' } })
    try {
      const res = await request(fixed.app).get(`${API}availability?service=${NUMERIC_SLUG}&start=2026-03-29&end=2026-03-29&duration=720`).expect(200)
      expect(res.body.free.map((item: { start: string; end: string }) => `${item.start} ${item.end}`)).to.deep.equal([
        '2026-03-29T00:00:00+05:45 2026-03-29T12:00:00+05:45', '2026-03-29T12:00:00+05:45 2026-03-30T00:00:00+05:45',
      ])
      expect(res.body.timezone).to.equal('+05:45')
    } finally {
      await fixed.close()
    }
  })

  it('the default range is today and the six days after it, in the site\'s time zone', async () => {
    const res = await request(t.app).get(`${API}availability?service=${NUMERIC_SLUG}`).expect(200)
    expect([res.body.start, res.body.end]).to.deep.equal(['2026-11-29', '2026-12-05'])
  })

  it('format=csv: a header and a line per item, CRLF; _fields keeps columns and fields', async () => {
    const csv = await request(t.app).get(`${API}availability?service=${HAIRCUT}&start=2026-11-26&end=2026-11-26&format=csv`).expect(200)
    expect(csv.headers['content-type']).to.equal('text/csv; charset=utf-8')
    expect(csv.text).to.equal('service_id,service_slug,start,end,minutes\r\n12,haircut,2026-11-26T07:00:00+01:00,2026-11-26T10:00:00+01:00,180\r\n')
    const starts = await request(t.app).get(`${API}availability?service=${HAIRCUT}&start=2026-11-26&end=2026-11-26&duration=60&format=csv&_fields=start`).expect(200)
    expect(starts.text).to.equal('start\r\n2026-11-26T07:00:00+01:00\r\n2026-11-26T08:00:00+01:00\r\n2026-11-26T09:00:00+01:00\r\n')
    const json = await request(t.app).get(`${API}availability?service=${HAIRCUT}&start=2026-11-26&end=2026-11-26&_fields=start,minutes`).expect(200)
    expect(json.body.free).to.deep.equal([{ start: '2026-11-26T07:00:00+01:00', minutes: 180 }])
    await request(t.app).get(`${API}availability?format=csv&_fields=nothing`).expect(400)
  })

  it('bad parameters are 400 rest_invalid_param, all named at once; an unknown service is 404', async () => {
    const res = await request(t.app).get(`${API}availability?duration=0&step=2000&blocking=maybe&limit=0&start=2026-02-30`).expect(400)
    expect(res.body.code).to.equal('rest_invalid_param')
    expect(Object.keys(res.body.data.params).sort()).to.deep.equal(['blocking', 'duration', 'limit', 'start', 'step'])
    const step = await request(t.app).get(`${API}availability?step=15`).expect(400)
    expect(step.body.data.params).to.deep.equal({ step: 'step needs duration: give duration (1 to 1440 minutes) to list start times every step minutes.' })
    const order = await request(t.app).get(`${API}availability?start=2026-12-02&end=2026-12-01`).expect(400)
    expect(Object.keys(order.body.data.params)).to.deep.equal(['start'])
    const long = await request(t.app).get(`${API}availability?start=2026-01-01&end=2028-01-02`).expect(400)
    expect(Object.keys(long.body.data.params)).to.deep.equal(['end'])
    const missing = await request(t.app).get(`${API}availability?service=no-such-service`).expect(404)
    expect(missing.body.code).to.equal('rest_service_not_found')
  })

  it('HEAD answers like GET without a body; the namespace index lists the route with every parameter', async () => {
    const head = await request(t.app).head(`${API}availability?service=${HAIRCUT}`).expect(200)
    expect(head.headers['content-type']).to.equal('application/json; charset=utf-8')
    expect(head.text ?? '').to.equal('')
    const index = await request(t.app).get(API).expect(200)
    expect(Object.keys(index.body.routes['/booking-calendar/v1/availability'].endpoints[0].args).sort())
      .to.deep.equal(['_fields', 'blocking', 'bom', 'duration', 'end', 'format', 'limit', 'service', 'start', 'step'])
  })

  it('a long answer streams: eleven months of 15-minute starts for every service, chunked, with no Content-Length', async () => {
    // 334 days × 96 × 3 services = 96,192 start times at most: within AVAILABILITY_MAX_ITEMS' default.
    const res = await request(t.app).get(`${API}availability?start=2026-01-01&end=2026-11-30&duration=15`).buffer(true).expect(200)
    expect(res.headers['content-length']).to.equal(undefined)
    expect(res.headers['transfer-encoding']).to.equal('chunked')
    expect(res.body.free.length).to.be.above(80_000)
  })

  describe('AVAILABILITY_MAX_ITEMS: an answer\'s CPU is bounded, like its memory', () => {
    const withMaxItems = async (maxItems: number, path: string) => {
      const app = createTestApp(db, { now: () => NOW, env: { AVAILABILITY_MAX_ITEMS: String(maxItems) } })
      try {
        return await request(app.app).get(`${API}availability?${path}`).buffer(true)
      } finally {
        await app.close()
      }
    }
    const refusal = (params: Record<string, string>) => ({
      code: 'rest_invalid_param', message: `Invalid parameter(s): ${Object.keys(params).join(', ')}`,
      data: { status: 400, params, details: Object.fromEntries(Object.entries(params).map(([name, message]) => [name, { code: 'rest_invalid_param', message, data: null }])) },
    })

    it('start times: at the bound (a service free two days, 24 hourly starts a day) 200 with every one; one past it 400 naming step, before any byte', async () => {
      const path = `service=${STRIZHKA}&start=2027-06-01&end=2027-06-02&duration=60`
      const atEdge = await withMaxItems(48, path)
      expect(atEdge.status).to.equal(200)
      expect(atEdge.body.free).to.have.length(48)
      expect(atEdge.body.free.at(-1)).to.deep.include({ start: '2027-06-02T23:00:00+02:00', end: '2027-06-03T00:00:00+02:00' })
      const past = await withMaxItems(47, path)
      expect(past.status).to.equal(400)
      expect(past.headers['content-type']).to.equal('application/json; charset=utf-8')
      expect(past.body).to.deep.equal(refusal({
        step: 'This would list up to 48 start times (1 service over 2 days), more than the 47 an answer lists at most (AVAILABILITY_MAX_ITEMS): ask for a narrower range (start, end), a step longer than 60 minutes or a lower limit per service.',
      }))
    })

    it('start times: limit counts per service, for every service listed', async () => {
      const path = (limit: number) => `start=2027-06-01&end=2027-06-02&duration=60&limit=${limit}`
      const within = await withMaxItems(40, path(13))
      expect(within.status).to.equal(200)
      expect(within.body.free).to.have.length(39)
      const past = await withMaxItems(40, path(14))
      expect(past.status).to.equal(400)
      expect(past.body.data.params).to.deep.equal({
        step: 'This would list up to 42 start times (3 services over 2 days), more than the 40 an answer lists at most (AVAILABILITY_MAX_ITEMS): ask for a narrower range (start, end), a step longer than 60 minutes, one service or a lower limit per service.',
      })
    })

    it('start times: the issue\'s 731 days of duration=1&step=1 (3.15 million) is 400 at the default of 100,000', async () => {
      const res = await request(t.app).get(`${API}availability?start=2026-01-01&end=2027-12-31&duration=1&step=1`).expect(400)
      expect(res.body.data.params.step).to.match(/^This would list up to 3153600 start times \(3 services over 730 days\), more than the 100000 /)
    })

    it('windows: counted once read, before the first byte: exactly the bound is 200, one fewer 400 naming end', async () => {
      const path = 'start=2026-11-20&end=2026-11-30'
      const all = await request(t.app).get(`${API}availability?${path}`).expect(200)
      const count = all.body.free.length as number
      expect(count).to.be.above(3)
      const atEdge = await withMaxItems(count, path)
      expect(atEdge.status).to.equal(200)
      expect(atEdge.body).to.deep.equal(all.body)
      const past = await withMaxItems(count - 1, path)
      expect(past.status).to.equal(400)
      expect(past.body).to.deep.equal(refusal({
        end: `This would list ${count} free windows (3 services over 11 days), more than the ${count - 1} an answer lists at most (AVAILABILITY_MAX_ITEMS): ask for a narrower range (start, end), one service or a lower limit per service.`,
      }))
      // limit counts per service: the first window of each service, within the bound again.
      const limited = await withMaxItems(count - 1, `${path}&limit=1`)
      expect(limited.status).to.equal(200)
      expect(limited.body.free).to.have.length(3)
    })
  })
})

/** Wall-clock minutes from `base` of an ISO time with offset (its local part). */
const minuteFrom = (base: number) => (iso: string) => (dayToMs(iso.slice(0, 10)) + timeToSeconds(iso.slice(11, 19)) * 1000 - base) / 60_000

describe('GET availability/ and summary/ agree over the demo data', function () {
  this.timeout(120_000)
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('availability_demo')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: 3000, services: 5, firstDay: '2026-01-01', years: 1, rulesPerService: 3 })) await db.admin.query(statement)
    t = createTestApp(db, { now: () => NOW })
  })
  after(async () => {
    await t?.close()
    await db?.drop()
  })

  it('a service\'s free minutes of a month plus the open minutes its blocking bookings cover equal summary/\'s open_minutes; its blocking bookings\' minutes are summary/\'s blocked_minutes', async () => {
    const [from, to] = ['2026-03-01', '2026-03-31']
    const summary = await request(t.app).get(`${API}summary?start=${from}&end=${to}&group_by=service`).expect(200)
    const free = await request(t.app).get(`${API}availability?start=${from}&end=${to}`).expect(200)
    const base = dayToMs(from)
    const minutes = daysInclusive(from, to) * 1440
    const minute = minuteFrom(base)
    let checked = 0
    let withRefusedTime = 0
    for (const group of summary.body.groups as Array<{ service_id: number; open_minutes: number; booked_minutes: number; blocked_minutes: number; occupancy: number | null }>) {
      // Published services only (summary/ also lists a service with bookings but no post).
      if (!free.body.free.some((item: { service_id: number }) => item.service_id === group.service_id)) continue
      const disabled = await request(t.app).get(`${API}disabled-time?service=${group.service_id}&start=${from}&end=${to}`).expect(200)
      // Bookings of the month and the day before (a slot past midnight), in the blocking statuses.
      const slots = await request(t.app).get(`${API}slots?service=${group.service_id}&start=2026-02-28&end=${to}&status=pending,booked,completed&flat`).expect(200)
      const closed = new Uint8Array(minutes)
      const taken = new Uint8Array(minutes)
      const mark = (bits: Uint8Array, start: string, end: string | null) => {
        const last = end === null ? Math.floor(minute(start) / 1440) * 1440 + 1440 : minute(end)
        for (let m = Math.max(0, Math.ceil(minute(start))); m < Math.min(minutes, last); m++) bits[m] = 1
      }
      for (const period of disabled.body.disabled_times) mark(closed, period.start, period.end)
      for (const booking of slots.body.booked_slots) if (booking.start !== null) mark(taken, booking.start, booking.end)
      let coveredOpen = 0
      for (let m = 0; m < minutes; m++) if (taken[m] && !closed[m]) coveredOpen++
      const freeMinutes = (free.body.free as Array<{ service_id: number; minutes: number }>)
        .filter((item) => item.service_id === group.service_id).reduce((sum, item) => sum + item.minutes, 0)
      expect(freeMinutes + coveredOpen, `service ${group.service_id}`).to.equal(group.open_minutes)
      // blocked_minutes: the same blocking bookings (availability/'s default statuses, summary/'s too) of the
      // month by booking_date, each its wall-clock minutes; a whole-day booking its day's open minutes.
      let blocked = 0
      for (const booking of slots.body.booked_slots as Array<{ booking_date: string; start: string; end: string | null; all_day: boolean }>) {
        if (booking.booking_date < from) continue
        if (booking.all_day) {
          const day = minute(booking.start)
          for (let m = day; m < day + 1440; m++) if (!closed[m]) blocked++
        } else if (booking.end !== null) {
          blocked += minute(booking.end) - minute(booking.start)
        }
      }
      expect(Math.round(blocked * 100) / 100, `service ${group.service_id}`).to.equal(group.blocked_minutes)
      expect(group.occupancy, `service ${group.service_id}`).to.equal(group.open_minutes === 0 ? null : Math.round(group.blocked_minutes / group.open_minutes * 10_000) / 10_000)
      if (group.blocked_minutes !== group.booked_minutes) withRefusedTime++
      checked++
    }
    // Every published service of the answer was checked (the demo's others are drafts, trashed or deleted).
    expect(checked).to.equal(new Set(free.body.free.map((item: { service_id: number }) => item.service_id)).size).and.to.be.at.least(2)
    // The demo has rejected and expired bookings: blocked_minutes is not booked_minutes under another name.
    expect(withRefusedTime).to.be.at.least(1)
  })
})
