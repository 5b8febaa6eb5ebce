// Dates and times of the plugin's tables are wall-clock values in the site's
// time zone (PLUGIN_TABLES.md, "Site settings"). WallClock turns them into
// ISO 8601 strings with the site's UTC offset on that date (API.md, "GET slots/").
import { DAY_MS, DAY_SECONDS, dayToMs, msToDay, pad2, pad4, timeToSeconds } from './day-arithmetic.ts'
import { remember } from './remember.ts'
import { dayInstants, formatInstant, formatOffset, offsetAt, zoneLabel, type SiteZone } from './zone-offsets.ts'

/** One calendar day, ready for the ISO strings of its wall-clock times. */
export interface ClockDay {
  /** Milliseconds of its 00:00, read as UTC. */
  ms: number
  /** `YYYY-MM-DDT`. */
  prefix: string
  /** Its UTC offset as text (`+01:00`) when that holds all day; null on a day whose offset changes. */
  offset: string | null
}

/**
 * Converts the wall-clock times of the plugin's tables into ISO 8601 strings
 * with the site's offset. Offsets are looked up once per calendar day and kept:
 * a day without an offset change (all but two a year) needs no further look-up,
 * so a million bookings cost a few thousand zone look-ups, not a million.
 *
 * The per-booking methods (day, timeSeconds, isoOfDay, isoDateTime) read the
 * digits of the usual `YYYY-MM-DD`, `HH:MM:SS` and DATETIME texts in place and
 * find a day by a number: these run three times per booking of a
 * million-booking export, where a look-up by freshly read text, and the slices
 * to make it, cost a fifth of the service's time (docs/performance.md).
 * Any other text takes the general way (dayToMs, timeToSeconds), with the same answers.
 * `lookUp` is offsetAt in the zone (tests count its calls).
 */
export class WallClock {
  readonly #zone: SiteZone
  readonly #lookUp: (utcMs: number) => number
  /** Per day: its one offset in minutes, or null when the offset changes near it. */
  readonly #dayOffsets = new Map<number, number | null>()
  /** On days whose offset changes: each wall-clock time's answer, as these need several zone look-ups. */
  readonly #changeDayTimes = new Map<number, string>()
  /** Per day: its `YYYY-MM-DD`. */
  readonly #dayTexts = new Map<number, string>()
  /** Per date as the number YYYYMMDD: the day, or null when it is no date (`2026-02-30`, the zero date). */
  readonly #daysByNumber = new Map<number, ClockDay | null>()

  constructor(zone: SiteZone, lookUp: (utcMs: number) => number = (utcMs) => offsetAt(zone, utcMs)) {
    this.#zone = zone
    this.#lookUp = lookUp
  }

  get zone(): SiteZone {
    return this.#zone
  }

