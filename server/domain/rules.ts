// Disabled-time rules expanded into the concrete periods of a date range
// (API.md, "GET disabled-time/"; PLUGIN_TABLES.md, "Disabled times"). Pure.
import type { RuleRow } from '../../db/disabled-times.ts'
import { DAY_MS, DAY_SECONDS, addMonthsClamped, dayToMs, daysInclusive, msToDay, timeToSeconds } from './day-arithmetic.ts'
import { type WallClock } from './wall-clock.ts'

export interface DisabledPeriod {
  rule_id: number
  /** null for a site-wide rule (service_id 0). */
  service_id: number | null
  service_slug: string | null
  type: 'weekly' | 'date'
  start: string
  end: string
  all_day: boolean
  note: string
}

/**
 * A period as expandRules makes it: the fields of disabled-time/'s JSON, and the
 * day its window starts before the cut to the range. A feed event's UID takes
 * that day (RFC 5545 wants it unique in the feed and the same in every answer):
 * the cut start would give a window begun the evening before the range the UID
 * of the range's first day, which that day's own window has too.
 */
export interface ExpandedPeriod extends DisabledPeriod {
  /** `YYYY-MM-DD`; not sent in JSON. */
  windowDay: string
}

/** The period without what JSON does not send. Field by field: a rest copy (`{ windowDay, ...period }`) made the JSON of npm run bench:rules a third slower (46 against 34 ms). */
export function periodFields(period: ExpandedPeriod): DisabledPeriod {
  return {
    rule_id: period.rule_id, service_id: period.service_id, service_slug: period.service_slug, type: period.type,
    start: period.start, end: period.end, all_day: period.all_day, note: period.note,
  }
}

/** A rule that makes sense, with its dates and window read. */
export interface ValidRule {
  id: number
  serviceId: number
  type: 'weekly' | 'date'
  weekday: number | undefined
  /** Inclusive day bounds, as milliseconds of midnight read as UTC; undefined is open (weekly only). */
  fromDay: number | undefined
  toDay: number | undefined
  /** Seconds after midnight; `to` may pass 86,400 for a window past midnight. Whole day: 0 to 86,400. */
  window: { from: number; to: number }
  allDay: boolean
  note: string
}

/**
 * Reads one rule, or says why it makes no sense (PLUGIN_TABLES.md lists the
 * cases): such rules are skipped and logged, and never fail a request.
 */
export function readRule(row: RuleRow): ValidRule | { problem: string } {
  const type = row.rule_type.trim().toLowerCase()
  if (type !== 'weekly' && type !== 'date') return { problem: `rule_type "${row.rule_type}" is neither weekly nor date` }
  const weekday = row.weekday ?? NaN
  if (type === 'weekly' && !(Number.isInteger(weekday) && weekday >= 0 && weekday <= 6)) {
    return { problem: 'a weekly rule needs a weekday from 0 to 6' }
  }
  if (type === 'date' && row.date_from === null) return { problem: 'a date rule needs date_from' }
  const fromDay = row.date_from === null ? undefined : dayToMs(row.date_from)
  const toDay = row.date_to === null ? (type === 'date' ? fromDay : undefined) : dayToMs(row.date_to)
  if (Number.isNaN(fromDay) || Number.isNaN(toDay)) return { problem: 'date_from or date_to is not a date' }
  // A missing date_from or date_to is an open end, which no date is before.
  if ((toDay ?? Infinity) < (fromDay ?? -Infinity)) return { problem: 'date_to is before date_from' }
  let window = { from: 0, to: DAY_SECONDS }
  if (row.time_from !== null || row.time_to !== null) {
    if (row.time_from === null || row.time_to === null) return { problem: 'one of time_from and time_to is set and the other is NULL' }
    const from = timeToSeconds(row.time_from)
    const to = timeToSeconds(row.time_to)
    if (Number.isNaN(from) || Number.isNaN(to) || from < 0 || to < 0 || from >= DAY_SECONDS || to > DAY_SECONDS) {
      return { problem: 'time_from or time_to is not a time of day' }
    }
    if (from === to) return { problem: 'time_to equals time_from' }
    // A window that ends before it starts runs past midnight into the next day.
    // Stryker disable next-line EqualityOperator: to === from was refused just above
    window = { from, to: to < from ? DAY_SECONDS + to : to }
  }
  return {
    id: row.id,
    serviceId: row.service_id,
    type,
    weekday: type === 'weekly' ? row.weekday! : undefined,
    fromDay,
    toDay,
    window,
    allDay: row.time_from === null,
    note: row.note,
  }
}

