// What `GET summary/` means (API.md, "GET summary/"): group_by, the range, the
// periods, which services count, open minutes from the disabled-time rules, and
// the groups with their measures. Pure, except answerSummary, which reads the
// database through db/ and hands the rows to the pure functions.
import { createHash } from 'node:crypto'
import type { Db } from '../../db/connect.ts'
import { findRules, type RuleRow } from '../../db/disabled-times.ts'
import { readStartOfWeek } from '../../db/options.ts'
import { findAllServices } from '../../db/services.ts'
import { findSummaryRows, type SummaryQuery as SummaryRowsQuery } from '../../db/summary.ts'
import type { BoundedPool } from '../../db/bounded-pool.ts'
import { SummaryRows } from './summary-rows.ts'
import { invalidParams } from '../errors.ts'
import { DAY_MS, addDays, dayToMs, daysInclusive, msToDay, timeToSeconds, weekdayOf } from './day-arithmetic.ts'
import { remember } from './remember.ts'
import { mergeBusy } from './free-time.ts'
import { wallClockFor, type WallClock } from './wall-clock.ts'
import { todayInZone, zoneLabel, type SiteZone } from './zone-offsets.ts'
import { decodeSlug } from './slugs.ts'
import { checkRange, expandRules, readRule, type DateRange, type ValidRule } from './rules.ts'
import { resolveService, serviceLookups, type ServiceLookups } from './services.ts'
import { bookingFilter } from './slots.ts'
import type { RuleProblemLog } from './disabled-time.ts'

export const PERIODS = ['day', 'week', 'month', 'year'] as const
export type SummaryPeriod = (typeof PERIODS)[number]
export const GROUP_NAMES = ['service', 'status', ...PERIODS] as const
export type GroupName = (typeof GROUP_NAMES)[number]

export interface GroupBy {
  period: SummaryPeriod | undefined
  service: boolean
  status: boolean
}

const DAY_MINUTES = 1440

/** What the answer reads of summary/'s parameters, as routes/summary.ts parses them. */
export interface SummaryQuery {
  status?: string[] | undefined
  service?: string | undefined
  start?: string | undefined
  end?: string | undefined
  filter_by: 'booking_date' | 'created_date'
  group_by: GroupBy
}

/**
 * `group_by`'s names (already split at commas), in any order and letter case:
 * any of service and status, and at most one period. Omitted: month.
 */
export function parseGroupBy(names: string[] | undefined): GroupBy | { problem: string } {
  if (names === undefined) return { period: 'month', service: false, status: false }
  const items = names.map((name) => name.trim().toLowerCase()).filter((name) => name !== '')
  const unknown = items.filter((item) => !(GROUP_NAMES as readonly string[]).includes(item))
  if (items.length === 0 || unknown.length > 0) {
    const got = unknown.length > 0 ? ` (got ${unknown.map((u) => `"${u}"`).join(', ')})` : ''
    return { problem: `group_by must be one or more of ${GROUP_NAMES.join(', ')}, comma-separated${got}.` }
  }
  const periods = [...new Set(items.filter((item): item is SummaryPeriod => (PERIODS as readonly string[]).includes(item)))]
  if (periods.length > 1) {
    return { problem: `group_by may name at most one period of ${PERIODS.join(', ')} (got ${periods.join(' and ')}); keep one of them.` }
  }
  return { period: periods[0], service: items.includes('service'), status: items.includes('status') }
}

/** The answer's `group_by`: the period first, then service, then status (the order of the groups' keys). */
export function groupByNames(groupBy: GroupBy): GroupName[] {
  return [
    ...(groupBy.period ? [groupBy.period] : []),
    ...(groupBy.service ? ['service' as const] : []),
    ...(groupBy.status ? ['status' as const] : []),
  ]
}

/** WordPress's start_of_week option: 0 (Sunday) to 6; 1 (Monday, WordPress's default) when missing or anything else. */
export function startOfWeekFrom(value: string | undefined): number {
  const text = value?.trim() ?? ''
  return /^[0-6]$/.test(text) ? Number(text) : 1
}

function firstOfMonth(date: string): string {
  return `${date.slice(0, 7)}-01`
}

