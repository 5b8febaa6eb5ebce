// The free time of a service (API.md, "GET availability/"; docs/availability.md):
// the range, less its disabled periods, less the time its blocking bookings
// take. Pure. Everything here is on the site's wall clock, as milliseconds of
// site time read as UTC (day-arithmetic.ts' dayToMs): the plugin stores dates
// and times that way, and summary/ counts its open minutes that way, so a
// day has 1,440 minutes here too, whatever the clocks do that day.

import { DAY_MS, DAY_SECONDS } from './day-arithmetic.ts'

/** `[from, to)` in wall-clock milliseconds. */
export type Interval = readonly [number, number]

const MINUTE_MS = 60_000
const DAY_MINUTES = 1440

/** The union of intervals, sorted, touching and overlapping ones merged, empty ones dropped. */
export function mergeBusy(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter(([from, to]) => to > from).sort((a, b) => a[0] - b[0])
  const merged: [number, number][] = []
  for (const [from, to] of sorted) {
    const last = merged.at(-1)
    if (last && from <= last[1]) last[1] = Math.max(last[1], to)
    else merged.push([from, to])
  }
  return merged
}

/** `range` less every busy interval: the free windows, in order; a window that crosses midnight is one window. */
export function subtractBusy(range: Interval, busy: readonly Interval[]): Interval[] {
  const free: Interval[] = []
  let at = range[0]
  for (const [from, to] of mergeBusy(busy)) {
    // Stryker disable next-line EqualityOperator: a busy time starting at the range's end adds the same last window, whether it stops the loop or not
    if (from >= range[1]) break
    if (from > at) free.push([at, from])
    at = Math.max(at, to)
  }
  if (at < range[1]) free.push([at, range[1]])
  return free
}

/** Wall-clock minutes of an interval, as summary/ counts them (seconds count as fractions). */
export function wallMinutes([from, to]: Interval): number {
  return (to - from) / MINUTE_MS
}

/** A booking as the plugin stores it: TIME values as seconds after midnight (null: NULL). */
export interface StoredBooking {
  /** dayToMs of booking_date. */
  dayMs: number
  fromSeconds: number | null
  toSeconds: number | null
}

/**
 * The time a blocking booking takes, as its slots/ record has it: a whole-day
 * booking its day; a slot past midnight into the next day; `24:00:00` to the
 * next midnight; no end (time_to NULL) the rest of its day, so that no time is
 * offered that may be taken; an end equal to the start nothing (undefined).
 */
export function bookingInterval(booking: StoredBooking): Interval | undefined {
  const { dayMs, fromSeconds, toSeconds } = booking
  if (Number.isNaN(dayMs)) return undefined
  if (fromSeconds === null) return [dayMs, dayMs + DAY_MS]
  const from = dayMs + fromSeconds * 1000
  if (toSeconds === null) return [from, Math.max(from, dayMs + DAY_MS)]
  const to = dayMs + (toSeconds < fromSeconds ? DAY_SECONDS + toSeconds : toSeconds) * 1000
  return to > from ? [from, to] : undefined
}

/** A bookable start: `[start, end)` in wall-clock milliseconds. */
export type BookableStart = Interval

/**
 * The bookable start times of `windows` (in order, disjoint): wall-clock times
 * `00:00 + k × step` of each day from `firstDayMs` up to `endMs`, where
 * `[start, start + duration)` lies wholly in one window, and that exist on the
 * site's clock (`exists`: false for a time skipped when clocks go forward; a
 * time that occurs twice is one wall-clock time, listed once). At most `limit`.
 * Lazy: a year of 15-minute starts is never held at once.
 */
export function* bookableStarts(
  windows: readonly Interval[],
  options: { firstDayMs: number; endMs: number; durationMs: number; stepMs: number; limit: number; exists: (wallMs: number) => boolean },
): Generator<BookableStart> {
  const { firstDayMs, endMs, durationMs, stepMs, exists } = options
  let left = options.limit
  for (const [from, to] of windows) {
    // The first grid time at or after the window's start: grids start again each midnight.
    let day = firstDayMs + Math.floor((from - firstDayMs) / DAY_MS) * DAY_MS
    let k = Math.ceil((from - day) / stepMs)
    for (;;) {
      let start = day + k * stepMs
      if (start >= day + DAY_MS) {
        day += DAY_MS
        k = 0
        start = day
      }
      if (start >= endMs || start + durationMs > to) break
      if (exists(start)) {
        yield [start, start + durationMs]
        if (--left === 0) return
      }
      k++
    }
  }
}

/**
 * The most start times `bookableStarts` can give one service over `days` whole
 * days (AVAILABILITY_MAX_ITEMS, API.md "GET availability/"): every grid time
 * `00:00 + k × step` of each day, less the last day's that would end past the
 * range. It is the count of a service free all the range long (a time skipped
 * when clocks go forward only takes one away), known before anything is read.
 */
export function mostBookableStarts(days: number, durationMinutes: number, stepMinutes: number): number {
  if (days <= 0) return 0
  const perDay = Math.ceil(DAY_MINUTES / stepMinutes)
  const lastDay = durationMinutes > DAY_MINUTES ? 0 : Math.floor((DAY_MINUTES - durationMinutes) / stepMinutes) + 1
  return (days - 1) * perDay + lastDay
}