/** The rules of these rows that make sense, in their order; each other row is skipped and its problem reported. */
export function readRules(rows: readonly RuleRow[], problems: { report(ruleId: number, problem: string): void }): ValidRule[] {
  const rules: ValidRule[] = []
  for (const row of rows) {
    const rule = readRule(row)
    if ('problem' in rule) problems.report(row.id, rule.problem)
    else rules.push(rule)
  }
  return rules
}

/** The range of a request, `YYYY-MM-DD` both, inclusive. */
export interface DateRange {
  start: string
  end: string
}

/**
 * API.md's default range: `start` defaults to today in the site's zone, `end`
 * to `start` plus three calendar months (clamped to the end of a shorter month).
 */
export function resolveRange(start: string | undefined, end: string | undefined, today: string): DateRange {
  const from = start ?? today
  return { start: from, end: end ?? notPastLastRangeDay(addMonthsClamped(from, 3)) }
}

/**
 * The last day a range whose times are written out (disabled-time/, the
 * calendar feeds) may reach: a window on 9999-12-31 can end at midnight, in
 * the year 10000, which an ISO 8601 date or an iCalendar DATE-TIME cannot be
 * written in. summary/ writes days only, and keeps 9999-12-31.
 */
export const LAST_RANGE_DAY = '9999-12-30'

/** A default end, stopped at LAST_RANGE_DAY (addMonthsClamped past 9999 gives `10000-…`, which sorts before it as text). */
export function notPastLastRangeDay(date: string): string {
  // Stryker disable next-line EqualityOperator: at LAST_RANGE_DAY itself both answers are LAST_RANGE_DAY
  return /^\d{4}-/.test(date) && date <= LAST_RANGE_DAY ? date : LAST_RANGE_DAY
}

/** A range's problem: the parameter to change, and a sentence that says how. */
export type RangeProblem = { param: 'start' | 'end'; message: string }

/** checkRange for a range whose times are written out: it must also end by LAST_RANGE_DAY. */
export function checkTimedRange(range: DateRange, given: { start: boolean; end: boolean }, maxDays: number): RangeProblem | undefined {
  for (const param of ['start', 'end'] as const) {
    if (range[param] > LAST_RANGE_DAY) {
      return { param, message: `${param} must be ${LAST_RANGE_DAY} or earlier: a time on the last day of 9999 can end in the year 10000, which the answer's dates cannot be written in.` }
    }
  }
  return checkRange(range, given, maxDays)
}

/** Why a range cannot be served, naming the parameter to change; undefined when it is fine. */
export function checkRange(range: DateRange, given: { start: boolean; end: boolean }, maxDays: number): RangeProblem | undefined {
  if (range.start > range.end) {
    return given.start
      ? { param: 'start', message: `start must not be after end (${range.start} is after ${range.end}).` }
      : { param: 'end', message: `end must not be before start, which defaults to today (${range.start}).` }
  }
  const days = daysInclusive(range.start, range.end)
  if (days > maxDays) {
    return {
      param: given.end ? 'end' : 'start',
      message: `The range from ${range.start} to ${range.end} spans ${days} days; at most ${maxDays} are allowed. Choose a later start or an earlier end.`,
    }
  }
  return undefined
}

interface RawPeriod {
  rule: ValidRule
  /** Wall-clock milliseconds (site time read as UTC), already cut to the range. */
  startMs: number
  endMs: number
  /** Where the window starts before the cut, in the same milliseconds. */
  windowStartMs: number
  /** The start as an instant, for the order. */
  startUtc: number
}

/**
 * The days (midnights) on which a rule's window starts and which may reach into
 * the range `[rangeStartMs, rangeEndMs)`: the day before it only for a window
 * past midnight. Not for days off (a date rule all day): see daysOffEndMs.
 */
