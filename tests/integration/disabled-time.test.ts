// GET disabled-time/ over a real MariaDB, with a clock the test sets.
import { expect } from 'chai'
import request, { invalidParamsData } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { loadSite, HAIRCUT, STRIZHKA, DELETED_SERVICE } from '../fixtures/site.ts'

const URL = '/wp-json/booking-calendar/v1/disabled-time'
/** 2026-11-21 12:00 UTC: "today" is 2026-11-21 in Berlin. */
const NOW = Date.UTC(2026, 10, 21, 12)

describe('GET disabled-time/', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('disabled')
    await loadSite(db)
    await db.insert('booking_calendar_disabled_times', [
      { id: 1, service_id: 0, rule_type: 'weekly', weekday: 1, time_from: '18:00:00', time_to: '08:00:00', note: 'After hours' },
      { id: 2, service_id: HAIRCUT, rule_type: 'weekly', weekday: 1, time_from: '12:00:00', time_to: '13:00:00', note: 'Lunch' },
      { id: 3, service_id: 0, rule_type: 'date', date_from: '2026-12-24', date_to: '2026-12-26', note: 'Christmas' },
      { id: 4, service_id: STRIZHKA, rule_type: 'weekly', weekday: 6, time_from: '14:00:00', time_to: '24:00:00', note: 'Саббат 🌙' },
      { id: 5, service_id: DELETED_SERVICE, rule_type: 'weekly', weekday: 2, time_from: '09:00:00', time_to: '10:00:00', note: 'Gone' },
      { id: 6, service_id: HAIRCUT, rule_type: 'date', date_from: '2026-12-31', date_to: null, time_from: '13:00:00', time_to: '24:00:00', note: 'New Year\'s Eve' },
      { id: 7, service_id: HAIRCUT, rule_type: 'weekly', weekday: 2, date_from: '2026-11-24', date_to: '2026-11-24', time_from: '15:00:00', time_to: '16:00:00', note: 'Training' },
      // Rows that make no sense: skipped and logged once each.
      { id: 20, service_id: 0, rule_type: 'monthly', note: 'unknown type' },
      { id: 21, service_id: 0, rule_type: 'weekly', weekday: null, time_from: '09:00:00', time_to: '10:00:00', note: 'no weekday' },
      { id: 22, service_id: 0, rule_type: 'weekly', weekday: 9, note: 'weekday 9' },
      { id: 23, service_id: 0, rule_type: 'date', date_from: null, note: 'no date_from' },
      { id: 24, service_id: 0, rule_type: 'date', date_from: '2026-11-25', date_to: '2026-11-24', note: 'backwards' },
      { id: 25, service_id: 0, rule_type: 'weekly', weekday: 2, time_from: '09:00:00', time_to: null, note: 'half a window' },
      { id: 26, service_id: 0, rule_type: 'weekly', weekday: 2, time_from: '09:00:00', time_to: '09:00:00', note: 'empty window' },
    ])
    t = createTestApp(db, { now: () => NOW })
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('expands every rule over a range, in order of start, service (site-wide first), rule', async () => {
    const res = await request(t.app).get(`${URL}?start=2026-11-23&end=2026-11-24`).expect(200)
    expect(res.body).to.deep.equal({
      disabled_times: [
        { rule_id: 2, service_id: 12, service_slug: 'haircut', type: 'weekly', start: '2026-11-23T12:00:00+01:00', end: '2026-11-23T13:00:00+01:00', all_day: false, note: 'Lunch' },
        { rule_id: 1, service_id: null, service_slug: null, type: 'weekly', start: '2026-11-23T18:00:00+01:00', end: '2026-11-24T08:00:00+01:00', all_day: false, note: 'After hours' },
        { rule_id: 5, service_id: 99, service_slug: null, type: 'weekly', start: '2026-11-24T09:00:00+01:00', end: '2026-11-24T10:00:00+01:00', all_day: false, note: 'Gone' },
        { rule_id: 7, service_id: 12, service_slug: 'haircut', type: 'weekly', start: '2026-11-24T15:00:00+01:00', end: '2026-11-24T16:00:00+01:00', all_day: false, note: 'Training' },
      ],
      start: '2026-11-23',
      end: '2026-11-24',
      timezone: 'Europe/Berlin',
      total: 4,
    })
  })

  it('defaults to today in the site\'s zone plus three calendar months', async () => {
    const res = await request(t.app).get(URL).expect(200)
    expect([res.body.start, res.body.end, res.body.timezone]).to.deep.equal(['2026-11-21', '2027-02-21', 'Europe/Berlin'])
    expect(res.body.total).to.equal(res.body.disabled_times.length)
    expect(res.body.disabled_times[0].start >= '2026-11-21').to.equal(true)
  })

  it('start alone gives start plus three months; end alone starts today', async () => {
    const fromStart = await request(t.app).get(`${URL}?start=30.11.2026`).expect(200)
    expect([fromStart.body.start, fromStart.body.end]).to.deep.equal(['2026-11-30', '2027-02-28'])
    const toEnd = await request(t.app).get(`${URL}?end=2026-12-01`).expect(200)
    expect([toEnd.body.start, toEnd.body.end]).to.deep.equal(['2026-11-21', '2026-12-01'])
  })

  it('days off form one period, cut to the range', async () => {
    const res = await request(t.app).get(`${URL}?start=2026-12-25&end=2026-12-25&_fields=rule_id,start,end,all_day`).expect(200)
    expect(res.body.disabled_times).to.deep.equal([
      { rule_id: 3, start: '2026-12-25T00:00:00+01:00', end: '2026-12-26T00:00:00+01:00', all_day: true },
    ])
  })

  it('service: that service\'s rules and the site-wide ones, by ID or by Unicode slug', async () => {
    const res = await request(t.app).get(`${URL}?service=%D0%A1%D0%A2%D0%A0%D0%98%D0%96%D0%9A%D0%90&start=2026-11-28&end=2026-11-30&_fields=rule_id,service_id,service_slug`).expect(200)
    expect(res.body.disabled_times).to.deep.equal([
      { rule_id: 4, service_id: 15, service_slug: 'стрижка' },
      { rule_id: 1, service_id: null, service_slug: null },
    ])
    const byId = await request(t.app).get(`${URL}?service=12&start=2026-12-31&end=2026-12-31&_fields=rule_id,start,end`).expect(200)
    expect(byId.body.disabled_times).to.deep.equal([{ rule_id: 6, start: '2026-12-31T13:00:00+01:00', end: '2027-01-01T00:00:00+01:00' }])
    const unknown = await request(t.app).get(`${URL}?service=nope`).expect(404)
    expect(unknown.body.code).to.equal('rest_service_not_found')
  })

  it('skips rows that make no sense and logs each once, not once per request', async () => {
    t.logs.length = 0
    await request(t.app).get(`${URL}?start=2026-11-23&end=2026-11-24`).expect(200)
    await request(t.app).get(`${URL}?start=2026-11-23&end=2026-11-24`).expect(200)
    // The first request of this file already logged them; log a fresh app's twice.
    const fresh = createTestApp(db, { now: () => NOW })
    try {
      await request(fresh.app).get(`${URL}?start=2026-11-23&end=2026-11-24`).expect(200)
      await request(fresh.app).get(`${URL}?start=2026-11-23&end=2026-11-24`).expect(200)
      const skipped = fresh.logs.filter((line) => line.msg === 'skipped a disabled-time rule that makes no sense')
      expect(skipped.map((line) => line.ruleId)).to.deep.equal([20, 21, 22, 23, 24, 25, 26])
      expect(skipped.every((line) => line.level === 40)).to.equal(true)
    } finally {
      await fresh.close()
    }
    expect(t.logs.filter((line) => line.msg === 'skipped a disabled-time rule that makes no sense')).to.deep.equal([])
  })

  describe('refusals', () => {
    it('start after end is 400 rest_invalid_param naming start', async () => {
      const res = await request(t.app).get(`${URL}?start=2026-12-02&end=2026-12-01`).expect(400)
      expect(res.body).to.deep.equal({
        code: 'rest_invalid_param', message: 'Invalid parameter(s): start',
        data: invalidParamsData({ start: 'start must not be after end (2026-12-02 is after 2026-12-01).' }),
      })
    })

    it('end alone before today is 400 naming end', async () => {
      const res = await request(t.app).get(`${URL}?end=2026-11-01`).expect(400)
      expect(res.body.data.params).to.deep.equal({ end: 'end must not be before start, which defaults to today (2026-11-21).' })
    })

    it('a range longer than MAX_RANGE_DAYS (731) is 400', async () => {
      // 2026-01-01 to 2028-01-01 is 731 days counting both ends: the most allowed.
      await request(t.app).get(`${URL}?start=2026-01-01&end=2028-01-01`).expect(200)
      const res = await request(t.app).get(`${URL}?start=2026-01-01&end=2028-01-02`).expect(400)
      expect(res.body.data.params).to.deep.equal({
        end: 'The range from 2026-01-01 to 2028-01-02 spans 732 days; at most 731 are allowed. Choose a later start or an earlier end.',
      })
    })

    it('the default range counts too', async () => {
      const small = createTestApp(db, { now: () => NOW, env: { MAX_RANGE_DAYS: '30' } })
      try {
        const res = await request(small.app).get(URL).expect(400)
        expect(res.body.data.params).to.have.property('start')
        expect(res.body.data.params.start).to.match(/spans 93 days; at most 30 are allowed/)
      } finally {
        await small.close()
      }
    })

    it('a range reaching 9999-12-31 is 400 naming the parameter, in JSON and as a feed (the feed once gave a 500); 9999-12-30 is the last day', async () => {
      const why = 'must be 9999-12-30 or earlier: a time on the last day of 9999 can end in the year 10000, which the answer\'s dates cannot be written in.'
      for (const format of ['json', 'ics']) {
        const end = await request(t.app).get(`${URL}?start=9999-12-25&end=9999-12-31&format=${format}`).expect(400)
        expect(end.body.data.params, format).to.deep.equal({ end: `end ${why}` })
        const start = await request(t.app).get(`${URL}?start=9999-12-31&format=${format}`).expect(400)
        expect(start.body.data.params, format).to.deep.equal({ start: `start ${why}` })
      }
      // Start alone: the default end stops at 9999-12-30. Windows running to midnight end on 9999-12-31, never in 10000.
      const last = await request(t.app).get(`${URL}?start=9999-12-01`).expect(200)
      expect([last.body.start, last.body.end]).to.deep.equal(['9999-12-01', '9999-12-30'])
      expect(last.body.disabled_times.length).to.be.greaterThan(0)
      expect(JSON.stringify(last.body)).not.to.include('10000')
      await request(t.app).get(`${URL}?start=9999-12-01&format=ics`).expect(200)
    })

    it('a year before 1000 is 400 saying so', async () => {
      const res = await request(t.app).get(`${URL}?start=0999-12-31`).expect(400)
      expect(res.body.data.params).to.deep.equal({ start: 'start must be 1000-01-01 or later: years before 1000 are outside the database\'s dates.' })
    })

    it('a bad date is 400 naming it', async () => {
      const res = await request(t.app).get(`${URL}?start=2026-02-30`).expect(400)
      expect(res.body.data.params).to.deep.equal({ start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' })
    })
  })

  describe('time zones', () => {
    it('a fixed offset from gmt_offset: -3.5 is -03:30, and timezone says so', async () => {
      await db.setOption('timezone_string', '')
      await db.setOption('gmt_offset', '-3.5')
      const fixed = createTestApp(db, { now: () => NOW })
      try {
        const res = await request(fixed.app).get(`${URL}?start=2026-11-23&end=2026-11-23&service=12&_fields=rule_id,start,end`).expect(200)
        expect(res.body.timezone).to.equal('-03:30')
        expect(res.body.disabled_times[0]).to.deep.equal({ rule_id: 2, start: '2026-11-23T12:00:00-03:30', end: '2026-11-23T13:00:00-03:30' })
      } finally {
        await fixed.close()
        await db.setOption('timezone_string', 'Europe/Berlin')
        await db.setOption('gmt_offset', '1')
      }
    })

    it('UTC when the site sets none', async () => {
      const utc = createTestApp(db, { now: () => NOW, env: { SITE_TIMEZONE: 'UTC' } })
      try {
        const res = await request(utc.app).get(`${URL}?start=2026-11-23&end=2026-11-23&service=12&_fields=start`).expect(200)
        expect(res.body.timezone).to.equal('UTC')
        expect(res.body.disabled_times[0]).to.deep.equal({ start: '2026-11-23T12:00:00+00:00' })
      } finally {
        await utc.close()
      }
    })

    it('offsets right on both sides of Berlin\'s autumn change', async () => {
      const res = await request(t.app).get(`${URL}?start=2026-10-24&end=2026-10-26&service=12&_fields=rule_id,start,end`).expect(200)
      expect(res.body.disabled_times).to.deep.equal([
        { rule_id: 2, start: '2026-10-26T12:00:00+01:00', end: '2026-10-26T13:00:00+01:00' },
        { rule_id: 1, start: '2026-10-26T18:00:00+01:00', end: '2026-10-27T00:00:00+01:00' },
      ])
    })
  })
})

describe('GET disabled-time/, a long answer', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('disabled_long')
    await loadSite(db)
    // Six windows a weekday for two services: about 8,700 periods in two years, 1.8 MB of JSON.
    const rules = []
    for (const service of [HAIRCUT, STRIZHKA]) {
      for (let weekday = 0; weekday < 7; weekday++) {
        for (let hour = 8; hour < 20; hour += 2) {
          rules.push({ id: rules.length + 1, service_id: service, rule_type: 'weekly', weekday, time_from: `${hour}:00:00`, time_to: `${hour}:30:00`, note: 'Пауза ☕' })
        }
      }
    }
    await db.insert('booking_calendar_disabled_times', rules)
    t = createTestApp(db, { now: () => NOW })
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('two years, as JSON and as a feed: sent as the client reads (chunked, no Content-Length), JSON byte for byte JSON.stringify\'s; a short answer whole, with its length', async () => {
    const json = await request(t.app).get(`${URL}?start=2025-01-01&end=2026-12-31`).expect(200)
    const feed = await request(t.app).get(`${URL}?start=2025-01-01&end=2026-12-31&format=ics`).expect(200)
    for (const long of [json, feed]) {
      expect(long.headers['transfer-encoding']).to.equal('chunked')
      expect(long.headers).not.to.have.property('content-length')
    }
    expect(Buffer.byteLength(json.text)).to.be.above(512 * 1024)
    expect(json.text).to.equal(JSON.stringify(json.body))
    expect(json.text).to.include('"note":"Пауза ☕"')
    expect(json.body.total).to.equal(json.body.disabled_times.length)
    expect(feed.text.split('BEGIN:VEVENT')).to.have.length(json.body.total + 1)
    expect(feed.text.endsWith('END:VCALENDAR\r\n')).to.equal(true)
    const short = await request(t.app).get(`${URL}?start=2026-11-23&end=2026-11-24`).expect(200)
    expect(short.headers['content-length']).to.equal(String(Buffer.byteLength(short.text)))
    expect(short.body.total).to.equal(12 * 2)
  })
})
