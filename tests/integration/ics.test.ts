// Calendar feeds (API.md, "Calendar feeds: format=ics"): every
// booking and every disabled period round-trips through two real parsers,
// Mozilla's ical.js (Thunderbird's) and node-ical, against the JSON answers of
// the same routes; the feed's lines are folded and ended as RFC 5545 asks; and
// access_token opens calendar feeds in token mode and nothing else.
import { expect } from 'chai'
import ICAL from 'ical.js'
import nodeIcal from 'node-ical'
import type { App } from 'supertest/types.js'
import request, { invalidParamsData } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { loadSite, HAIRCUT, STRIZHKA, DELETED_SERVICE } from '../fixtures/site.ts'
import { demoDataSql } from '../../db/demo-data.ts'

const PREFIX = '/wp-json/booking-calendar/v1'
const TOKEN = 'feed-token-0123456789abcdef'
const TOKEN_ENV = { AUTH_MODE: 'token', API_TOKENS: `other-token-xyz, ${TOKEN}`, SITE_TIMEZONE: 'Europe/Berlin' }
const NOW = Date.parse('2026-11-22T12:34:56Z')
const HOST = 'shop.example.com'
/** Notes with everything TEXT escaping and folding must survive. */
const HARD_NOTE = 'back\\slash; semi, comma\r\nsecond line\nthird 🎉 שלום עולם — ' + 'long 🧑‍🍳 text, '.repeat(12)

interface JsonBooking {
  id: number; service_id: number; service_slug: string | null; status: string; booking_date: string
  start: string | null; end: string | null; all_day: boolean; note: string | null
  customer: { name: string; email: string; phone: string } | null
}
interface JsonPeriod { rule_id: number; service_id: number | null; service_slug: string | null; start: string; end: string; all_day: boolean; note: string }

/** The raw bytes of an answer, so CRLF and octets can be checked as sent. */
async function getRaw(app: App, url: string, headers: Record<string, string> = {}) {
  let req = request(app).get(url).set('Host', HOST)
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value)
  const res = await req.buffer(true).parse((stream, done) => {
    const chunks: Buffer[] = []
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('end', () => done(null, Buffer.concat(chunks)))
  })
  return { res, bytes: res.body as Buffer, text: (res.body as Buffer).toString('utf8') }
}

/** RFC 5545, 3.1, checked on the bytes: CRLF after every line, at most 75 octets, no fold inside a UTF-8 character. */
function checkLines(bytes: Buffer): void {
  const text = bytes.toString('utf8')
  expect(text.endsWith('\r\n'), 'the last line ends with CRLF').to.equal(true)
  expect(/\r(?!\n)|(?<!\r)\n/.test(text), 'no CR or LF outside CRLF').to.equal(false)
  let from = 0
  while (from < bytes.length) {
    const at = bytes.indexOf('\r\n', from)
    const line = bytes.subarray(from, at)
    expect(line.length, `line ${JSON.stringify(line.toString('utf8'))}`).to.be.at.most(75)
    // A line cut inside a character decodes with U+FFFD and re-encodes to other bytes.
    expect(Buffer.from(line.toString('utf8'), 'utf8').equals(line), `a UTF-8 character split in ${line.toString('utf8')}`).to.equal(true)
    from = at + 2
  }
}

function icalJsEvents(text: string): Map<string, ICAL.Component> {
  const calendar = new ICAL.Component(ICAL.parse(text))
  const events = new Map<string, ICAL.Component>()
  for (const event of calendar.getAllSubcomponents('vevent')) events.set(String(event.getFirstPropertyValue('uid')), event)
  return events
}

function nodeIcalEvents(text: string): Map<string, nodeIcal.VEvent> {
  const events = new Map<string, nodeIcal.VEvent>()
  for (const component of Object.values(nodeIcal.sync.parseICS(text))) {
    if (component?.type === 'VEVENT') events.set(String(component.uid), component)
  }
  return events
}

/** node-ical gives text as a string or as { val, params }. */
const textOf = (value: unknown): unknown => (value && typeof value === 'object' && 'val' in value ? (value).val : value)
/** A DATE value read by node-ical: a Date at local midnight flagged dateOnly. */
const localDay = (date: Date) =>
  `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`
