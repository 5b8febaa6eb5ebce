// GET summary/ over a real MariaDB: one case per rule of API.md's section, on
// the quirky site of tests/fixtures/site.ts plus a few rules and bookings.
import { expect } from 'chai'
import request, { invalidParamsData } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { loadSite, HAIRCUT, STRIZHKA, DELETED_SERVICE, NUMERIC_SLUG } from '../fixtures/site.ts'

const URL = '/wp-json/booking-calendar/v1/summary'
/** 2026-11-21 12:00 UTC: "today" is Saturday 2026-11-21 in Berlin. */
const NOW = Date.UTC(2026, 10, 21, 12)
const PEDICURE = 24

describe('GET summary/', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('summary')
    await loadSite(db)
    await db.insert('posts', [{ ID: PEDICURE, post_type: 'bc_service', post_name: 'pedicure', post_title: 'Pedicure', post_status: 'publish' }])
    await db.insert('booking_calendar_disabled_times', [
      { id: 1, service_id: 0, rule_type: 'weekly', weekday: 1, time_from: '18:00:00', time_to: '08:00:00', note: 'After hours, Monday to Tuesday' },
      { id: 2, service_id: HAIRCUT, rule_type: 'weekly', weekday: 3, time_from: '12:00:00', time_to: '13:00:00', note: 'Lunch' },
      { id: 3, service_id: STRIZHKA, rule_type: 'weekly', weekday: 3, time_from: '09:00:00', time_to: '12:00:00', note: 'Training' },
      { id: 4, service_id: 0, rule_type: 'date', date_from: '2026-12-24', date_to: '2026-12-26', note: 'Christmas' },
      { id: 5, service_id: DELETED_SERVICE, rule_type: 'weekly', weekday: 5, time_from: '09:00:00', time_to: '10:00:00', note: 'Gone' },
      // Overlaps rule 2: the union counts, no minute is taken off twice.
      { id: 6, service_id: 0, rule_type: 'date', date_from: '2026-11-11', time_from: '12:30:00', time_to: '14:00:00', note: 'Meeting' },
    ])
    // Three bookings at once on Monday 2027-01-04: more booked than open.
    const overlap = (id: number) => ({ id, service_id: HAIRCUT, status: 'booked', booking_date: '2027-01-04', time_from: '08:00:00', time_to: '18:00:00', created_at: '2026-12-01 10:00:00' })
    await db.insert('booking_calendar_bookings', [overlap(201), overlap(202), overlap(203)])
    t = createTestApp(db, { now: () => NOW })
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('defaults to the current month, grouped by month, over every service', async () => {
    const res = await request(t.app).get(URL).expect(200)
    expect(res.headers['content-type']).to.equal('application/json; charset=utf-8')
    // Open minutes: 5 services × 43,200, minus Mondays 18:00 to Tuesdays 08:00 (4 × 840 + 360 cut at the month's end)
    // for each of the 8 services (1, 12, 15, 20, 22, 23, 24, 99), the meeting (90) for each, haircut's lunches (4 × 60,
    // 30 of 11 November inside the meeting), strizhka's training (4 × 180), and the deleted service's Fridays (4 × 60).
    const open = 8 * (43_200 - 3720 - 90) - 210 - 720 - 240
    expect(res.body).to.deep.equal({
      // blocked: all but 106 (expired, 240 minutes) and 111 (legacy_hold, 0 minutes).
      groups: [{ period_start: '2026-11-01', period_end: '2026-11-30', bookings: 12, all_day_bookings: 2, booked_minutes: 3630, blocked_minutes: 3390, open_minutes: open, occupancy: Math.round(3390 / open * 10_000) / 10_000 }],
      totals: { bookings: 12, all_day_bookings: 2, booked_minutes: 3630, blocked_minutes: 3390, open_minutes: open, occupancy: Math.round(3390 / open * 10_000) / 10_000 },
      start: '2026-11-01', end: '2026-11-30', timezone: 'Europe/Berlin', group_by: ['month'], filter_by: 'booking_date', blocking: ['pending', 'booked', 'completed'],
    })
  })

  it('group_by=service: trashed and deleted services, a post that is no service, and a service with no bookings listed with zeros', async () => {
    const res = await request(t.app).get(`${URL}?start=2026-11-01&end=2026-11-30&group_by=service`).expect(200)
    const base = 43_200 - 3720 - 90
    const row = (service_id: number, service_slug: string | null, bookings: number, all_day: number, booked: number, open: number, blocked = booked) =>
      ({ service_id, service_slug, bookings, all_day_bookings: all_day, booked_minutes: booked, blocked_minutes: blocked, open_minutes: open, occupancy: Math.round(blocked / open * 10_000) / 10_000 })
    expect(res.body.groups).to.deep.equal([
      row(1, null, 1, 0, 60, base),
      row(HAIRCUT, 'haircut', 5, 0, 480, base - 210),
      // The whole-day booking of Wednesday 25 November counts that day's open minutes: 1,440 − 180 of training.
      // The expired booking past midnight (240) took no time: occupancy counts the whole day's 1,260 only.
      row(STRIZHKA, 'стрижка', 2, 1, 1260 + 240, base - 720, 1260),
      row(20, 'massage', 1, 0, 60, base),
      row(22, 'vip-styling', 1, 0, 30, base),
      row(NUMERIC_SLUG, '2027', 1, 1, 1440, base),
      row(PEDICURE, 'pedicure', 0, 0, 0, base),
      row(DELETED_SERVICE, null, 1, 0, 60, base - 240),
    ])
    expect(res.body.group_by).to.deep.equal(['service'])
  })

  it('past midnight counts on its booking_date, and 24:00:00 is the end of the day', async () => {
    const pastMidnight = await request(t.app).get(`${URL}?service=${STRIZHKA}&start=2026-11-24&end=2026-11-25&group_by=day`).expect(200)
    // Tuesday 24: 22:00 to 02:00 is 240 minutes, all on the 24th; 00:00 to 08:00 is closed (Monday's rule).
    expect(pastMidnight.body.groups).to.deep.equal([
      // 106 is expired: booked, never blocked.
      { period_start: '2026-11-24', period_end: '2026-11-24', bookings: 1, all_day_bookings: 0, booked_minutes: 240, blocked_minutes: 0, open_minutes: 960, occupancy: 0 },
      { period_start: '2026-11-25', period_end: '2026-11-25', bookings: 1, all_day_bookings: 1, booked_minutes: 1260, blocked_minutes: 1260, open_minutes: 1260, occupancy: 1 },
    ])
    const untilMidnight = await request(t.app).get(`${URL}?service=haircut&start=2026-11-26&end=2026-11-26&group_by=day,service`).expect(200)
    // 18:00 to 24:00 is 360 minutes; the booking without an end counts 0.
    expect(untilMidnight.body.groups).to.deep.equal([
      { period_start: '2026-11-26', period_end: '2026-11-26', service_id: HAIRCUT, service_slug: 'haircut', bookings: 2, all_day_bookings: 0, booked_minutes: 360, blocked_minutes: 360, open_minutes: 1440, occupancy: 0.25 },
    ])
  })

  it('a whole-day booking on a day with disabled hours counts the open minutes of that day for its service', async () => {
    const res = await request(t.app).get(`${URL}?service=${STRIZHKA}&start=2026-11-25&end=2026-11-25&status=pending`).expect(200)
    expect(res.body.totals).to.deep.equal({ bookings: 1, all_day_bookings: 1, booked_minutes: 1260, blocked_minutes: 1260, open_minutes: 1260, occupancy: 1 })
  })

  it('occupancy counts blocked_minutes only: a rejected booking in the range takes no time; blocking chooses the statuses, as availability/\'s', async () => {
    // Thursday 2027-01-07, haircut: open all day (1,440); 09:00 to 11:00 booked, 11:00 to 17:00 rejected.
    await db.insert('booking_calendar_bookings', [
      { id: 401, service_id: HAIRCUT, status: 'booked', booking_date: '2027-01-07', time_from: '09:00:00', time_to: '11:00:00', created_at: '2026-12-01 10:00:00' },
      { id: 402, service_id: HAIRCUT, status: 'reject', booking_date: '2027-01-07', time_from: '11:00:00', time_to: '17:00:00', created_at: '2026-12-01 10:00:00' },
    ])
    const url = `${URL}?service=${HAIRCUT}&start=2027-01-07&end=2027-01-07&group_by=day`
    const res = await request(t.app).get(url).expect(200)
    expect(res.body.groups).to.deep.equal([
      { period_start: '2027-01-07', period_end: '2027-01-07', bookings: 2, all_day_bookings: 0, booked_minutes: 480, blocked_minutes: 120, open_minutes: 1440, occupancy: 0.0833 },
    ])
    expect(res.body.blocking).to.deep.equal(['pending', 'booked', 'completed'])
    const withRejected = await request(t.app).get(`${url}&blocking=booked,Reject`).expect(200)
    expect(withRejected.body.totals).to.deep.equal({ bookings: 2, all_day_bookings: 0, booked_minutes: 480, blocked_minutes: 480, open_minutes: 1440, occupancy: 0.3333 })
    expect(withRejected.body.blocking).to.deep.equal(['booked', 'reject'])
    // availability/ frees the rejected time with the same default.
    const free = await request(t.app).get(`/wp-json/booking-calendar/v1/availability?service=${HAIRCUT}&start=2027-01-07&end=2027-01-07`).expect(200)
    const freeMinutes = (free.body.free as { minutes: number }[]).reduce((sum, item) => sum + item.minutes, 0)
    expect(freeMinutes + res.body.totals.blocked_minutes).to.equal(res.body.totals.open_minutes)
    expect((await request(t.app).get(`${url}&blocking=maybe`).expect(400)).body.data.params).to.have.keys('blocking')
    await db.admin.query(`DELETE FROM \`${db.name}\`.${db.prefix}booking_calendar_bookings WHERE id IN (401, 402)`)
  })

  it('overlapping bookings give an occupancy above 1', async () => {
    const res = await request(t.app).get(`${URL}?service=${HAIRCUT}&start=2027-01-04&end=2027-01-04&group_by=day`).expect(200)
    // Monday: open 00:00 to 18:00 (1,080 minutes); three bookings of 600 minutes each.
    expect(res.body.groups).to.deep.equal([
      { period_start: '2027-01-04', period_end: '2027-01-04', bookings: 3, all_day_bookings: 0, booked_minutes: 1800, blocked_minutes: 1800, open_minutes: 1080, occupancy: 1.6667 },
    ])
  })

  it('group_by=status: legacy statuses trimmed and lower-cased, only those that occur, open_minutes null', async () => {
    const res = await request(t.app).get(`${URL}?start=2026-11-01&end=2026-11-30&group_by=status`).expect(200)
    const row = (status: string, bookings: number, all_day: number, booked: number, blocked = booked) =>
      ({ status, bookings, all_day_bookings: all_day, booked_minutes: booked, blocked_minutes: blocked, open_minutes: null, occupancy: null })
    expect(res.body.groups).to.deep.equal([
      row('booked', 8, 1, 2130),
      row('expired', 1, 0, 240, 0),
      row('legacy_hold', 1, 0, 0),
      row('pending', 2, 1, 1260),
    ])
    expect(res.body.totals).to.deep.equal({ bookings: 12, all_day_bookings: 2, booked_minutes: 3630, blocked_minutes: 3390, open_minutes: null, occupancy: null })
  })

  it('a range that starts mid-month cuts its first and last months to the range', async () => {
    const res = await request(t.app).get(`${URL}?start=15.11.2026&end=2026-12-10&_fields=period_start,period_end,bookings`).expect(200)
    expect(res.body.groups).to.deep.equal([
      { period_start: '2026-11-15', period_end: '2026-11-30', bookings: 12 },
      { period_start: '2026-12-01', period_end: '2026-12-10', bookings: 0 },
    ])
    expect(res.body.totals).to.deep.equal({ bookings: 12 })
    expect([res.body.start, res.body.end]).to.deep.equal(['2026-11-15', '2026-12-10'])
  })

  it('end alone starts at the first day of its month; start alone ends at the last day of its month', async () => {
    const endOnly = await request(t.app).get(`${URL}?end=2026-02-10`).expect(200)
    expect([endOnly.body.start, endOnly.body.end]).to.deep.equal(['2026-02-01', '2026-02-10'])
    const startOnly = await request(t.app).get(`${URL}?start=2028-02-10`).expect(200)
    expect([startOnly.body.start, startOnly.body.end]).to.deep.equal(['2028-02-10', '2028-02-29'])
  })

  describe('weeks begin on start_of_week', () => {
    afterEach(async () => { await db.admin.query(`DELETE FROM ${db.prefix}options WHERE option_name = 'start_of_week'`) })
    const weeks = async () => (await request(t.app).get(`${URL}?start=2026-11-01&end=2026-11-30&group_by=week&_fields=period_start,period_end,bookings`).expect(200)).body.groups

    it('start_of_week 0: Sunday', async () => {
      await db.setOption('start_of_week', '0')
      expect(await weeks()).to.deep.equal([
        { period_start: '2026-11-01', period_end: '2026-11-07', bookings: 0 },
        { period_start: '2026-11-08', period_end: '2026-11-14', bookings: 0 },
        { period_start: '2026-11-15', period_end: '2026-11-21', bookings: 0 },
        { period_start: '2026-11-22', period_end: '2026-11-28', bookings: 11 },
        { period_start: '2026-11-29', period_end: '2026-11-30', bookings: 1 },
      ])
    })

    it('start_of_week 6: Saturday, the first week cut to the range', async () => {
      await db.setOption('start_of_week', '6')
      expect(await weeks()).to.deep.equal([
        { period_start: '2026-11-01', period_end: '2026-11-06', bookings: 0 },
        { period_start: '2026-11-07', period_end: '2026-11-13', bookings: 0 },
        { period_start: '2026-11-14', period_end: '2026-11-20', bookings: 0 },
        { period_start: '2026-11-21', period_end: '2026-11-27', bookings: 8 },
        { period_start: '2026-11-28', period_end: '2026-11-30', bookings: 4 },
      ])
    })

    it('start_of_week missing or not 0 to 6: Monday, as WordPress', async () => {
      await db.setOption('start_of_week', 'monday')
      const groups = await weeks()
      expect(groups.map((g: { period_start: string }) => g.period_start)).to.deep.equal(['2026-11-01', '2026-11-02', '2026-11-09', '2026-11-16', '2026-11-23', '2026-11-30'])
    })
  })

  it('filter_by=created_date: periods of the creation day, the zero date never matches, open_minutes null', async () => {
    const res = await request(t.app).get(`${URL}?start=2026-11-20&end=2026-11-21&filter_by=created_date&group_by=day`).expect(200)
    // 116 was made on the 21st for Saturday the 28th: a whole day of its service, 1,440 open minutes.
    expect(res.body).to.deep.equal({
      groups: [
        // Made on the 20th: 106 (expired, 240 minutes), 107 and 108.
        { period_start: '2026-11-20', period_end: '2026-11-20', bookings: 3, all_day_bookings: 0, booked_minutes: 600, blocked_minutes: 360, open_minutes: null, occupancy: null },
        { period_start: '2026-11-21', period_end: '2026-11-21', bookings: 5, all_day_bookings: 1, booked_minutes: 1620, blocked_minutes: 1620, open_minutes: null, occupancy: null },
      ],
      totals: { bookings: 8, all_day_bookings: 1, booked_minutes: 2220, blocked_minutes: 1980, open_minutes: null, occupancy: null },
      start: '2026-11-20', end: '2026-11-21', timezone: 'Europe/Berlin', group_by: ['day'], filter_by: 'created_date', blocking: ['pending', 'booked', 'completed'],
    })
  })

  it('filter_by=created_date: a whole-day booking on a day that cannot be read counts 0 minutes; one in year 1000 counts that Monday\'s open minutes', async () => {
    await db.insert('booking_calendar_bookings', [
      { id: 301, service_id: HAIRCUT, status: 'booked', booking_date: '0000-00-00', time_from: null, time_to: null, created_at: '2031-05-06 10:00:00' },
      { id: 302, service_id: HAIRCUT, status: 'booked', booking_date: '1000-01-06', time_from: null, time_to: null, created_at: '2031-06-07 10:00:00' },
    ])
    const group = (bookedMinutes: number) => ({
      service_id: HAIRCUT, service_slug: 'haircut', bookings: 1, all_day_bookings: 1, booked_minutes: bookedMinutes, blocked_minutes: bookedMinutes, open_minutes: null, occupancy: null,
    })
    const may = await request(t.app).get(`${URL}?start=2031-05-01&end=2031-05-31&filter_by=created_date&group_by=service&service=haircut`).expect(200)
    expect(may.body.groups).to.deep.equal([group(0)])
    expect(may.body.totals.booked_minutes).to.equal(0)
    // Monday 1000-01-06: the site-wide rule 1 closes 18:00 to midnight.
    const june = await request(t.app).get(`${URL}?start=2031-06-01&end=2031-06-30&filter_by=created_date&group_by=service&service=haircut`).expect(200)
    expect(june.body.groups).to.deep.equal([group(1440 - 360)])
  })

  it('the order of group_by names does not matter; groups ordered by period, service, status', async () => {
    const a = await request(t.app).get(`${URL}?start=2026-11-25&end=2026-11-26&group_by=status,service,day&service=haircut`).expect(200)
    const b = await request(t.app).get(`${URL}?start=2026-11-25&end=2026-11-26&group_by[]=DAY&group_by[]=service,status&service=haircut`).expect(200)
    expect(a.body).to.deep.equal(b.body)
    expect(a.body.group_by).to.deep.equal(['day', 'service', 'status'])
    expect(a.body.groups.map((g: Record<string, unknown>) => [g.period_start, g.status, g.bookings])).to.deep.equal([
      ['2026-11-25', 'booked', 2], ['2026-11-25', 'pending', 0], ['2026-11-26', 'booked', 1], ['2026-11-26', 'pending', 1],
    ])
  })

  it('a range of MAX_RANGE_DAYS days answers; one day more is 400 naming end', async () => {
    await request(t.app).get(`${URL}?start=2025-01-01&end=2027-01-01&group_by=year&_fields=bookings`).expect(200)
      .expect((res) => { expect(res.body.groups).to.deep.equal([{ bookings: 1 }, { bookings: 15 }, { bookings: 0 }]) })
    const res = await request(t.app).get(`${URL}?start=2025-01-01&end=2027-01-02`).expect(400)
    expect(res.body).to.deep.equal({
      code: 'rest_invalid_param', message: 'Invalid parameter(s): end',
      data: invalidParamsData({ end: 'The range from 2025-01-01 to 2027-01-02 spans 732 days; at most 731 are allowed. Choose a later start or an earlier end.' }),
    })
  })

  it('group_by with two periods or unknown names is 400 with a sentence that says what to send', async () => {
    const two = await request(t.app).get(`${URL}?group_by=month,service,week`).expect(400)
    expect(two.body.data.params).to.deep.equal({ group_by: 'group_by may name at most one period of day, week, month, year (got month and week); keep one of them.' })
    const unknown = await request(t.app).get(`${URL}?group_by=service,colour`).expect(400)
    expect(unknown.body.data.params).to.deep.equal({ group_by: 'group_by must be one or more of service, status, day, week, month, year, comma-separated (got "colour").' })
    const empty = await request(t.app).get(`${URL}?group_by=`).expect(400)
    expect(empty.body.code).to.equal('rest_invalid_param')
  })

  it('bad dates, start after end, an unknown status and an unknown service are 400 and 404 as in slots/', async () => {
    expect((await request(t.app).get(`${URL}?start=31.02.2026`).expect(400)).body.data.params).to.have.keys('start')
    expect((await request(t.app).get(`${URL}?start=2026-12-01&end=2026-11-01`).expect(400)).body.data.params)
      .to.deep.equal({ start: 'start must not be after end (2026-12-01 is after 2026-11-01).' })
    expect((await request(t.app).get(`${URL}?status=done`).expect(400)).body.data.params).to.have.keys('status')
    expect((await request(t.app).get(`${URL}?service=nope`).expect(404)).body.code).to.equal('rest_service_not_found')
  })

  it('the last month before year 10000 answers 200, each period ending on 9999-12-31 (it once looped until out of memory)', async () => {
    for (const groupBy of ['month', 'year', 'week', 'day']) {
      const res = await request(t.app).get(`${URL}?start=9999-12-01&group_by=${groupBy}`).expect(200)
      expect(res.body.groups.at(-1).period_end, groupBy).to.equal('9999-12-31')
      expect(res.body.totals.bookings).to.equal(0)
    }
  })

  it('format=csv: one row per group, keys then measures, null as an empty cell, no totals row', async () => {
    const res = await request(t.app).get(`${URL}?start=2026-11-24&end=2026-11-25&group_by=day,service&service=${STRIZHKA}&format=csv`).expect(200)
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8')
    expect(res.text).to.equal(
      'period_start,period_end,service_id,service_slug,bookings,all_day_bookings,booked_minutes,blocked_minutes,open_minutes,occupancy\r\n' +
      '2026-11-24,2026-11-24,15,стрижка,1,0,240,0,960,0\r\n' +
      '2026-11-25,2026-11-25,15,стрижка,1,1,1260,1260,1260,1\r\n')
    const status = await request(t.app).get(`${URL}?start=2026-11-25&end=2026-11-25&group_by=status&_fields=status,bookings,open_minutes`).set('Accept', 'text/csv').expect(200)
    expect(status.text).to.equal('status,bookings,open_minutes\r\nbooked,2,\r\npending,1,\r\n')
  })

  it('format=csv with _fields naming no column of the export is 400 listing the columns it has (it was blank lines); JSON keeps empty records', async () => {
    const res = await request(t.app).get(`${URL}?start=2026-11-24&end=2026-11-25&group_by=day,status&format=csv&_fields=nope`).expect(400)
    expect(res.body.data.params).to.deep.equal({
      _fields: '_fields names no column of this CSV export; use one or more of period_start, period_end, status, bookings, all_day_bookings, booked_minutes, blocked_minutes, open_minutes, occupancy.',
    })
    const json = await request(t.app).get(`${URL}?start=2026-11-24&end=2026-11-25&group_by=day&_fields=nope`).expect(200)
    expect(json.body.groups).to.deep.equal([{}, {}])
  })

  it('a rule added since the last request counts in the next answer', async () => {
    const url = `${URL}?service=${HAIRCUT}&start=2026-11-26&end=2026-11-26&_fields=open_minutes`
    expect((await request(t.app).get(url).expect(200)).body.totals).to.deep.equal({ open_minutes: 1440 })
    await db.insert('booking_calendar_disabled_times', [{ id: 50, service_id: HAIRCUT, rule_type: 'date', date_from: '2026-11-26', time_from: '10:00:00', time_to: '11:30:00', note: 'New' }])
    try {
      expect((await request(t.app).get(url).expect(200)).body.totals).to.deep.equal({ open_minutes: 1350 })
    } finally {
      await db.admin.query(`DELETE FROM ${db.prefix}booking_calendar_disabled_times WHERE id = 50`)
    }
  })

  it('is guarded like the other routes: AUTH_MODE=token needs a bearer token', async () => {
    const guarded = createTestApp(db, { now: () => NOW, env: { AUTH_MODE: 'token', API_TOKENS: 'summary-test-token' } })
    try {
      expect((await request(guarded.app).get(URL).expect(401)).body.code).to.equal('rest_not_logged_in')
      await request(guarded.app).get(URL).set('Authorization', 'Bearer summary-test-token').expect(200)
    } finally {
      await guarded.close()
    }
  })

  it('a long answer is sent as its client reads (chunked, no Content-Length), the same JSON as written whole; a short one whole, with its length', async () => {
    // Two years by day and service: more than the 512 KB sent at once.
    const path = `${URL}?start=2025-01-01&end=2026-12-31&group_by=day,service`
    const json = await request(t.app).get(path).expect(200)
    expect(json.headers['content-type']).to.equal('application/json; charset=utf-8')
    expect(json.headers['transfer-encoding']).to.equal('chunked')
    expect(json.headers).not.to.have.property('content-length')
    expect(Buffer.byteLength(json.text)).to.be.above(512 * 1024)
    expect(Object.keys(json.body)).to.deep.equal(['groups', 'totals', 'start', 'end', 'timezone', 'group_by', 'filter_by', 'blocking'])
    // Byte for byte what JSON.stringify writes of the same answer, the Cyrillic slug as UTF-8.
    expect(json.text).to.equal(JSON.stringify(json.body))
    expect(json.text).to.include('"service_slug":"стрижка"')
    expect(json.body.groups.reduce((sum: number, group: { bookings: number }) => sum + group.bookings, 0)).to.equal(json.body.totals.bookings)
    // The CSV of the same groups (about half the JSON's bytes: here sent whole) has a line per group after its header.
    const csv = await request(t.app).get(`${path}&format=csv`).expect(200)
    expect(csv.text.split('\r\n')).to.have.length(json.body.groups.length + 2)
    expect(csv.text).to.include(',15,стрижка,')
    const short = await request(t.app).get(`${URL}?start=2026-11-24&end=2026-11-25&group_by=day`).expect(200)
    expect(short.headers['content-length']).to.equal(String(Buffer.byteLength(short.text)))
    expect(short.text).to.equal(JSON.stringify(short.body))
  })

  it('HEAD answers like GET, without a body', async () => {
    const res = await request(t.app).head(`${URL}?format=csv`).expect(200)
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8')
    expect(res.text ?? '').to.equal('')
  })

  it('is listed in the namespace index with every parameter', async () => {
    const res = await request(t.app).get('/wp-json/booking-calendar/v1').expect(200)
    expect(Object.keys(res.body.routes['/booking-calendar/v1/summary'].endpoints[0].args))
      .to.deep.equal(['status', 'service', 'start', 'end', 'filter_by', 'group_by', 'blocking', '_fields', 'format', 'bom'])
  })
})
