// The two oracles of GET summary/, as properties checked by
// fast-check against the other routes of the same service over a real MariaDB:
//   bookings of a group = what slots/ gives for the same filter, cut to that group;
//   open_minutes of a group = 1,440 × days − the minutes covered by disabled-time/'s
//   periods for that service (the union, per day);
//   blocked_minutes of a group with `blocking` B = booked_minutes of the same group with
//   `status` cut to B (a booking blocks exactly when its status is one of B, as availability/ reads it).
// Once over the demo data (db/demo-data.ts), once over generated sites.
import { expect } from 'chai'
import fc from 'fast-check'
import type { Express } from 'express'
import request from '../support/request.ts'
import { createTestDatabase, type Row, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { addDays, dayToMs, daysInclusive, timeToSeconds } from '../../server/domain/day-arithmetic.ts'

const PREFIX = '/wp-json/booking-calendar/v1'
const STATUSES = ['pending', 'booked', 'reject', 'completed', 'expired'] as const

interface Query {
  start: string
  end: string
  period: 'day' | 'week' | 'month' | 'year' | undefined
  byService: boolean
  byStatus: boolean
  status: string[] | undefined
  blocking: string[] | undefined
  service: number | undefined
  filterBy: 'booking_date' | 'created_date'
  startOfWeek: number
}

function queryArb(firstDay: string, days: number, serviceIds: number[]): fc.Arbitrary<Query> {
  return fc.record({
    offset: fc.integer({ min: 0, max: days - 1 }),
    length: fc.integer({ min: 1, max: 75 }),
    period: fc.constantFrom(undefined, 'day', 'week', 'month', 'year'),
    byService: fc.boolean(),
    byStatus: fc.boolean(),
    status: fc.option(fc.subarray([...STATUSES], { minLength: 1 }), { nil: undefined }),
    blocking: fc.option(fc.subarray([...STATUSES], { minLength: 1 }), { nil: undefined }),
    service: fc.option(fc.constantFrom(...serviceIds), { nil: undefined, freq: 3 }),
    filterBy: fc.constantFrom('booking_date', 'booking_date', 'created_date'),
    startOfWeek: fc.integer({ min: 0, max: 6 }),
  }).map(({ offset, length, ...rest }) => ({
    ...rest, start: addDays(firstDay, offset), end: addDays(firstDay, offset + length - 1),
  }))
}

function summaryUrl(q: Query): string {
  const groupBy = [q.period, q.byService ? 'service' : undefined, q.byStatus ? 'status' : undefined].filter(Boolean)
  return `${PREFIX}/summary?${filterQuery(q)}${groupBy.length > 0 ? `&group_by=${groupBy.join(',')}` : ''}${q.blocking ? `&blocking=${q.blocking.join(',')}` : ''}`
}

function filterQuery(q: Query): string {
  return `start=${q.start}&end=${q.end}&filter_by=${q.filterBy}` +
    (q.status ? `&status=${q.status.join(',')}` : '') + (q.service !== undefined ? `&service=${q.service}` : '')
}

interface Group {
  period_start?: string; period_end?: string; service_id?: number; status?: string
  bookings: number; booked_minutes: number; blocked_minutes: number; open_minutes: number | null
}

/** Checks both oracles for one query; returns nothing, throws on a difference. */
async function checkOracles(app: Express, db: TestDatabase, q: Query): Promise<void> {
  if (q.period === 'week') await db.setOption('start_of_week', String(q.startOfWeek))
  const summary = (await request(app).get(summaryUrl(q)).expect(200)).body as { groups: Group[]; totals: Group }
  const slots = (await request(app).get(`${PREFIX}/slots?flat&_fields=id,service_id,status,booking_date,created_date&${filterQuery(q)}`).expect(200)).body as
    { booked_slots: { id: number; service_id: number; status: string; booking_date: string; created_date: string | null }[]; total: number }

  // Oracle 1: every booking of slots/ falls in exactly one group, and the counts agree.
  const counts = new Map<Group, number>()
  for (const booking of slots.booked_slots) {
    const day = q.filterBy === 'created_date' ? booking.created_date!.slice(0, 10) : booking.booking_date
    const matching = summary.groups.filter((g) =>
      (g.period_start === undefined || (g.period_start <= day && day <= g.period_end!)) &&
      (g.service_id === undefined || g.service_id === booking.service_id) &&
      (g.status === undefined || g.status === booking.status))
    expect(matching, `booking ${booking.id} in ${summaryUrl(q)}`).to.have.length(1)
    counts.set(matching[0]!, (counts.get(matching[0]!) ?? 0) + 1)
  }
  for (const group of summary.groups) expect(group.bookings, `${JSON.stringify(group)} of ${summaryUrl(q)}`).to.equal(counts.get(group) ?? 0)
  expect(summary.totals.bookings).to.equal(slots.total)

  // Oracle 3: blocked_minutes are the booked_minutes of the same group with status cut to blocking.
  const blocking = q.blocking ?? ['pending', 'booked', 'completed']
  const cut = q.status ? q.status.filter((status) => blocking.includes(status)) : blocking
  const keyOf = (g: Group) => [g.period_start, g.service_id, g.status].join('|')
  const cutGroups = cut.length === 0 ? [] : ((await request(app).get(summaryUrl({ ...q, status: cut, blocking: undefined })).expect(200)).body as { groups: Group[] }).groups
  const bookedOfCut = new Map(cutGroups.map((g) => [keyOf(g), g.booked_minutes]))
  for (const group of summary.groups) {
    expect(group.blocked_minutes, `${JSON.stringify(group)} of ${summaryUrl(q)}`).to.equal(bookedOfCut.get(keyOf(group)) ?? 0)
  }

  // Oracle 2: open minutes against disabled-time/'s periods, when the group names its service.
  const withOpen = q.filterBy === 'booking_date' && !q.byStatus
  if (!withOpen) {
    for (const group of summary.groups) expect(group.open_minutes).to.equal(null)
    return
  }
  if (!q.byService && q.service === undefined) return
  const disabled = (await request(app).get(`${PREFIX}/disabled-time?start=${q.start}&end=${q.end}&_fields=service_id,start,end`).expect(200)).body as
    { disabled_times: { service_id: number | null; start: string; end: string }[] }
  for (const group of summary.groups) {
    const service = group.service_id ?? q.service!
    const from = group.period_start ?? q.start
    const to = group.period_end ?? q.end
    const periods = disabled.disabled_times.filter((p) => p.service_id === null || p.service_id === service)
    expect(group.open_minutes, `${JSON.stringify(group)} of ${summaryUrl(q)}`).to.be.closeTo(openMinutesByBitmap(periods, from, to), 1e-6)
  }
}

/** 1,440 × days minus the minutes any period covers, marked minute by minute in wall-clock time. */
function openMinutesByBitmap(periods: { start: string; end: string }[], from: string, to: string): number {
  const days = daysInclusive(from, to)
  const covered = new Uint8Array(days * 1440)
  const base = dayToMs(from)
  const minuteOf = (iso: string) => (dayToMs(iso.slice(0, 10)) + timeToSeconds(iso.slice(11, 19)) * 1000 - base) / 60_000
  for (const period of periods) {
    for (let m = Math.max(0, Math.ceil(minuteOf(period.start))); m < Math.min(covered.length, minuteOf(period.end)); m++) covered[m] = 1
  }
  return covered.length - covered.reduce((sum, bit) => sum + bit, 0)
}

describe('GET summary/: the oracles over the demo data', function () {
  this.timeout(300_000)
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('summary_demo')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: 4000, services: 8, firstDay: '2025-01-01', years: 2, rulesPerService: 2 })) {
      await db.admin.query(statement)
    }
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('bookings per group equal slots/ cut to the group, and open_minutes equal 1,440 × days minus disabled-time/', async () => {
    await fc.assert(fc.asyncProperty(queryArb('2024-12-01', 800, [10, 11, 12, 13, 14, 15, 16, 17]), (q) => checkOracles(t.app, db, q)), { numRuns: 40 })
  })
})