const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)

const STATUS: Record<string, string> = { pending: 'TENTATIVE', booked: 'CONFIRMED', completed: 'CONFIRMED', reject: 'CANCELLED', expired: 'CANCELLED' }

/** What API.md puts in DESCRIPTION, built here from the JSON record on its own. */
function expectedDescription(booking: JsonBooking): string | undefined {
  const lines = [booking.note, booking.customer?.name, booking.customer?.email, booking.customer?.phone]
    .filter((part): part is string => typeof part === 'string' && part.trim() !== '')
    .map((part) => part.replace(/\r\n|\r/g, '\n'))
  return lines.length > 0 ? lines.join('\n') : undefined
}

/** Every booking of the JSON answer is the event of the same UID in both parsers, and there are no others. */
function checkBookings(json: JsonBooking[], text: string): void {
  const byIcalJs = icalJsEvents(text)
  const byNodeIcal = nodeIcalEvents(text)
  const dated = json.filter((booking) => booking.start !== null)
  expect([...byIcalJs.keys()].sort()).to.deep.equal(dated.map((b) => `booking-${b.id}@${HOST}`).sort())
  expect([...byNodeIcal.keys()].sort()).to.deep.equal([...byIcalJs.keys()].sort())
  for (const booking of dated) {
    const uid = `booking-${booking.id}@${HOST}`
    const a = byIcalJs.get(uid)!
    const n = byNodeIcal.get(uid)!
    const what = `booking ${booking.id}`
    const start = a.getFirstPropertyValue('dtstart') as ICAL.Time
    const end = a.getFirstPropertyValue('dtend') as ICAL.Time | null
    if (booking.all_day) {
      expect(start.isDate, what).to.equal(true)
      expect(start.toString(), what).to.equal(booking.booking_date)
      expect(end?.isDate, what).to.equal(true)
      expect(end?.toString(), what).to.equal(nextDay(booking.booking_date))
      expect(n.start.dateOnly, what).to.equal(true)
      expect(localDay(n.start), what).to.equal(booking.booking_date)
      expect(localDay(n.end!), what).to.equal(nextDay(booking.booking_date))
    } else {
      expect(start.isDate, what).to.equal(false)
      expect(start.toJSDate().getTime(), what).to.equal(Date.parse(booking.start!))
      expect(n.start.getTime(), what).to.equal(Date.parse(booking.start!))
      if (booking.end === null || booking.end === booking.start) {
        // No end, or one equal to the start: no DTEND, which RFC 5545 wants later than DTSTART.
        expect(a.hasProperty('dtend'), what).to.equal(false)
      } else {
        expect(end!.toJSDate().getTime(), what).to.equal(Date.parse(booking.end))
        expect(n.end!.getTime(), what).to.equal(Date.parse(booking.end))
      }
    }
    expect(a.getFirstPropertyValue('status') ?? undefined, what).to.equal(STATUS[booking.status])
    expect(n.status, what).to.equal(STATUS[booking.status])
    const summary = booking.service_slug ?? `service ${booking.service_id}`
    expect(a.getFirstPropertyValue('summary'), what).to.equal(summary)
    expect(textOf(n.summary), what).to.equal(summary)
    expect(a.getFirstProperty('categories')?.getValues(), what).to.deep.equal([booking.status])
    expect(n.categories, what).to.deep.equal([booking.status])
    const description = expectedDescription(booking)
    expect(a.getFirstPropertyValue('description') ?? undefined, what).to.equal(description)
    // node-ical 0.26 unescapes `\n` before `\\`, so a backslash followed by n
    // (`C:\\new`, correctly escaped) comes out as a line break there; ical.js
    // reads it right. That one case is left to ical.js.
    if (!/\\n/i.test(description ?? '')) expect(textOf(n.description), what).to.equal(description)
  }
}

/**
 * Every period of disabled-time/'s JSON is the event at its place in the feed, in
 * both parsers, and no two events share a UID (RFC 5545, 3.8.4.7). A UID names
 * the rule and the day its window starts: the period's start day, or an earlier
 * day for a period cut at the range start, which JSON does not say.
 */