  /** ISO 8601 of a date plus seconds after its midnight (may pass 24:00 into the next days). */
  isoAt(dayMs: number, secondsAfterMidnight: number): string {
    const wallMs = dayMs + secondsAfterMidnight * 1000
    const day = Math.floor(wallMs / DAY_MS) * DAY_MS
    const offset = remember(this.#dayOffsets, 20_000, day, this.#steadyOffset)
    // A steady day prints its wall-clock time as it is, with the day's offset:
    // three remembered pieces, no Date (the answer of formatInstant, measured at
    // a quarter of the cost of a million-row answer's mapping when built anew).
    if (offset !== null) return `${remember(this.#dayTexts, 20_000, day, msToDay)}T${timeOfDayText(wallMs - day)}${offsetText(offset)}`
    return remember(this.#changeDayTimes, 20_000, wallMs, this.#changeDayIso)
  }

  /**
   * wallClockToInstant(zone, wallMs).utcMs, by the day's remembered offset on
   * a day whose offset does not change: expanding a year of rules asked for
   * tens of thousands of instants, each three zone look-ups, and held the event
   * loop for over 60 ms (docs/performance.md).
   */
  instantOf(wallMs: number): number {
    const day = Math.floor(wallMs / DAY_MS) * DAY_MS
    const offset = remember(this.#dayOffsets, 20_000, day, this.#steadyOffset)
    return offset !== null ? wallMs - offset * 60_000 : this.#changeDayInstant(wallMs).utcMs
  }

  /** ISO 8601 of a DATE and TIME pair as the plugin stores them; undefined when either is no value. */
  iso(date: string, time: string): string | undefined {
    const dayMs = this.dayMs(date)
    const seconds = this.seconds(time)
    if (Number.isNaN(dayMs) || Number.isNaN(seconds)) return undefined
    return this.isoAt(dayMs, seconds)
  }

  /** The day of a DATE value (`YYYY-MM-DD`); null when it is no date. */
  day(date: string): ClockDay | null {
    // dayToMs reads nothing but YYYY-MM-DD, so any other text is no date either;
    // a text of that length but not that form is the number -1, no date.
    return date.length === 10 ? this.dayOfNumber(dateNumberAt(date, 0)) : null
  }

  /** Seconds of a TIME value (timeToSeconds); NaN when it is none. */
  timeSeconds(time: string): number {
    const seconds = readTimeSeconds(time)
    // Stryker disable next-line ConditionalExpression: read the general way, every time has the same answer, only slower
    return seconds !== -1 ? seconds : this.seconds(time)
  }

  /** ISO 8601 of a day plus seconds after its midnight: isoAt, without a look-up on a steady day. */
  isoOfDay(day: ClockDay, secondsAfterMidnight: number): string {
    if (day.offset !== null && secondsAfterMidnight >= 0 && secondsAfterMidnight < DAY_SECONDS) {
      return day.prefix + timeOfDayText(secondsAfterMidnight * 1000) + day.offset
    }
    return this.isoAt(day.ms, secondsAfterMidnight)
  }

  // Dates and times in other forms are parsed once each.
  readonly #days = new Map<string, number>()
  readonly #times = new Map<string, number>()

  /** dayToMs, remembered. */
  dayMs(date: string): number {
    return remember(this.#days, 50_000, date, dayToMs)
  }

  /** timeToSeconds, remembered. */
  seconds(time: string): number {
    return remember(this.#times, 100_000, time, timeToSeconds)
  }

  /** ISO 8601 of a DATETIME value; undefined for the zero date or anything else that is no date. */
  isoDateTime(value: string): string | undefined {
    const read = readDateTimeNumber(value)
    // Stryker disable next-line ConditionalExpression,BlockStatement: read the general way, every value has the same answer, only slower
    if (read !== -1) {
      const day = this.dayOfNumber(Math.floor(read / DATE_TIME_SCALE))
      return day === null ? undefined : this.isoOfDay(day, read % DATE_TIME_SCALE)
    }
    const space = value.indexOf(' ')
    if (space === -1) return this.iso(value, '00:00:00')
    return this.iso(value.slice(0, space), value.slice(space + 1))
  }

  /** The day of the date YYYYMMDD given as that number; null when it is no date (`20260230`, the zero date, -1). */
  dayOfNumber(number: number): ClockDay | null {
    let day = this.#daysByNumber.get(number)
    if (day === undefined) {
      const ms = dayToMs(`${pad4(Math.floor(number / 10_000))}-${pad2(Math.floor(number / 100) % 100)}-${pad2(number % 100)}`)
      if (Number.isNaN(ms)) {
        day = null
      } else {
        const offset = remember(this.#dayOffsets, 20_000, ms, this.#steadyOffset)
        day = { ms, prefix: `${msToDay(ms)}T`, offset: offset === null ? null : offsetText(offset) }
      }
      if (this.#daysByNumber.size >= 20_000) this.#daysByNumber.clear()
      this.#daysByNumber.set(number, day)
    }
    return day
  }

  readonly #steadyOffset = (dayMs: number): number | null => {
    // The wall-clock times of this day are instants between midnight - 14 h and
    // midnight + 24 h + 12 h (offsets run from -12:00 to +14:00). The same offset
    // at both ends means no change in between: zones change theirs weeks apart.
    const before = this.#lookUp(dayMs - 14 * 3_600_000)
    const after = this.#lookUp(dayMs + 36 * 3_600_000)
    return before === after ? before : null
  }

  readonly #changeDayIso = (wallMs: number): string => {
    const { utcMs, offsetMinutes } = this.#changeDayInstant(wallMs)
    return formatInstant(utcMs, offsetMinutes)
  }

  /** On a day whose offset changes: its changes found once (dayInstants), kept per day. */
  readonly #changeDays = new Map<number, (wallMs: number) => { utcMs: number; offsetMinutes: number }>()
  #changeDayInstant(wallMs: number): { utcMs: number; offsetMinutes: number } {
    const day = Math.floor(wallMs / DAY_MS) * DAY_MS
    return remember(this.#changeDays, 1_000, day, (dayMs) => dayInstants(this.#zone, dayMs, this.#lookUp))(wallMs)
  }
}

const SPACE = 0x20
const DIGIT_0 = 0x30
const DASH = 0x2d
const COLON = 0x3a

/** The digit at `at`; below 0 when it is none (a character before '0' is below 0 already). */
function digitAt(text: string, at: number): number {
  const digit = text.charCodeAt(at) - DIGIT_0
  return digit <= 9 ? digit : -1
}

/** `YYYY-MM-DD` at `at` as the number YYYYMMDD, unchecked as a date; -1 when the text is not of that form. */
function dateNumberAt(text: string, at: number): number {
  if (text.charCodeAt(at + 4) !== DASH || text.charCodeAt(at + 7) !== DASH) return -1
  let number = 0
  for (const i of DATE_DIGITS) {
    const digit = digitAt(text, at + i)
    if (digit < 0) return -1
    number = number * 10 + digit
  }
  return number
}
const DATE_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9]

/**
 * A TIME value of the usual form `HH:MM:SS` as seconds, as timeToSeconds counts
 * them; -1 when it is not of that form (`9:30:00`, `09:30`, `-01:00:00`, a
 * fraction), which timeSeconds then reads the general way.
 */
export function readTimeSeconds(time: string): number {
  return time.length === 8 ? secondsAt(time, 0) : -1
}

/** A DATETIME's date number YYYYMMDD times this, plus its seconds, is readDateTimeNumber's one number. */
export const DATE_TIME_SCALE = 1_000_000

/**
 * A DATETIME value of the usual form `YYYY-MM-DD HH:MM:SS` as the one number
 * YYYYMMDD × DATE_TIME_SCALE + its seconds (at most 99:99:99, 362,439), unchecked
 * as a date (the zero date is 0); -1 when it is not of that form (`T` for the
 * space, a fraction, `9:30:00`), which isoDateTime then reads the general way.
 * One number and no slices: it runs for every DATETIME of a million-booking export.
 */
export function readDateTimeNumber(value: string): number {
  if (value.length !== 19 || value.charCodeAt(10) !== SPACE) return -1
  const number = dateNumberAt(value, 0)
  const seconds = secondsAt(value, 11)
  return number >= 0 && seconds >= 0 ? number * DATE_TIME_SCALE + seconds : -1
}

/** `HH:MM:SS` at `at` as seconds, as timeToSeconds counts them; -1 when the text is not of that form. */
function secondsAt(text: string, at: number): number {
  if (text.charCodeAt(at + 2) !== COLON || text.charCodeAt(at + 5) !== COLON) return -1
  const h1 = digitAt(text, at), h2 = digitAt(text, at + 1)
  const m1 = digitAt(text, at + 3), m2 = digitAt(text, at + 4)
  const s1 = digitAt(text, at + 6), s2 = digitAt(text, at + 7)
  if ((h1 | h2 | m1 | m2 | s1 | s2) < 0) return -1
  return (h1 * 10 + h2) * 3600 + (m1 * 10 + m2) * 60 + s1 * 10 + s2
}

// Filled up front, so V8 keeps it an array: filled sparsely from empty it became a
// dictionary, 15 ns a look-up instead of 6, twice a booking.
// Stryker disable next-line ArrayDeclaration: an empty array gives the same texts; only V8's layout, and so the speed, differs
const timeTexts: Array<string | undefined> = new Array<string | undefined>(DAY_SECONDS).fill(undefined)
/** `HH:MM:SS` of milliseconds after midnight (0 to a day), each built once. */
function timeOfDayText(msAfterMidnight: number): string {
  const seconds = Math.floor(msAfterMidnight / 1000)
  return timeTexts[seconds] ??= `${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}`
}

const offsetTexts = new Map<number, string>()
function offsetText(offsetMinutes: number): string {
  return remember(offsetTexts, 1_000, offsetMinutes, formatOffset)
}

const sharedClocks = new Map<string, WallClock>()

/**
 * One WallClock per zone for the whole process: a zone's offset on a given day
 * never changes while it runs, so every request reuses the days already looked
 * up (a fresh clock per request cost the benchmark's typical report several
 * milliseconds of zone look-ups). Its caches are bounded.
 */
export function wallClockFor(zone: SiteZone): WallClock {
  const label = zoneLabel(zone)
  let clock = sharedClocks.get(label)
  if (!clock) {
    clock = new WallClock(zone)
    sharedClocks.set(label, clock)
  }
  return clock
}
