// Open minutes per service and day from the disabled-time rules (API.md,
// "GET summary/"), and the module cache that keeps them between requests.
import { createHash } from 'node:crypto'
import type { RuleRow } from '../../db/disabled-times.ts'
import { DAY_MS, addDays, dayToMs, daysInclusive, msToDay, timeToSeconds } from './day-arithmetic.ts'
import { remember } from './remember.ts'
import { mergeBusy } from './free-time.ts'
import { wallClockFor, type WallClock } from './wall-clock.ts'
import { zoneLabel, type SiteZone } from './zone-offsets.ts'
import { expandRules, type DateRange, type ValidRule } from './rules.ts'

const DAY_MINUTES = 1440
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
    this.#rules = rulesFor(rules, ids)
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
   * the day before it (#subtract leaves that day out), so a skipped midnight
   * cannot move a window begun the evening before (decision 0011). The day
   * before 0000-01-01 has no date: from the span then.
   */
  #intervals(rules: ValidRule[]): [number, number][] {
    const dayBefore = addDays(this.span.start, -1)
    const span = { start: Number.isNaN(dayToMs(dayBefore)) ? this.span.start : dayBefore, end: this.span.end }
    // Stryker disable next-line ArrowFunction: only the periods' start and end are read, never a slug
    return expandRules(rules, span, this.#clock, () => null).map((period) => [wallMsOf(period.start), wallMsOf(period.end)])
  }

  #addService(id: number): void {
    const open = new Float64Array(this.#days).fill(DAY_MINUTES)
    const own = this.#intervals(this.#rules.filter((rule) => rule.serviceId === id))
    for (const [from, to] of mergeIntervals([...this.#siteWide, ...own])) subtractCovered(open, this.#startMs, from, to)
    const sums = new Float64Array(this.#days + 1)
    for (let day = 1; day <= this.#days; day++) sums[day] = sums[day - 1]! + open[day - 1]!
    this.#sums.set(id, sums)
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

/** The rules that count for these services: the site-wide ones and each service's own. */
export function rulesFor(rules: ValidRule[], serviceIds: ReadonlySet<number>): ValidRule[] {
  return rules.filter((rule) => rule.serviceId === 0 || serviceIds.has(rule.serviceId))
}

/** Minutes per day, as OpenMinutes keeps them: indexable, with a length (a Float64Array there). */
export interface DayMinutes {
  [day: number]: number
  readonly length: number
}

/**
 * Takes the minutes of the interval `[from, to)` (wall-clock milliseconds, not
 * empty) off each day of `open` it covers, day 0 beginning at `startMs`: the
 * days it covers within `open` only, none before or after them.
 */
export function subtractCovered(open: DayMinutes, startMs: number, from: number, to: number): void {
  const first = Math.max(0, Math.floor((from - startMs) / DAY_MS))
  const end = Math.min(open.length, Math.ceil((to - startMs) / DAY_MS))
  for (let day = first; day < end; day++) {
    const dayStart = startMs + day * DAY_MS
    open[day] = open[day]! - (Math.min(to, dayStart + DAY_MS) - Math.max(from, dayStart)) / 60_000
  }
}

/** The union of intervals, sorted and with overlaps merged, so no minute is taken off twice (free-time.ts' mergeBusy). */
export function mergeIntervals(intervals: [number, number][]): [number, number][] {
  return mergeBusy(intervals) as [number, number][]
}
