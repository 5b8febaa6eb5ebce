// Dates and times of the plugin's tables are wall-clock values in the site's
// time zone (PLUGIN_TABLES.md, "Site settings"). This module turns them into
// ISO 8601 strings with the site's UTC offset on that date (API.md, "A booking").
// Pure functions only: no database, no clock.
import dayjs from 'dayjs'
import utc from 'dayjs/plugin/utc.js'
import timezone from 'dayjs/plugin/timezone.js'

dayjs.extend(utc)
dayjs.extend(timezone)

/** Milliseconds and seconds in a calendar day (a UTC day: dates here are counted in UTC). */
export const DAY_MS = 86_400_000
export const DAY_SECONDS = 86_400

/**
 * The value under `key`, computed once and kept; a cache that reaches `limit`
 * entries starts over, so a long-running process never grows it without bound.
 */
export function remember<K, V>(cache: Map<K, V>, limit: number, key: K, compute: (key: K) => V): V {
  let value = cache.get(key)
  if (value === undefined) {
    value = compute(key)
    if (cache.size >= limit) cache.clear()
    cache.set(key, value)
  }
  return value
}

/** The zone offsets come from: an IANA zone, a fixed offset (gmt_offset), or UTC. */
export type SiteZone =
  | { kind: 'iana'; name: string }
  | { kind: 'fixed'; offsetMinutes: number }
  | { kind: 'utc' }

/** The `timezone` field of disabled-time/: the IANA name, `+05:45`, or `UTC`. */
export function zoneLabel(zone: SiteZone): string {
  if (zone.kind === 'iana') return zone.name
  if (zone.kind === 'fixed') return formatOffset(zone.offsetMinutes)
  return 'UTC'
}

export function isIanaZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    // Intl also takes fixed offsets like "+01:00"; those are not IANA names.
    return /^[A-Za-z]/.test(name)
  } catch {
    return false
  }
}

/**
 * Parses `SITE_TIMEZONE`: an IANA name (`Europe/Berlin`), `UTC`, or a fixed
 * offset as `+05:45`, `-03:30`, `UTC+2`. Returns undefined when it is none of those.
 */
export function parseZoneSetting(value: string): SiteZone | undefined {
  const text = value.trim()
  if (/^(UTC|GMT|Z)$/i.test(text)) return { kind: 'utc' }
  const offset = /^(?:UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(text)
  if (offset) {
    const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? 0)
    if (minutes > 14 * 60 || Number(offset[3] ?? 0) >= 60) return undefined
    return fixedZone(offset[1] === '-' ? -minutes : minutes)
  }
  return isIanaZone(text) ? { kind: 'iana', name: text } : undefined
}

function fixedZone(offsetMinutes: number): SiteZone {
  return offsetMinutes === 0 ? { kind: 'utc' } : { kind: 'fixed', offsetMinutes }
}

/**
 * The site's zone from its options, as WordPress's wp_timezone() does:
 * `timezone_string` when it names a zone, else `gmt_offset` when it is set and
 * not 0 (`5.75` is +05:45, `-3.5` is -03:30), else UTC.
 */
export function zoneFromOptions(timezoneString: string | undefined, gmtOffset: string | undefined): SiteZone {
  const name = timezoneString?.trim()
  if (name) {
    if (/^UTC$/i.test(name)) return { kind: 'utc' }
    if (isIanaZone(name)) return { kind: 'iana', name }
  }
  const hours = Number((gmtOffset ?? '').trim())
  if ((gmtOffset ?? '').trim() !== '' && Number.isFinite(hours) && Math.abs(hours) <= 14) {
    return fixedZone(Math.round(hours * 60))
  }
  return { kind: 'utc' }
}

