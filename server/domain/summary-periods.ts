// summary/'s period calendar (API.md, "GET summary/"): the default range, and
// the days, weeks, months and years of a range, cut to it. Pure.
import { DAY_MS, addDays, dayToMs, daysInclusive, msToDay, weekdayOf } from './day-arithmetic.ts'
import type { DateRange } from './rules.ts'

export const PERIODS = ['day', 'week', 'month', 'year'] as const
export type SummaryPeriod = (typeof PERIODS)[number]

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
  let key = periodStartOf(range.start, period, startOfWeek)
  // The first period starts with the range, any other on its key.
  let start = range.start
  while (dayToMs(key) <= endMs) {
    const next = nextPeriodStart(key, period)
    const nextMs = dayToMs(next)
    // The last period ends with the range (after which nextMs may be NaN), any other the day before the next one.
    const end = nextMs <= endMs ? msToDay(nextMs - DAY_MS) : range.end
    slots.push({ key, start, end, first: daysInclusive(range.start, start) - 1, last: daysInclusive(range.start, end) - 1 })
    key = next
    start = next
  }
  return slots
}