const WORLD_SERVICES = [10, 11, 12, 13]
const WORLD_FIRST_DAY = '2026-03-01'
const WORLD_DAYS = 61

/** A small site: a few services in every post status, bookings with every quirk, rules of every kind. */
const worldArb = fc.record({
  statuses: fc.tuple(...WORLD_SERVICES.map(() => fc.constantFrom('publish', 'publish', 'draft', 'private', 'trash'))),
  bookings: fc.array(fc.record({
    service: fc.constantFrom(...WORLD_SERVICES, 99),
    status: fc.constantFrom('pending', 'booked', 'Booked ', 'BOOKED', 'reject', ' completed', 'expired', 'on_hold'),
    day: fc.integer({ min: 0, max: WORLD_DAYS - 1 }),
    from: fc.option(fc.integer({ min: 0, max: 47 }), { nil: null, freq: 6 }),
    length: fc.constantFrom(null, 0, 1, 2, 4, 10, 'to-24', 'past-midnight'),
    created: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null, freq: 6 }),
  }), { maxLength: 60 }),
  rules: fc.array(fc.record({
    service: fc.constantFrom(0, 0, ...WORLD_SERVICES, 99),
    type: fc.constantFrom('weekly', 'date'),
    weekday: fc.integer({ min: 0, max: 6 }),
    day: fc.integer({ min: -5, max: WORLD_DAYS }),
    days: fc.integer({ min: 0, max: 4 }),
    window: fc.option(fc.tuple(fc.integer({ min: 0, max: 95 }), fc.integer({ min: 1, max: 96 })), { nil: null }),
  }), { maxLength: 8 }),
})