export function formatOffset(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  return `${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

function pad4(n: number): string {
  return String(n).padStart(4, '0')
}

const zoneFormatters = new Map<string, Intl.DateTimeFormat>()

function zoneFormatter(name: string): Intl.DateTimeFormat {
  let formatter = zoneFormatters.get(name)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: name, hourCycle: 'h23', era: 'short',
      year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    })
    zoneFormatters.set(name, formatter)
  }
  return formatter
}

/**
 * UTC offset of the zone, in minutes, at a UTC instant. It reads the zone's
 * wall clock from one Intl.DateTimeFormat kept per zone: dayjs's .tz() builds a
 * new formatter on every call (about 100 µs against 6 µs here, measured by
 * scripts/bench-rules.ts), and this runs for every day a request touches.
 */
export function offsetAt(zone: SiteZone, utcMs: number): number {
  if (zone.kind === 'utc') return 0
  if (zone.kind === 'fixed') return zone.offsetMinutes
  const wholeSecond = Math.floor(utcMs / 1000) * 1000
  const parts: Record<string, string> = {}
  for (const part of zoneFormatter(zone.name).formatToParts(new Date(wholeSecond))) parts[part.type] = part.value
  const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year)
  const wall = new Date(0)
  wall.setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day))
  wall.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), 0)
  return Math.round((wall.getTime() - wholeSecond) / 60_000)
}

/**
 * The instant of a wall-clock time in the zone, given as milliseconds of that
 * wall-clock time read as if it were UTC. API.md: a time skipped by a
 * daylight-saving change moves forward by the gap; a time that occurs twice
 * takes the first occurrence.
 */
export function wallClockToInstant(zone: SiteZone, wallMs: number): { utcMs: number; offsetMinutes: number } {
  if (zone.kind !== 'iana') {
    const offsetMinutes = offsetAt(zone, wallMs)
    return { utcMs: wallMs - offsetMinutes * 60_000, offsetMinutes }
  }
  // Offsets a day before and after bracket any change of offset near this time.
  const before = offsetAt(zone, wallMs - DAY_MS)
  const after = offsetAt(zone, wallMs + DAY_MS)
  const early = wallMs - before * 60_000
  if (before === after) return { utcMs: early, offsetMinutes: before }
  const late = wallMs - after * 60_000
  const earlyValid = offsetAt(zone, early) === before
  const lateValid = offsetAt(zone, late) === after
  if (earlyValid && lateValid) {
    // Occurs twice (clocks went back): the first occurrence is the earlier instant.
    const first = Math.min(early, late)
    return { utcMs: first, offsetMinutes: first === early ? before : after }
  }
  if (lateValid) return { utcMs: late, offsetMinutes: after }
  if (earlyValid) return { utcMs: early, offsetMinutes: before }
  // Skipped (clocks went forward): read with the offset before the change, the
  // instant lands past the gap, so the wall-clock time moves forward by the gap.
  return { utcMs: early, offsetMinutes: offsetAt(zone, early) }
}

/** `YYYY-MM-DDTHH:mm:ss+HH:MM` for an instant shown with the given offset. */
export function formatInstant(utcMs: number, offsetMinutes: number): string {
  const d = new Date(utcMs + offsetMinutes * 60_000)
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}` +
    `T${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}${formatOffset(offsetMinutes)}`
}