function checkPeriods(json: JsonPeriod[], text: string): void {
  const uids = uidsOf(text).map((line) => line.slice('UID:'.length))
  expect(new Set(uids).size, 'UIDs are unique').to.equal(uids.length)
  const byIcalJs = [...icalJsEvents(text).values()]
  const byNodeIcal = nodeIcalEvents(text)
  expect(byIcalJs.map((event) => String(event.getFirstPropertyValue('uid')))).to.deep.equal(uids)
  expect([...byNodeIcal.keys()].sort()).to.deep.equal([...uids].sort())
  expect(uids).to.have.length(json.length)
  json.forEach((period, i) => {
    const uid = uids[i]!
    const [, ruleId, day] = /^disabled-(\d+)-(\d{8})@(.*)$/.exec(uid)!
    expect([Number(ruleId), uid.endsWith(`@${HOST}`)], uid).to.deep.equal([period.rule_id, true])
    expect(day! <= period.start.slice(0, 10).replace(/-/g, ''), `${uid}: its day is not after the period's start`).to.equal(true)
    const a = byIcalJs[i]!
    const n = byNodeIcal.get(uid)!
    const start = a.getFirstPropertyValue('dtstart') as ICAL.Time
    const end = a.getFirstPropertyValue('dtend') as ICAL.Time
    if (period.all_day) {
      expect([start.isDate, end.isDate], uid).to.deep.equal([true, true])
      expect([start.toString(), end.toString()], uid).to.deep.equal([period.start.slice(0, 10), period.end.slice(0, 10)])
      expect([localDay(n.start), localDay(n.end!)], uid).to.deep.equal([period.start.slice(0, 10), period.end.slice(0, 10)])
    } else {
      expect([start.toJSDate().getTime(), end.toJSDate().getTime()], uid).to.deep.equal([Date.parse(period.start), Date.parse(period.end)])
      expect([n.start.getTime(), n.end!.getTime()], uid).to.deep.equal([Date.parse(period.start), Date.parse(period.end)])
    }
    const summary = period.note.trim() === '' ? 'Disabled' : period.note
    expect(a.getFirstPropertyValue('summary'), uid).to.equal(summary)
    expect(textOf(n.summary), uid).to.equal(summary)
    expect(a.getFirstPropertyValue('transp'), uid).to.equal('OPAQUE')
  })
}

const uidsOf = (text: string) => text.split('\r\n').filter((line) => line.startsWith('UID:'))