function lastOfMonth(date: string): string {
  const [year, month] = date.split('-').map(Number) as [number, number]
  return msToDay(Date.UTC(year, month, 0))
}

/**
 * summary/'s range (API.md): start defaults to the first day of the current
 * month, end to the last day of start's month; end alone gives start the first
 * day of end's month.
 */
export function resolveSummaryRange(start: string | undefined, end: string | undefined, today: string): DateRange {
  const from = start ?? firstOfMonth(end ?? today)
  return { start: from, end: end ?? lastOfMonth(from) }
}

/** A period of the range: `start`/`end` cut to it; `key` its whole period's first day (null without a period). */
export interface PeriodSlot {
  key: string | null
  start: string
  end: string
  /** Indexes of its first and last day among the range's days. */
  first: number
  last: number
}

/** The first day of the whole period a date is in. */
export function periodStartOf(date: string, period: SummaryPeriod, startOfWeek: number): string {
  switch (period) {
    case 'day': return date
    case 'week': return addDays(date, -((weekdayOf(date) - startOfWeek + 7) % 7))
    case 'month': return firstOfMonth(date)
    case 'year': return `${date.slice(0, 4)}-01-01`
  }
}

function nextPeriodStart(key: string, period: SummaryPeriod): string {
  switch (period) {
    case 'day': return addDays(key, 1)
    case 'week': return addDays(key, 7)
    case 'month': return addDays(lastOfMonth(key), 1)
    case 'year': return `${Number(key.slice(0, 4)) + 1}-01-01`
  }
}

/** Every period of the range, cut to it (a month of a range starting on the 15th starts on the 15th); one slot without a period. */
export function periodsOf(range: DateRange, period: SummaryPeriod | undefined, startOfWeek: number): PeriodSlot[] {
  const days = daysInclusive(range.start, range.end)
  if (!period) return [{ key: null, start: range.start, end: range.end, first: 0, last: days - 1 }]
  const slots: PeriodSlot[] = []
  // Compared as milliseconds, not as strings: the period after December 9999
  // begins in year 10000, which no YYYY-MM-DD string holds (dayToMs gives NaN),
  // and which a string comparison would put before 9999.
  const endMs = dayToMs(range.end)
  for (let key = periodStartOf(range.start, period, startOfWeek); dayToMs(key) <= endMs; key = nextPeriodStart(key, period)) {
    const start = key < range.start ? range.start : key
    const lastMs = dayToMs(nextPeriodStart(key, period)) - DAY_MS
    const end = lastMs < endMs ? msToDay(lastMs) : range.end
    slots.push({ key, start, end, first: daysInclusive(range.start, start) - 1, last: daysInclusive(range.start, end) - 1 })
  }
  return slots
}

/** Wall-clock milliseconds (site time read as UTC) of an ISO 8601 time with offset, as disabled-time/ writes them. */
function wallMsOf(iso: string): number {
  return dayToMs(iso.slice(0, 10)) + timeToSeconds(iso.slice(11, 19)) * 1000
}

/**
 * Open minutes per service and day over a span of days: 1,440 minus the
 * minutes covered by the union of the service's disabled periods (its own
 * rules and the site-wide ones), as expandRules, the expansion disabled-time/
 * answers with, gives them. Wall-clock minutes: every day has 1,440.
 */
export class OpenMinutes {
  readonly span: DateRange
  readonly #startMs: number
  readonly #days: number
  /** Per service: prefix sums of open minutes, [0] = 0, [i + 1] = days 0..i. */
  readonly #sums = new Map<number, Float64Array>()
  /** What a day outside the span is expanded from (see on). */
  readonly #rules: ValidRule[]
  readonly #ids: Set<number>
  readonly #clock: WallClock
  /** Open minutes of days outside the span, by `service|day`: numbers only, as this object may be cached. */
  readonly #outside = new Map<string, number>()

  /** The site-wide rules' periods, which every service shares. */
  readonly #siteWide: [number, number][]