/** Milliseconds since the epoch of a `YYYY-MM-DD` date at 00:00, read as UTC; NaN when it is no date. */
export function dayToMs(date: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  if (!m) return NaN
  const year = Number(m[1]), month = Number(m[2]), day = Number(m[3])
  if (month < 1 || month > 12 || day < 1) return NaN
  const d = new Date(0)
  d.setUTCFullYear(year, month - 1, day)
  d.setUTCHours(0, 0, 0, 0)
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

/** Today's date (`YYYY-MM-DD`) in the site's zone at an instant. */
export function todayInZone(zone: SiteZone, nowMs: number): string {
  return msToDay(nowMs + offsetAt(zone, nowMs) * 60_000)
}

const DATE_FORMATS: { pattern: RegExp; order: [year: number, month: number, day: number] }[] = [
  { pattern: /^(\d{2})\.(\d{2})\.(\d{4})$/, order: [3, 2, 1] },
  { pattern: /^(\d{2})\/(\d{2})\/(\d{4})$/, order: [3, 2, 1] },
  { pattern: /^(\d{4})-(\d{2})-(\d{2})$/, order: [1, 2, 3] },
]

/**
 * A `start`/`end` parameter as `YYYY-MM-DD`, or undefined when it is not a real
 * date in one of API.md's three forms, checked strictly: `31.02.2026`,
 * `2026-2-3` and `13/13/2026` are not dates. Years before 1000 are refused:
 * MariaDB's DATE range starts there.
 */
export function parseDateParam(value: string): string | undefined {
  for (const { pattern, order } of DATE_FORMATS) {
    const m = pattern.exec(value)
    if (!m) continue
    const iso = `${m[order[0]]}-${m[order[1]]}-${m[order[2]]}`
    if (Number(m[order[0]]) < 1000) return undefined
    return Number.isNaN(dayToMs(iso)) ? undefined : iso
  }
  return undefined
}

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
 * to make it, were a fifth of the service's time (scripts/bench/README.md).
 * Any other text takes the general way (dayToMs, timeToSeconds), with the same answers.
 */
export class WallClock {
  readonly #zone: SiteZone
  /** Per day: its one offset in minutes, or null when the offset changes near it. */
  readonly #dayOffsets = new Map<number, number | null>()
  /** On days whose offset changes: each wall-clock time's answer, as these need several zone look-ups. */
  readonly #changeDayTimes = new Map<number, string>()
  /** Per day: its `YYYY-MM-DD`. */
  readonly #dayTexts = new Map<number, string>()
  /** Per date as the number YYYYMMDD: the day, or null when it is no date (`2026-02-30`, the zero date). */
  readonly #daysByNumber = new Map<number, ClockDay | null>()

  constructor(zone: SiteZone) {
    this.#zone = zone
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
   * loop for over 60 ms (scripts/bench/phases.ts).
   */
  instantOf(wallMs: number): number {
    const day = Math.floor(wallMs / DAY_MS) * DAY_MS
    const offset = remember(this.#dayOffsets, 20_000, day, this.#steadyOffset)
    return offset !== null ? wallMs - offset * 60_000 : wallClockToInstant(this.#zone, wallMs).utcMs
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
    const number = date.length === 10 ? dateNumberAt(date, 0) : -1
    // dayToMs reads nothing but YYYY-MM-DD, so any other text is no date either.
    return number < 0 ? null : this.#dayOfNumber(number)
  }

  /** Seconds of a TIME value (timeToSeconds); NaN when it is none. */
  timeSeconds(time: string): number {
    const seconds = time.length === 8 ? secondsAt(time, 0) : -1
    return seconds < 0 ? this.seconds(time) : seconds
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
    if (value.length === 19 && value.charCodeAt(10) === SPACE) {
      const number = dateNumberAt(value, 0)
      const seconds = secondsAt(value, 11)
      if (number >= 0 && seconds >= 0) {
        const day = this.#dayOfNumber(number)
        return day === null ? undefined : this.isoOfDay(day, seconds)
      }
    }
    const space = value.indexOf(' ')
    if (space < 0) return this.iso(value, '00:00:00')
    return this.iso(value.slice(0, space), value.slice(space + 1))
  }

  #dayOfNumber(number: number): ClockDay | null {
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
    const before = offsetAt(this.#zone, dayMs - 14 * 3_600_000)
    const after = offsetAt(this.#zone, dayMs + 36 * 3_600_000)
    return before === after ? before : null
  }

  readonly #changeDayIso = (wallMs: number): string => {
    const { utcMs, offsetMinutes } = wallClockToInstant(this.#zone, wallMs)
    return formatInstant(utcMs, offsetMinutes)
  }
}

const SPACE = 0x20
const DIGIT_0 = 0x30
const DASH = 0x2d
const COLON = 0x3a

/** The digit at `at`, or -1 when it is none. */
function digitAt(text: string, at: number): number {
  const digit = text.charCodeAt(at) - DIGIT_0
  return digit >= 0 && digit <= 9 ? digit : -1
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

/** `HH:MM:SS` at `at` as seconds, as timeToSeconds counts them; -1 when the text is not of that form. */
function secondsAt(text: string, at: number): number {
  if (text.charCodeAt(at + 2) !== COLON || text.charCodeAt(at + 5) !== COLON) return -1
  const h1 = digitAt(text, at), h2 = digitAt(text, at + 1)
  const m1 = digitAt(text, at + 3), m2 = digitAt(text, at + 4)
  const s1 = digitAt(text, at + 6), s2 = digitAt(text, at + 7)
  if ((h1 | h2 | m1 | m2 | s1 | s2) < 0) return -1
  return (h1 * 10 + h2) * 3600 + (m1 * 10 + m2) * 60 + s1 * 10 + s2
}

const timeTexts: string[] = []
/** `HH:MM:SS` of milliseconds after midnight (0 to a day), each built once. */
function timeOfDayText(msAfterMidnight: number): string {
  const seconds = Math.floor(msAfterMidnight / 1000)
  return timeTexts[seconds] ??= `${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}`
}

const offsetTexts = new Map<number, string>()
function offsetText(offsetMinutes: number): string {
  let text = offsetTexts.get(offsetMinutes)
  if (text === undefined) offsetTexts.set(offsetMinutes, text = formatOffset(offsetMinutes))
  return text
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
