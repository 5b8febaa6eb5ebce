// Calendar days as `YYYY-MM-DD` texts and as milliseconds of their 00:00 read
// as UTC, and TIME values as seconds: the plugin's DATE and TIME columns, counted
// without any zone. Pure functions only: no database, no clock.
import dayjs from 'dayjs'
import utc from 'dayjs/plugin/utc.js'

dayjs.extend(utc)

/** Milliseconds and seconds in a calendar day (a UTC day: dates here are counted in UTC). */
export const DAY_MS = 86_400_000
export const DAY_SECONDS = 86_400

export function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

export function pad4(n: number): string {
  return String(n).padStart(4, '0')
}

/** Milliseconds since the epoch of a `YYYY-MM-DD` date at 00:00, read as UTC; NaN when it is no date. */
export function dayToMs(date: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  if (!m) return NaN
  const year = Number(m[1]), month = Number(m[2]), day = Number(m[3])
  if (month < 1 || month > 12) return NaN
  // Day 0 and days past the month's end roll into another month: their day of the month differs.
  const d = new Date(0)
  d.setUTCFullYear(year, month - 1, day)
  return d.getUTCDate() === day ? d.getTime() : NaN
}

/** `YYYY-MM-DD` of milliseconds read as UTC. */
export function msToDay(ms: number): string {
  const d = new Date(ms)
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`
}

export function addDays(date: string, days: number): string {
  return msToDay(dayToMs(date) + days * DAY_MS)
}

/** Whole days from `from` to `to`, counting both ends (`2026-01-01`..`2026-01-01` is 1). */
export function daysInclusive(from: string, to: string): number {
  return Math.round((dayToMs(to) - dayToMs(from)) / DAY_MS) + 1
}

/** 0 = Sunday … 6 = Saturday, as the plugin's `weekday` column counts. */
export function weekdayOf(date: string): number {
  return new Date(dayToMs(date)).getUTCDay()
}

/**
 * Adds calendar months as a calendar does: the day is clamped to the end of a
 * shorter month, so 30 November plus three months is 28 February (29 in a leap year).
 */
export function addMonthsClamped(date: string, months: number): string {
  return dayjs.utc(date).add(months, 'month').format('YYYY-MM-DD')
}

/** Seconds of a TIME value (`09:30:00`, `24:00:00`, `-01:00:00`); NaN when it is none. */
export function timeToSeconds(time: string): number {
  const m = /^(-?)(\d{1,3}):(\d{2})(?::(\d{2}))?(?:\.\d+)?$/.exec(time)
  if (!m) return NaN
  const seconds = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0)
  return m[1] === '-' ? -seconds : seconds
}