  /** `eachService` false: only the site-wide periods now; build adds the services. */
  constructor(rules: ValidRule[], span: DateRange, serviceIds: Iterable<number>, clock: WallClock, eachService = true) {
    this.span = span
    this.#startMs = dayToMs(span.start)
    this.#days = daysInclusive(span.start, span.end)
    const ids = new Set(serviceIds)
    this.#rules = rules.filter((rule) => rule.serviceId === 0 || ids.has(rule.serviceId))
    this.#ids = ids
    this.#clock = clock
    this.#siteWide = this.#intervals(this.#rules.filter((rule) => rule.serviceId === 0))
    if (eachService) for (const id of ids) this.#addService(id)
  }

  /**
   * The same as the constructor, one service at a time with the event loop's
   * turn between them: a year of 200 rules for 50 services is over 100 ms of
   * work the first time, which held every other request of the worker
   * (docs/performance.md).
   */
  static async build(rules: ValidRule[], span: DateRange, serviceIds: Iterable<number>, clock: WallClock): Promise<OpenMinutes> {
    const open = new OpenMinutes(rules, span, serviceIds, clock, false)
    for (const id of open.#ids) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      open.#addService(id)
    }
    return open
  }

  /**
   * Wall-clock intervals of these rules' periods over the span, expanded from
   * the day before it (#subtract leaves that day out). Cut at the span's first
   * midnight, a window begun the evening before would start where that midnight
   * is read as an instant: on a day whose midnight is skipped (America/Santiago,
   * 2027-09-05) an hour later, so that day's open minutes depended on whether
   * the range started on it (1,020 against 960 for a 22:00 to 06:00 rule).
   * The day before 0000-01-01 has no date (no period would be read): from the span then.
   */
  #intervals(rules: ValidRule[]): [number, number][] {
    const dayBefore = addDays(this.span.start, -1)
    const span = { start: Number.isNaN(dayToMs(dayBefore)) ? this.span.start : dayBefore, end: this.span.end }
    return expandRules(rules, span, this.#clock, () => null).map((period) => [wallMsOf(period.start), wallMsOf(period.end)])
  }