describe('calendar feeds (format=ics)', function () {
  this.timeout(60_000)
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('ics')
    await loadSite(db)
    await db.insert('booking_calendar_bookings', [
      { id: 201, service_id: HAIRCUT, status: 'booked', booking_date: '2026-11-30', time_from: '11:00:00', time_to: '12:00:00', customer_name: 'Zoë, Müller; \\ Jr.', customer_email: 'zoe@example.com', customer_phone: '', note: HARD_NOTE, created_at: '2026-11-20 10:00:00' },
      // A backslash before n: escaped, it must not read back as a line break.
      { id: 203, service_id: HAIRCUT, status: 'pending', booking_date: '2026-11-30', time_from: '13:00:00', time_to: '13:30:00', customer_name: 'C', customer_email: '', customer_phone: '', note: 'C:\\new\\folder', created_at: '2026-11-20 10:00:00' },
      { id: 202, service_id: STRIZHKA, status: 'completed', booking_date: '2026-12-01', time_from: null, time_to: null, customer_name: '', customer_email: '', customer_phone: '', note: '   ', created_at: '2026-11-20 10:00:00' },
    ])
    await db.insert('booking_calendar_disabled_times', [
      { id: 1, service_id: 0, rule_type: 'weekly', weekday: 1, time_from: '18:00:00', time_to: '08:00:00', note: 'After hours, closed; really \\ closed' },
      { id: 2, service_id: HAIRCUT, rule_type: 'weekly', weekday: 2, time_from: '12:00:00', time_to: '13:00:00', note: '' },
      { id: 3, service_id: 0, rule_type: 'date', date_from: '2026-12-24', date_to: '2026-12-26', note: 'Weihnachten 🎄 חג שמח' },
      { id: 4, service_id: STRIZHKA, rule_type: 'weekly', weekday: 6, time_from: '14:00:00', time_to: '24:00:00', note: 'Саббат 🌙' },
      { id: 5, service_id: DELETED_SERVICE, rule_type: 'date', date_from: '2026-03-29', date_to: null, time_from: '01:00:00', time_to: '04:00:00', note: 'across the spring gap' },
      { id: 6, service_id: 0, rule_type: 'date', date_from: '2027-01-11', date_to: '2027-01-13', time_from: '22:00:00', time_to: '06:00:00', note: 'Night works' },
    ])
    t = createTestApp(db, { env: TOKEN_ENV, now: () => NOW })
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  describe('round trip through ical.js and node-ical', () => {
    const range = 'start=2025-01-01&end=2026-12-31'

    it('every booking of the fixtures: UID, DTSTART/DTEND as JSON start/end, whole days as dates, STATUS, SUMMARY, CATEGORIES, DESCRIPTION with customer lines', async () => {
      const json = await request(t.app).get(`${PREFIX}/slots?flat&${range}`).set('Authorization', `Bearer ${TOKEN}`).expect(200)
      const { res, bytes, text } = await getRaw(t.app, `${PREFIX}/slots?format=ics&${range}&access_token=${TOKEN}`)
      expect(res.status).to.equal(200)
      expect(res.headers['content-type']).to.equal('text/calendar; charset=utf-8')
      checkLines(bytes)
      const bookings = json.body.booked_slots as JsonBooking[]
      expect(bookings).to.have.length(19)
      expect(bookings.every((b) => b.customer !== null)).to.equal(true)
      checkBookings(bookings, text)
      expect(text).to.include('\r\nDTSTAMP:20261122T123456Z\r\n')
    })

    it('every disabled period of disabled-time/ the same way, against its JSON', async () => {
      const json = await request(t.app).get(`${PREFIX}/disabled-time?start=2026-03-01&end=2026-12-31`).set('Authorization', `Bearer ${TOKEN}`).expect(200)
      const { res, bytes, text } = await getRaw(t.app, `${PREFIX}/disabled-time?format=ics&start=2026-03-01&end=2026-12-31&access_token=${TOKEN}`)
      expect(res.status).to.equal(200)
      expect(res.headers['content-type']).to.equal('text/calendar; charset=utf-8')
      checkLines(bytes)
      expect(json.body.total).to.be.above(100)
      checkPeriods(json.body.disabled_times as JsonPeriod[], text)
      expect(text).to.include('\r\nX-WR-CALNAME:Disabled times\r\n')
    })

    it('UIDs carry the host of the public address: PUBLIC_URL, else a trusted proxy\'s X-Forwarded-Host, else the request\'s Host', async () => {
      const path = `${PREFIX}/slots?format=ics&start=2026-11-24&end=2026-11-24`
      const proxied = await getRaw(t.app, path, { Authorization: `Bearer ${TOKEN}`, 'X-Forwarded-Host': 'Bookings.Example.org', 'X-Forwarded-Proto': 'https' })
      expect(uidsOf(proxied.text).length).to.be.above(0)
      expect(uidsOf(proxied.text).every((line) => line.endsWith('@bookings.example.org'))).to.equal(true)
      const configured = createTestApp(db, { env: { ...TOKEN_ENV, PUBLIC_URL: 'https://shop.example.net/booking' }, now: () => NOW })
      try {
        const res = await getRaw(configured.app, path, { Authorization: `Bearer ${TOKEN}`, 'X-Forwarded-Host': 'evil.example' })
        expect(uidsOf(res.text).length).to.be.above(0)
        expect(uidsOf(res.text).every((line) => line.endsWith('@shop.example.net'))).to.equal(true)
      } finally {
        await configured.close()
      }
    })

    it('the same UIDs come back on a second request', async () => {
      const first = await getRaw(t.app, `${PREFIX}/slots?format=ics&${range}`, { Authorization: `Bearer ${TOKEN}` })
      const second = await getRaw(t.app, `${PREFIX}/slots?format=ics&${range}`, { Authorization: `Bearer ${TOKEN}` })
      expect(uidsOf(first.text)).to.have.length(19)
      expect(uidsOf(second.text)).to.deep.equal(uidsOf(first.text))
      const periods = `${PREFIX}/disabled-time?format=ics&start=2026-11-01&end=2026-12-31`
      const a = await getRaw(t.app, periods, { Authorization: `Bearer ${TOKEN}` })
      const b = await getRaw(t.app, periods, { Authorization: `Bearer ${TOKEN}` })
      expect(uidsOf(a.text).length).to.be.above(10)
      expect(uidsOf(b.text)).to.deep.equal(uidsOf(a.text))
    })

    it('every booking and period of the demo data, with its quirks', async function () {
      const demo = await createTestDatabase('ics_demo')
      const app = createTestApp(demo, { env: { ...TOKEN_ENV, MAX_RANGE_DAYS: '1200' }, now: () => NOW })
      try {
        for (const statement of demoDataSql({ prefix: demo.prefix, bookings: 3000 })) await demo.admin.query(statement)
        const all = 'start=2025-01-01&end=2028-01-31'
        const json = await request(app.app).get(`${PREFIX}/slots?flat&${all}`).set('Authorization', `Bearer ${TOKEN}`).expect(200)
        expect(json.body.total).to.equal(3000)
        const feed = await getRaw(app.app, `${PREFIX}/slots?format=ics&${all}&access_token=${TOKEN}`)
        checkLines(feed.bytes)
        checkBookings(json.body.booked_slots as JsonBooking[], feed.text)
        const periodsJson = await request(app.app).get(`${PREFIX}/disabled-time?start=2025-01-01&end=2026-12-31`).set('Authorization', `Bearer ${TOKEN}`).expect(200)
        const periods = await getRaw(app.app, `${PREFIX}/disabled-time?format=ics&start=2025-01-01&end=2026-12-31&access_token=${TOKEN}`)
        checkLines(periods.bytes)
        checkPeriods(periodsJson.body.disabled_times as JsonPeriod[], periods.text)
      } finally {
        await app.close()
        await demo.drop()
      }
    })
  })

  describe('the feed', () => {
    it('Accept: text/calendar gives the feed too; the calendar carries the properties of API.md', async () => {
      const { res, text } = await getRaw(t.app, `${PREFIX}/slots`, { Accept: 'text/calendar', Authorization: `Bearer ${TOKEN}` })
      expect(res.status).to.equal(200)
      expect(res.headers['content-type']).to.equal('text/calendar; charset=utf-8')
      expect(res.headers.vary).to.include('Accept')
      expect(text.split('\r\n').slice(0, 9)).to.deep.equal([
        'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//booking-calendar-api//Calendar feed//EN', 'CALSCALE:GREGORIAN',
        'METHOD:PUBLISH', 'X-WR-CALNAME:Bookings', 'X-WR-TIMEZONE:Europe/Berlin',
        'REFRESH-INTERVAL;VALUE=DURATION:PT15M', 'X-PUBLISHED-TTL:PT15M',
      ])
      expect(text.endsWith('END:VEVENT\r\nEND:VCALENDAR\r\n')).to.equal(true)
      const periods = await getRaw(t.app, `${PREFIX}/disabled-time`, { Accept: 'text/calendar;q=0.9, application/json;q=0.5', Authorization: `Bearer ${TOKEN}` })
      expect(periods.res.headers['content-type']).to.equal('text/calendar; charset=utf-8')
    })

    it('without start and end covers 30 days before today to one year after, site time', async () => {
      const json = await request(t.app).get(`${PREFIX}/slots?flat&start=2026-10-23&end=2027-11-22&_fields=id`).set('Authorization', `Bearer ${TOKEN}`).expect(200)
      const { res, text } = await getRaw(t.app, `${PREFIX}/slots?format=ics`, { Authorization: `Bearer ${TOKEN}` })
      expect(res.headers['x-wp-total']).to.equal(String(json.body.total))
      // 105 (2026-10-25) is inside; 113 (2026-07-15) and 104 (2026-03-29) are not.
      expect(uidsOf(text)).to.deep.equal((json.body.booked_slots as { id: number }[]).map((b) => `UID:booking-${b.id}@${HOST}`))
      expect(text).to.include(`UID:booking-105@${HOST}`)
      expect(text).to.not.include(`UID:booking-113@${HOST}`)
    })

    it('with service the calendar is named after its slug and holds only its bookings', async () => {
      const { text } = await getRaw(t.app, `${PREFIX}/slots?format=ics&service=${encodeURIComponent('Стрижка')}&start=2026-01-01&end=2026-12-31`, { Authorization: `Bearer ${TOKEN}` })
      expect(text).to.include('\r\nX-WR-CALNAME:Bookings: стрижка\r\n')
      expect(uidsOf(text)).to.deep.equal([`UID:booking-106@${HOST}`, `UID:booking-102@${HOST}`, `UID:booking-202@${HOST}`])
    })

    it('page and per_page with format=ics are 400 rest_invalid_param: a feed is never paged', async () => {
      const message = 'A calendar feed is never paged: leave out page and per_page with format=ics (or Accept: text/calendar).'
      const res = await request(t.app).get(`${PREFIX}/slots?format=ICS&per_page=10`).set('Authorization', `Bearer ${TOKEN}`).expect(400)
      expect(res.body).to.deep.equal({ code: 'rest_invalid_param', message: 'Invalid parameter(s): per_page', data: invalidParamsData({ per_page: message }) })
      const accept = await request(t.app).get(`${PREFIX}/slots?page=2&per_page=5`).set('Accept', 'text/calendar').set('Authorization', `Bearer ${TOKEN}`).expect(400)
      expect(accept.body.data.params).to.deep.equal({ per_page: message })
      // page alone: not first "page needs per_page", then this.
      const page = await request(t.app).get(`${PREFIX}/slots?format=ics&page=2`).set('Authorization', `Bearer ${TOKEN}`).expect(400)
      expect(page.body.data.params).to.deep.equal({ page: message })
      const byAccept = await request(t.app).get(`${PREFIX}/slots?page=2`).set('Accept', 'text/calendar').set('Authorization', `Bearer ${TOKEN}`).expect(400)
      expect(byAccept.body.data.params).to.deep.equal({ page: message })
    })

    it('a range longer than MAX_RANGE_DAYS is 400 naming the parameter to change', async () => {
      const res = await request(t.app).get(`${PREFIX}/slots?format=ics&start=2020-01-01&end=2026-12-31`).set('Authorization', `Bearer ${TOKEN}`).expect(400)
      expect(res.body.code).to.equal('rest_invalid_param')
      expect(res.body.data.params.end).to.match(/spans 2557 days; at most 731 are allowed/)
    })

    it('format=csv on disabled-time/ is 400 naming format', async () => {
      const res = await request(t.app).get(`${PREFIX}/disabled-time?format=csv`).set('Authorization', `Bearer ${TOKEN}`).expect(400)
      expect(res.body.data.params).to.deep.equal({ format: 'format must be one of: json, ics.' })
    })

    it('a night window cut at the range start keeps the UID of the evening it began: no two events share a UID', async () => {
      const day = await getRaw(t.app, `${PREFIX}/disabled-time?format=ics&start=2027-01-12&end=2027-01-12`, { Authorization: `Bearer ${TOKEN}` })
      // Rule 1 (Mondays 18:00 to 08:00) is cut the same way: 2027-01-11 is a Monday.
      expect(uidsOf(day.text)).to.deep.equal([1, 6, 2, 6].map((rule, i) => `UID:disabled-${rule}-${i === 0 || i === 1 ? '20270111' : '20270112'}@${HOST}`))
      expect(Object.keys(nodeIcal.sync.parseICS(day.text)).filter((key) => key.startsWith('disabled-'))).to.have.length(4)
      const json = await request(t.app).get(`${PREFIX}/disabled-time?start=2027-01-12&end=2027-01-12`).set('Authorization', `Bearer ${TOKEN}`).expect(200)
      checkPeriods(json.body.disabled_times as JsonPeriod[], day.text)
      // The whole window, in a range that holds its evening, has the same UID.
      const week = await getRaw(t.app, `${PREFIX}/disabled-time?format=ics&start=2027-01-10&end=2027-01-16`, { Authorization: `Bearer ${TOKEN}` })
      expect(uidsOf(week.text)).to.include.members([`UID:disabled-6-20270111@${HOST}`, `UID:disabled-6-20270112@${HOST}`, `UID:disabled-6-20270113@${HOST}`])
    })

    it('HEAD answers with the feed\'s headers and no body', async () => {
      const res = await request(t.app).head(`${PREFIX}/slots?format=ics&access_token=${TOKEN}`).expect(200)
      expect(res.headers['content-type']).to.equal('text/calendar; charset=utf-8')
      expect(res.text ?? '').to.equal('')
    })

    it('no X-WR-TIMEZONE when the site has a fixed offset', async () => {
      const fixed = createTestApp(db, { env: { ...TOKEN_ENV, SITE_TIMEZONE: '+05:45' }, now: () => NOW })
      try {
        const { text } = await getRaw(fixed.app, `${PREFIX}/slots?format=ics&access_token=${TOKEN}`)
        expect(text).to.include('X-WR-CALNAME:Bookings\r\n')
        expect(text).to.not.include('X-WR-TIMEZONE')
      } finally {
        await fixed.close()
      }
    })
  })

  describe('access_token', () => {
    it('in token mode, opens the feeds of slots/ and disabled-time/, any letter case of format, the rest_route form too', async () => {
      for (const url of [
        `${PREFIX}/slots?format=ics&access_token=${TOKEN}`,
        `${PREFIX}/slots/?format=ICS&access_token=${TOKEN}`,
        `/booking-calendar/v1/disabled-time?access_token=${TOKEN}&format=ics`,
        `/?rest_route=/booking-calendar/v1/slots&format=ics&access_token=${TOKEN}`,
      ]) {
        const res = await request(t.app).get(url).expect(200)
        expect(res.headers['content-type'], url).to.equal('text/calendar; charset=utf-8')
      }
    })

    it('a wrong or repeated access_token gets 401', async () => {
      const wrong = await request(t.app).get(`${PREFIX}/slots?format=ics&access_token=wrong`).expect(401)
      expect(wrong.body).to.deep.equal({ code: 'rest_not_logged_in', message: 'The bearer token is not valid.', data: { status: 401 } })
      await request(t.app).get(`${PREFIX}/slots?format=ics&access_token=${TOKEN}&access_token=${TOKEN}`).expect(401)
    })

    it('opens nothing else: not JSON slots (CSV exports take it: spreadsheets.test.ts), not Accept: text/calendar without format=ics, not the index, openapi.json or unknown paths, not other methods', async () => {
      const message = 'access_token is accepted only on calendar feeds (format=ics of slots/ or disabled-time/) and CSV exports (format=csv of slots/, summary/ or availability/); send the token as Authorization: Bearer instead.'
      for (const url of [
        `${PREFIX}/slots?access_token=${TOKEN}`,
        `${PREFIX}/slots?format=json&access_token=${TOKEN}`,
        `${PREFIX}/disabled-time?format=csv&access_token=${TOKEN}`,
        `${PREFIX}/slots?format=ics&format=json&access_token=${TOKEN}`,
        `${PREFIX}/disabled-time?access_token=${TOKEN}`,
        `${PREFIX}/?format=ics&access_token=${TOKEN}`,
        `${PREFIX}?format=ics&access_token=${TOKEN}`,
        `${PREFIX}/openapi.json?format=ics&access_token=${TOKEN}`,
        `${PREFIX}/nope?format=ics&access_token=${TOKEN}`,
        `/?rest_route=/booking-calendar/v1/&format=ics&access_token=${TOKEN}`,
      ]) {
        const res = await request(t.app).get(url).expect(401)
        expect(res.body, url).to.deep.equal({ code: 'rest_not_logged_in', message, data: { status: 401 } })
      }
      await request(t.app).get(`${PREFIX}/slots?access_token=${TOKEN}`).set('Accept', 'text/calendar').expect(401)
      // Beside a good Authorization header too: a paged answer would otherwise copy the token into its Link header.
      const paged = await request(t.app).get(`${PREFIX}/slots?flat&per_page=1&access_token=${TOKEN}`).set('Authorization', `Bearer ${TOKEN}`).expect(401)
      expect(paged.body).to.deep.equal({ code: 'rest_not_logged_in', message, data: { status: 401 } })
      expect(paged.headers.link).to.not.include('access_token')
      await request(t.app).get(`${PREFIX}/summary?access_token=${TOKEN}`).set('Authorization', `Bearer ${TOKEN}`).expect(401)
      await request(t.app).get(`${PREFIX}/summary?format=ics&access_token=${TOKEN}`).expect(401)
      const post = await request(t.app).post(`${PREFIX}/slots?format=ics&access_token=${TOKEN}`).expect(401)
      expect(post.body.code).to.equal('rest_not_logged_in')
    })

    it('opens nothing in AUTH_MODE wordpress, and shows no customer in AUTH_MODE none', async () => {
      const wordpress = createTestApp(db, { env: { AUTH_MODE: 'wordpress', WORDPRESS_URL: 'http://127.0.0.1:9', SITE_TIMEZONE: 'Europe/Berlin' }, now: () => NOW })
      try {
        const res = await request(wordpress.app).get(`${PREFIX}/slots?format=ics&access_token=${TOKEN}`).expect(401)
        expect(res.body.code).to.equal('rest_not_logged_in')
        expect(wordpress.access.stats.wordpressCalls).to.equal(0)
      } finally {
        await wordpress.close()
      }
      const none = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin' }, now: () => NOW })
      try {
        const { res, text } = await getRaw(none.app, `${PREFIX}/slots?format=ics&start=2026-11-01&end=2026-11-30&access_token=${TOKEN}`)
        expect(res.status).to.equal(200)
        expect(text).to.include('DESCRIPTION:Window seat\r\n')
        expect(text).to.not.match(/Customer 1\d\d|@example\.com/)
      } finally {
        await none.close()
      }
    })

    it('customer lines appear in DESCRIPTION only where customer would be shown', async () => {
      const token = await getRaw(t.app, `${PREFIX}/slots?format=ics&start=2026-11-01&end=2026-11-30&access_token=${TOKEN}`)
      expect(token.text).to.include('DESCRIPTION:Window seat\\nCustomer 101\\nc101@example.com\\n+49 30 101\r\n')
      const exposed = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin', EXPOSE_CUSTOMER_DATA: 'true' }, now: () => NOW })
      try {
        const { text } = await getRaw(exposed.app, `${PREFIX}/slots?format=ics&start=2026-11-01&end=2026-11-30`)
        expect(text).to.include('DESCRIPTION:Window seat\\nCustomer 101\\nc101@example.com\\n+49 30 101\r\n')
      } finally {
        await exposed.close()
      }
    })

    it('is never logged: the request log line has the path only', async () => {
      const quiet = createTestApp(db, { env: TOKEN_ENV, now: () => NOW })
      try {
        await request(quiet.app).get(`${PREFIX}/slots?format=ics&access_token=${TOKEN}`).expect(200)
        await request(quiet.app).get(`${PREFIX}/slots?access_token=${TOKEN}`).expect(401)
        await request(quiet.app).get(`${PREFIX}/slots?format=ics&access_token=wrong-guess-secret`).expect(401)
        const lines = quiet.logs.filter((line) => line.msg === 'request')
        expect(lines.map((line) => [line.path, line.status])).to.deep.equal([
          [`${PREFIX}/slots`, 200], [`${PREFIX}/slots`, 401], [`${PREFIX}/slots`, 401],
        ])
        const text = JSON.stringify(quiet.logs)
        for (const secret of [TOKEN, 'wrong-guess-secret', 'access_token', 'Customer 101']) expect(text, secret).to.not.include(secret)
      } finally {
        await quiet.close()
      }
    })
  })
})