export function ruleDays(rule: ValidRule, rangeStartMs: number, rangeEndMs: number): number[] {
  // A window past midnight that starts the day before the range still reaches into it.
  const reachBack = rule.window.to > DAY_SECONDS ? DAY_MS : 0
  let first = Math.max(rangeStartMs - reachBack, rule.fromDay ?? -Infinity)
  const last = Math.min(rangeEndMs - DAY_MS, rule.toDay ?? Infinity)
  const days: number[] = []
  if (rule.type === 'weekly') {
    const weekday = new Date(first).getUTCDay()
    first += ((rule.weekday! - weekday + 7) % 7) * DAY_MS
    for (let day = first; day <= last; day += 7 * DAY_MS) days.push(day)
  } else {
    for (let day = first; day <= last; day += DAY_MS) days.push(day)
  }
  return days
}

/**
 * Where the days off of a date rule all day end (the day after its last day),
 * when they overlap the range `[rangeStartMs, rangeEndMs)`; undefined when
 * they lie wholly before or after it.
 */
export function daysOffEndMs(rule: ValidRule, rangeStartMs: number, rangeEndMs: number): number | undefined {
  const endMs = rule.toDay! + DAY_MS
  return rule.fromDay! < rangeEndMs && endMs > rangeStartMs ? endMs : undefined
}

/**
 * Expands rules into the periods that overlap `[range.start 00:00, day after
 * range.end 00:00)`, each cut to it, in API.md's order: start, then service_id
 * (site-wide first), then rule_id.
 */
export function expandRules(
  rules: ValidRule[],
  range: DateRange,
  clock: WallClock,
  slugOf: (serviceId: number) => string | null,
): ExpandedPeriod[] {
  const rangeStartMs = dayToMs(range.start)
  // The day after the range by arithmetic: addDays has no date after 9999-12-31 (a range ending there would otherwise give no periods).
  const rangeEndMs = dayToMs(range.end) + DAY_MS
  const raw: RawPeriod[] = []
  // Cut to the range. The instant is part of the period as it is made: adding it
  // by a copy ({ ...period, startUtc }) made V8 a new map for each period,
  // hundreds per request (docs/performance.md).
  const addPeriod = (rule: ValidRule, fromMs: number, toMs: number) => {
    const startMs = Math.max(fromMs, rangeStartMs)
    const endMs = Math.min(toMs, rangeEndMs)
    const startUtc = clock.instantOf(startMs)
    // A window (or its part in the range) that lies in a spring-forward gap covers no
    // instant: its start, moved forward by the gap, is at or past its end. No period.
    if (clock.instantOf(endMs) <= startUtc) return
    raw.push({ rule, startMs, endMs, windowStartMs: fromMs, startUtc })
  }
  for (const rule of rules) {
    const windowFrom = rule.window.from * 1000
    const windowTo = rule.window.to * 1000
    if (rule.type === 'date' && rule.allDay) {
      // Days off: one period from the first day's 00:00 to the day after the last day.
      const endMs = daysOffEndMs(rule, rangeStartMs, rangeEndMs)
      if (endMs !== undefined) addPeriod(rule, rule.fromDay!, endMs)
      continue
    }
    // Every window of these days reaches into the range (see ruleDays): cut to it, each is a period.
    for (const day of ruleDays(rule, rangeStartMs, rangeEndMs)) addPeriod(rule, day + windowFrom, day + windowTo)
  }
  // By instant, not wall clock: a start in a spring-forward gap moves forward by the gap.
  raw.sort((a, b) => a.startUtc - b.startUtc || a.rule.serviceId - b.rule.serviceId || a.rule.id - b.rule.id)
  return raw.map(({ rule, startMs, endMs, windowStartMs }) => ({
    rule_id: rule.id,
    service_id: rule.serviceId === 0 ? null : rule.serviceId,
    service_slug: rule.serviceId === 0 ? null : slugOf(rule.serviceId),
    type: rule.type,
    start: clock.isoAt(startMs, 0),
    end: clock.isoAt(endMs, 0),
    all_day: rule.allDay,
    note: rule.note,
    windowDay: msToDay(windowStartMs),
  }))
}