  #addService(id: number): void {
    const open = new Float64Array(this.#days).fill(DAY_MINUTES)
    const own = this.#intervals(this.#rules.filter((rule) => rule.serviceId === id))
    for (const [from, to] of mergeIntervals([...this.#siteWide, ...own])) this.#subtract(open, from, to)
    const sums = new Float64Array(this.#days + 1)
    for (let i = 0; i < this.#days; i++) sums[i + 1] = sums[i]! + open[i]!
    this.#sums.set(id, sums)
  }

  /** Takes a covered interval's minutes off each day it touches. */
  #subtract(open: Float64Array, from: number, to: number): void {
    for (let day = Math.floor((from - this.#startMs) / DAY_MS); day < open.length; day++) {
      const dayStart = this.#startMs + day * DAY_MS
      if (dayStart >= to) break
      const covered = Math.min(to, dayStart + DAY_MS) - Math.max(from, dayStart)
      if (day >= 0 && covered > 0) open[day] = open[day]! - covered / 60_000
    }
  }

  /** Open minutes of a service over days `first`..`last` (indexes into the span). */
  sum(serviceId: number, first: number, last: number): number {
    const sums = this.#sums.get(serviceId)
    return sums ? sums[last + 1]! - sums[first]! : 0
  }

  /**
   * Open minutes of a service on one day, for a whole-day booking. With
   * filter_by=created_date that booking's own day can lie anywhere: a day
   * outside the span is expanded alone (rather than stretching the span to it,
   * which a booking dated in year 1000 would make centuries long), and a day
   * that cannot be read (the zero date) has no open minutes.
   */
  on(serviceId: number, date: string): number {
    return this.onDay(serviceId, dayToMs(date))
  }

  /** `on` for a day given as dayToMs gives it (NaN: a day that cannot be read). */
  onDay(serviceId: number, dayMs: number): number {
    if (Number.isNaN(dayMs) || !this.#ids.has(serviceId)) return 0
    const index = Math.round((dayMs - this.#startMs) / DAY_MS)
    if (index >= 0 && index < this.#days) return this.sum(serviceId, index, index)
    const date = msToDay(dayMs)
    return remember(this.#outside, 10_000, `${serviceId}|${date}`,
      () => new OpenMinutes(this.#rules, { start: date, end: date }, [serviceId], this.#clock).onDay(serviceId, dayMs))
  }
}

const openMinutesCache = new Map<string, OpenMinutes>()

/**
 * OpenMinutes of these rules, days and services, kept for the next request
 * that asks for the same (a dashboard refreshing its range): expanding a year
 * of 200 rules for 50 services costs tens of milliseconds. The key holds the
 * rule rows as read for this request, so a changed rule is a new key.
 */
export async function openMinutesFor(ruleRows: RuleRow[], rules: ValidRule[], span: DateRange, serviceIds: number[], zone: SiteZone): Promise<OpenMinutes> {
  const key = createHash('sha256').update(JSON.stringify([zoneLabel(zone), span, serviceIds, ruleRows])).digest('base64')
  const kept = openMinutesCache.get(key)
  if (kept) return kept
  const open = await OpenMinutes.build(rules, span, serviceIds, wallClockFor(zone))
  return remember(openMinutesCache, 32, key, () => open)
}

/** The union of intervals, sorted and with overlaps merged, so no minute is taken off twice (free-time.ts' mergeBusy). */
export function mergeIntervals(intervals: [number, number][]): [number, number][] {
  return mergeBusy(intervals) as [number, number][]
}

export interface SummaryMeasures {
  bookings: number
  all_day_bookings: number
  booked_minutes: number
  open_minutes: number | null
  occupancy: number | null
}

/** A group's keys: those of its dimensions only. */
export interface SummaryKeys {
  period_start?: string
  period_end?: string
  service_id?: number
  service_slug?: string | null
  status?: string
}

export type SummaryGroup = SummaryKeys & SummaryMeasures

export interface SummaryAnswer {
  groups: SummaryGroup[]
  totals: SummaryMeasures
  start: string
  end: string
  timezone: string
  group_by: GroupName[]
  filter_by: 'booking_date' | 'created_date'
}

/** A service of the answer: its ID, and its slug as a booking shows it (null when the post is gone). */
export interface SummaryService {
  id: number
  slug: string | null
}

/** Minutes with at most two decimals (a fraction only where stored times carry seconds). */
function roundMinutes(minutes: number): number {
  return Math.round(minutes * 100) / 100
}

/**
 * booked ÷ open, to 4 decimals, an exact half rounded up; null when open is 0
 * or unknown. Above 1 where bookings overlap. Both are minutes of at most two
 * decimals, so the quotient is taken of whole hundredths, in integers: in
 * floating point 18 / 120000 × 10000 is 1.4999999999999998, and 0.00015 came out 0.0001.
 */
export function occupancyOf(bookedMinutes: number, openMinutes: number | null): number | null {
  if (openMinutes === null || openMinutes === 0) return null
  const booked = Math.round(bookedMinutes * 100) * 10_000
  const open = Math.round(openMinutes * 100)
  // Integers far below 2^53 (a million years of minutes): the floor of their
  // float quotient is the true one, and the remainder is exact.
  const quotient = Math.floor(booked / open)
  const remainder = booked - quotient * open
  return (2 * remainder >= open ? quotient + 1 : quotient) / 10_000
}

export interface SummaryInput {
  groupBy: GroupBy
  range: DateRange
  startOfWeek: number
  /** The services of the answer, ascending by ID: the one named by `service`, or every published one and every one with a matching booking. */
  services: SummaryService[]
  rows: SummaryRows
  /** Open minutes of those services over the range (and, through `on`, on any whole-day booking's day). */
  open: OpenMinutes
  /** Whether open_minutes is given: not with filter_by=created_date nor with status in group_by. */
  withOpenMinutes: boolean
}

/** The groups (every combination, with zeros where nothing matched) and the totals. */
export function summarize(input: SummaryInput): { groups: SummaryGroup[]; totals: SummaryMeasures } {
  const { groupBy, range, services, rows, open, withOpenMinutes } = input
  const periods = periodsOf(range, groupBy.period, input.startOfWeek)
  const offset = daysInclusive(open.span.start, range.start) - 1
  // Status groups only for the statuses that occur (API.md).
  const statuses = groupBy.status ? [...new Set(rows.statuses.map(normalStatus))].sort() : [undefined]
  const serviceDim = groupBy.service ? services : [undefined]
  // Each day of the range: the index of its period.
  const periodOfDay: number[] = []
  periods.forEach((period, index) => { for (let day = period.first; day <= period.last; day++) periodOfDay[day] = index })

  // In the order period, service, status, so a row finds its group by arithmetic
  // on the three indexes. Each group is made field by field in the answer's
  // order (every group alike, as V8 likes them), its booked seconds kept apart.
  const groups: SummaryGroup[] = []
  for (const period of periods) {
    for (const service of serviceDim) {
      for (const status of statuses) {
        const group = {} as SummaryGroup
        if (groupBy.period) { group.period_start = period.start; group.period_end = period.end }
        if (service) { group.service_id = service.id; group.service_slug = service.slug }
        if (status !== undefined) group.status = status
        group.bookings = 0
        group.all_day_bookings = 0
        group.booked_minutes = 0
        group.open_minutes = withOpenMinutes
          ? roundMinutes((service ? [service] : services).reduce((sum, s) => sum + open.sum(s.id, period.first + offset, period.last + offset), 0))
          : null
        group.occupancy = null
        groups.push(group)
      }
    }
  }
  const bookedSeconds = new Float64Array(groups.length)
  const serviceIndexes = new Map(services.map((service, index) => [service.id, index]))
  const statusIndexes = new Map(statuses.map((status, index) => [status, index]))
  // Each stored status of the rows: the index of its group's status.
  const statusOfRows = rows.statuses.map((status) => statusIndexes.get(normalStatus(status)))

  // Per row (thousands for a year): numbers and Map lookups, no string keys built.
  const rangeStartMs = dayToMs(range.start)
  for (let row = 0; row < rows.length; row++) {
    const period = periodOfDay[Math.round((rows.dayMs[row]! - rangeStartMs) / DAY_MS)]
    const serviceId = rows.serviceId[row]!
    const service = groupBy.service ? serviceIndexes.get(serviceId) : 0
    const status = groupBy.status ? statusOfRows[rows.status[row]!] : 0
    // A row outside every period, service or status makes the index NaN, which names no group.
    const index = ((period ?? NaN) * serviceDim.length + (service ?? NaN)) * statuses.length + (status ?? NaN)
    const group = groups[index]
    if (!group) {
      const day = Number.isNaN(rows.dayMs[row]) ? 'a day that is no date' : msToDay(rows.dayMs[row]!)
      throw new Error(`a summary row fell outside every group: ${day} ${serviceId} ${rows.statuses[rows.status[row]!] ?? ''}`)
    }
    const allDayBookings = rows.allDayBookings[row]!
    group.bookings += rows.bookings[row]!
    group.all_day_bookings += allDayBookings
    bookedSeconds[index] = bookedSeconds[index]! + rows.bookedSeconds[row]!
    // A whole-day booking counts the open minutes of its day for its service.
    if (allDayBookings > 0) {
      bookedSeconds[index] = bookedSeconds[index] + allDayBookings * open.onDay(serviceId, rows.wholeDayMs[row]!) * 60
    }
  }

  const totalsOpen = withOpenMinutes
    ? roundMinutes(services.reduce((sum, s) => sum + open.sum(s.id, offset, offset + daysInclusive(range.start, range.end) - 1), 0))
    : null
  const totals = { bookings: 0, all_day_bookings: 0, booked_seconds: 0 }
  groups.forEach((group, index) => {
    totals.bookings += group.bookings
    totals.all_day_bookings += group.all_day_bookings
    totals.booked_seconds += bookedSeconds[index]!
    group.booked_minutes = roundMinutes(bookedSeconds[index]! / 60)
    group.occupancy = occupancyOf(group.booked_minutes, group.open_minutes)
  })
  const totalBooked = roundMinutes(totals.booked_seconds / 60)
  return {
    groups,
    totals: {
      bookings: totals.bookings, all_day_bookings: totals.all_day_bookings, booked_minutes: totalBooked,
      open_minutes: totalsOpen, occupancy: occupancyOf(totalBooked, totalsOpen),
    },
  }
}

function normalStatus(status: string | null): string {
  return (status ?? '').trim().toLowerCase()
}

/** The queries answerSummary makes: db/, or rows in memory in unit tests. */
export interface SummaryQueries extends ServiceLookups {
  readStartOfWeek: typeof readStartOfWeek
  findSummaryRows: typeof findSummaryRows
  findRules: typeof findRules
  findAllServices: typeof findAllServices
}

export const summaryQueries: SummaryQueries = { ...serviceLookups, readStartOfWeek, findSummaryRows, findRules, findAllServices }

/** Answers `GET summary/`: counts in the database, periods, services and open minutes here. */
export async function answerSummary(
  db: Db,
  pool: BoundedPool,
  params: SummaryQuery,
  options: { zone: SiteZone; now: number; maxRangeDays: number; problems: RuleProblemLog },
  queries: SummaryQueries = summaryQueries,
): Promise<SummaryAnswer> {
  const range = resolveSummaryRange(params.start, params.end, todayInZone(options.zone, options.now))
  const rangeProblem = checkRange(range, { start: params.start !== undefined, end: params.end !== undefined }, options.maxRangeDays)
  if (rangeProblem) throw invalidParams({ [rangeProblem.param]: rangeProblem.message })
  const groupBy = params.group_by

  const [service, startOfWeekText] = await Promise.all([
    params.service === undefined ? undefined : resolveService(db, params.service, queries),
    groupBy.period === 'week' ? queries.readStartOfWeek(db) : undefined,
  ])
  const startOfWeek = startOfWeekFrom(startOfWeekText)
  // The same filter as slots/ for the same parameters, so the counts agree with it.
  const filter = bookingFilter({ status: params.status, start: range.start, end: range.end, filter_by: params.filter_by }, service?.ID)
  // Both halves fold into the same columns as their rows arrive.
  const rows = new SummaryRows()
  const [, ruleRows, posts] = await Promise.all([
    Promise.all(splitByBookingDate({ filter, dateOf: params.filter_by, byStatus: groupBy.status })
      .map((part) => queries.findSummaryRows(db, pool, part, rows))),
    queries.findRules(db, service?.ID),
    // With a service, its row is the only one the answer names (as in domain/disabled-time.ts).
    service ? [service] : queries.findAllServices(db),
  ])

  const slugs = new Map(posts.map((post) => [post.ID, decodeSlug(post.post_name)]))
  // The services of the answer: the one named, else every published one and any other with a matching booking.
  const ids = service
    ? [service.ID]
    : [...new Set([...posts.filter((post) => post.post_status === 'publish').map((post) => post.ID), ...rows.serviceIds()])]
  const services = ids.sort((a, b) => a - b).map((id) => ({ id, slug: slugs.get(id) ?? null }))

  const rules: ValidRule[] = []
  for (const row of ruleRows) {
    const rule = readRule(row)
    if ('problem' in rule) options.problems.report(row.id, rule.problem)
    else rules.push(rule)
  }
  const open = await openMinutesFor(ruleRows, rules, range, ids, options.zone)
  const withOpenMinutes = params.filter_by !== 'created_date' && !groupBy.status
  const { groups, totals } = summarize({ groupBy, range, startOfWeek, services, rows, open, withOpenMinutes })
  rows.release()
  return {
    groups, totals, start: range.start, end: range.end, timezone: zoneLabel(options.zone),
    group_by: groupByNames(groupBy), filter_by: params.filter_by,
  }
}

/** Ranges of booking dates at least this many days long are counted in two halves at once. */
const SPLIT_MIN_DAYS = 62

/**
 * The booking-date range cut in two at a day, or the query whole. Each half
 * is its own statement on its own connection, so MariaDB reads a long range on
 * two cores (a year of a million bookings: 26 ms instead of 46); as a row is
 * one day, the halves' rows never share a group.
 */
export function splitByBookingDate(query: SummaryRowsQuery): SummaryRowsQuery[] {
  const { from, to } = query.filter.bookingDate ?? {}
  if (query.dateOf !== 'booking_date' || !from || !to) return [query]
  const days = daysInclusive(from, to)
  if (!(days > SPLIT_MIN_DAYS)) return [query]
  const lastOfFirstHalf = addDays(from, Math.floor((days - 1) / 2))
  return [
    { ...query, filter: { ...query.filter, bookingDate: { from, to: lastOfFirstHalf } } },
    { ...query, filter: { ...query.filter, bookingDate: { from: addDays(lastOfFirstHalf, 1), to } } },
  ]
}