type World = typeof worldArb extends fc.Arbitrary<infer W> ? W : never

const time = (quarter: number) => `${String(Math.floor(quarter / 4)).padStart(2, '0')}:${String((quarter % 4) * 15).padStart(2, '0')}:00`

async function loadWorld(db: TestDatabase, world: World): Promise<void> {
  for (const table of ['posts', 'booking_calendar_bookings', 'booking_calendar_disabled_times']) await db.truncate(table)
  await db.insert('posts', WORLD_SERVICES.map((id, i) => {
    const status = world.statuses[i]!
    return { ID: id, post_type: 'bc_service', post_name: `service-${id}${status === 'trash' ? '__trashed' : ''}`, post_title: `S${id}`, post_status: status }
  }))
  await db.insert('booking_calendar_bookings', world.bookings.map((b, id): Row => {
    const date = addDays(WORLD_FIRST_DAY, b.day)
    const from = b.from === null ? null : b.from * 1800
    let to: string | null = null
    if (from !== null && b.length !== null) {
      if (b.length === 'to-24') to = '24:00:00'
      else if (b.length === 'past-midnight') to = time(Math.floor(from / 900 / 2))
      else to = time(Math.min(95, from / 900 + (b.length as number) * 2))
    }
    return {
      id: id + 1, service_id: b.service, status: b.status, booking_date: date,
      time_from: from === null ? null : time(from / 900), time_to: to,
      created_at: b.created === null ? '0000-00-00 00:00:00' : `${addDays(date, -b.created)} 09:15:00`,
    }
  }))
  await db.insert('booking_calendar_disabled_times', world.rules.map((r, id): Row => ({
    id: id + 1, service_id: r.service, rule_type: r.type,
    weekday: r.type === 'weekly' ? r.weekday : null,
    date_from: r.type === 'date' ? addDays(WORLD_FIRST_DAY, r.day) : null,
    date_to: r.type === 'date' ? addDays(WORLD_FIRST_DAY, r.day + r.days) : null,
    // A window whose end is before its start runs past midnight; equal ends make no sense and are skipped.
    time_from: r.window === null ? null : time(r.window[0]),
    time_to: r.window === null ? null : r.window[1] === 96 ? '24:00:00' : time(r.window[1]),
    note: '',
  })))
}

describe('GET summary/: the oracles over generated sites', function () {
  this.timeout(300_000)
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('summary_gen')
    await db.setOption('timezone_string', 'Europe/Berlin')
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('bookings per group equal slots/ cut to the group, and open_minutes equal 1,440 × days minus disabled-time/', async () => {
    // The ranges start up to a month before the bookings and reach past them (Berlin's spring change of 29 March inside).
    const queries = fc.array(queryArb('2026-02-01', 90, WORLD_SERVICES), { minLength: 1, maxLength: 3 })
    await fc.assert(fc.asyncProperty(worldArb, queries, async (world, qs) => {
      await loadWorld(db, world)
      for (const q of qs) await checkOracles(t.app, db, q)
    }), { numRuns: 30 })
  })
})
