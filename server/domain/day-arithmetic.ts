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

/**
 * Milliseconds since the epoch of a `YYYY-MM-DD` date at 00:00, read as UTC
 * (the proleptic Gregorian calendar, years 0000 to 9999); NaN when it is no
 * date. Read digit by digit and counted, without a regular expression or a
 * Date: it runs for every whole-day row of a summary and every day of a rule's
 * expansion, where the match and its strings were a megabyte a request
 * (docs/performance.md).
 */
export function dayToMs(date: string): number {
  if (date.length !== 10 || date.charCodeAt(4) !== DASH || date.charCodeAt(7) !== DASH) return NaN
  const year = digitsAt(date, 0, 4)
  const month = digitsAt(date, 5, 2)
  const day = digitsAt(date, 8, 2)
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return NaN
  return daysFromCivil(year, month, day) * DAY_MS
}

const DASH = 0x2d

/** The number written by `count` ASCII digits at `at`; -1 when any of them is no digit. */
function digitsAt(text: string, at: number, count: number): number {
  let number = 0
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - 0x30
    if (digit < 0 || digit > 9) return -1
    number = number * 10 + digit
  }
  return number
}

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** The days of a month (1 to 12) of the proleptic Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : MONTH_DAYS[month - 1]!
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar, by
 * counting whole 400-year cycles from 0000-03-01 (H. Hinnant, "chrono-Compatible
 * Low-Level Date Algorithms", days_from_civil).
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
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

/**
 * Seconds of a TIME value (`09:30:00`, `24:00:00`, `-01:00:00`, `838:59:59`; the
 * seconds may be left out, and a fraction is dropped); NaN when it is none.
 * Read character by character, as dayToMs is: it runs for every period of an
 * expanded rule.
 */
export function timeToSeconds(time: string): number {
  const negative = time.charCodeAt(0) === DASH
  let at = negative ? 1 : 0
  let hours = 0
  const hoursStart = at
  while (at - hoursStart < 3 && isDigitAt(time, at)) hours = hours * 10 + time.charCodeAt(at++) - 0x30
  if (at === hoursStart || time.charCodeAt(at) !== COLON) return NaN
  const minutes = digitsAt(time, at + 1, 2)
  if (minutes < 0) return NaN
  at += 3
  let seconds = 0
  if (time.charCodeAt(at) === COLON) {
    seconds = digitsAt(time, at + 1, 2)
    if (seconds < 0) return NaN
    at += 3
  }
  if (time.charCodeAt(at) === DOT) {
    const fractionStart = ++at
    while (isDigitAt(time, at)) at++
    if (at === fractionStart) return NaN
  }
  if (at !== time.length) return NaN
  const total = hours * 3600 + minutes * 60 + seconds
  return negative ? -total : total
}

const COLON = 0x3a
const DOT = 0x2e

function isDigitAt(text: string, at: number): boolean {
  const code = text.charCodeAt(at)
  return code >= 0x30 && code <= 0x39
}
