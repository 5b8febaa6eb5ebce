// Day arithmetic for the replace operations of changes/ (API.md, "GET changes/"):
// booking_date as the database sends it, "YYYY-MM-DD", and the periods the
// digest source keeps a digest of. The zero date and the odd day a lenient SQL
// mode lets in (PLUGIN_TABLES.md) are kept as they are, never moved to a real
// day. Pure.
import { PERIOD_CUTS, PERIODS_PER_MONTH, periodOfDay, type PeriodKind } from '../../db/booking-queries.ts'
import { addDays, DAY_MS, dayToMs, daysInMonth, pad2, pad4 } from './day-arithmetic.ts'

/** The day after a real day; a day 00 of a real month is followed by its day 01; any other unreal day is its own bound. */
export function dayAfter(day: string): string {
  if (!Number.isNaN(dayToMs(day))) return addDays(day, 1)
  return /^\d{4}-(0[1-9]|1[0-2])-00$/.test(day) ? `${day.slice(0, 8)}01` : day
}

/** The day before a real day, or undefined. */
export function dayBefore(day: string): string | undefined {
  return Number.isNaN(dayToMs(day)) ? undefined : addDays(day, -1)
}

/**
 * Where a page of whole days ends when `day` does not fit: the day before it,
 * but never before `lastSent`, the last day it holds (a day 00's day before
 * its day 01 is in the month before).
 */
export function lastDayBefore(day: string, lastSent: string): string {
  const before = dayBefore(day)
  return before !== undefined && before > lastSent ? before : lastSent
}

/**
 * A period of booking_date the digest source keeps one digest of (API.md, "GET
 * changes/"), by the feed's start and end: a day for at most a year, two days
 * of a month (01–02, 03–04, …, 29–30, 31) for at most two, four days (01–04,
 * …, 25–28, 29 to the end) for at most four, else a month; a day 00 goes with
 * the first. A changed booking costs the rows of its period; a period costs
 * the token 13 characters, so the token of a bounded feed stays under about
 * 5.5 KB (at most about 400 periods), and one of an unbounded feed grows by
 * 0.2 KB a year of months (decision 0037).
 */
export type { PeriodKind }

/** The most days between start and end (end − start) for each kind, shortest first. */
const KIND_BY_SPAN: ReadonlyArray<[PeriodKind, number]> = [['day', 365], ['two-days', 730], ['four-days', 1461]]

/** The periods of a feed with these bounds. */
export function periodKindOf(start: string | undefined, end: string | undefined): PeriodKind {
  if (start === undefined || end === undefined) return 'month'
  const days = (dayToMs(end) - dayToMs(start)) / DAY_MS
  if (!(days >= 0)) return 'month'
  return KIND_BY_SPAN.find(([, most]) => days <= most)?.[0] ?? 'month'
}

/** A day's period as a number (db/booking-queries.ts, beside its SQL twin periodOfDate). */
export { periodOfDay }

/** A period's month ("YYYY-MM") and place in it (0 to 30). */
function periodParts(period: number): { month: string; part: number } {
  const yearMonth = Math.floor(period / PERIODS_PER_MONTH)
  const month = `${pad4(Math.floor(yearMonth / 100))}-${pad2(yearMonth % 100)}`
  return { month, part: period % PERIODS_PER_MONTH }
}

/**
 * The booking_date strings of a period, as the database compares them: from
 * `lower` (inclusive) to `before` (exclusive). The range finds the rows by
 * index; periodOfDate keeps them exact.
 */
export function periodRange(period: number, kind: PeriodKind): { lower: string; before: string } {
  const { month, part } = periodParts(period)
  const { days, parts } = PERIOD_CUTS[kind]
  const lower = part === 0 ? `${month}-00` : `${month}-${pad2(part * days + 1)}`
  return { lower, before: part < parts - 1 ? `${month}-${pad2((part + 1) * days + 1)}` : `${nextMonth(month)}-00` }
}

/** "YYYY-MM" → the month after it; "0000-00" (the zero date's) → "0000-01". */
export function nextMonth(month: string): string {
  const year = Number(month.slice(0, 4))
  const number = Number(month.slice(5, 7))
  return number >= 12 ? `${pad4(year + 1)}-01` : `${month.slice(0, 4)}-${pad2(number + 1)}`
}

/**
 * The calendar days a replace of a whole period covers, at most to the
 * month's last. In a month 00 (the zero date's) the first period is its day
 * 00 alone: the zero date is "0000-00-00" to "0000-00-00". A period past the
 * month's last day (the 29th of a February of 28 days, a 31st of April) covers
 * that one day it names, for an odd day a lenient SQL mode let in.
 */
export function periodDays(period: number, kind: PeriodKind): { first: string; last: string } {
  const { month, part } = periodParts(period)
  const { days } = PERIOD_CUTS[kind]
  const number = Number(month.slice(5, 7))
  const real = number >= 1 && number <= 12
  if (part === 0 && !real) return { first: `${month}-00`, last: `${month}-00` }
  const first = part * days + 1
  const end = real ? daysInMonth(Number(month.slice(0, 4)), number) : 31
  const last = Math.max(first, Math.min((part + 1) * days, end))
  return { first: `${month}-${pad2(first)}`, last: `${month}-${pad2(last)}` }
}

/**
 * The day text after `day` in a month's order, odd days included (after
 * 2026-02-28 comes 2026-02-29, after a day 00 its day 01; after a day 31 the
 * next month's day 00): where a page of a period's replace goes on after the
 * day it ended with, so no day text of the period falls between two pages.
 */
export function dayTextAfter(day: string): string {
  const number = Number(day.slice(8, 10))
  return number >= 31 ? `${nextMonth(day.slice(0, 7))}-00` : `${day.slice(0, 8)}${pad2(number + 1)}`
}

/** Not a calendar day: a day 00, the zero date, a 30 February, a month 00 (what a lenient SQL mode let in). */
export function isOddDay(day: string): boolean {
  return Number.isNaN(dayToMs(day))
}

/**
 * Every booking_date text a period holds, odd ones too: from its day 00 (the
 * first period of a month) to its day 31 (the last). A replace of a period
 * whose odd days the client was sent covers them all, so a booking of an odd
 * day deleted since leaves the client too.
 */
export function periodAllDays(period: number, kind: PeriodKind): { first: string; last: string } {
  const { month, part } = periodParts(period)
  const { days, parts } = PERIOD_CUTS[kind]
  return { first: `${month}-${part === 0 ? '00' : pad2(part * days + 1)}`, last: `${month}-${part === parts - 1 ? '31' : pad2((part + 1) * days)}` }
}

/** The first day a replace of a period's head covers: its first calendar day, or an earlier odd day read in it (a day 00). */
export function firstDayOfPeriod(period: number, kind: PeriodKind, rows: ReadonlyArray<{ booking_date: string }>): string {
  const { first } = periodDays(period, kind)
  const earliest = rows[0]?.booking_date
  return earliest !== undefined && earliest < first ? earliest : first
}

/** The last day a replace of a period's tail covers: its last calendar day, or a later odd day read in it. */
export function lastDayOfPeriod(period: number, kind: PeriodKind, rows: ReadonlyArray<{ booking_date: string }>): string {
  const { last } = periodDays(period, kind)
  const latest = rows.at(-1)?.booking_date
  return latest !== undefined && latest > last ? latest : last
}
