// Dates and times of the plugin's tables are wall-clock values in the site's
// time zone (PLUGIN_TABLES.md, "Site settings"). This module turns them into
// ISO 8601 strings with the site's UTC offset on that date (API.md, "A booking").
// Pure functions only: no database, no clock.
import dayjs from 'dayjs'
import utc from 'dayjs/plugin/utc.js'
import timezone from 'dayjs/plugin/timezone.js'

dayjs.extend(utc)
dayjs.extend(timezone)

const DAY_MS = 86_400_000

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

/**
 * Converts the wall-clock times of the plugin's tables into ISO 8601 strings
 * with the site's offset. Offsets are looked up once per calendar day and kept:
 * a day without an offset change (all but two a year) needs no further look-up,
 * so a million bookings cost a few thousand zone look-ups, not a million.
 */
export class WallClock {
  readonly #zone: SiteZone
  /** Per day: its one offset in minutes, or null when the offset changes near it. */
  readonly #dayOffsets = new Map<number, number | null>()
  /** On days whose offset changes: each wall-clock time's answer, as these need several zone look-ups. */
  readonly #changeDayTimes = new Map<number, string>()
  /** Per day: its `YYYY-MM-DD`. */
  readonly #dayTexts = new Map<number, string>()
  /** Per second of the day: its `HH:MM:SS`; per offset: its `+HH:MM`. Per clock, not per module, so tests start empty. */
  readonly #timeTexts: string[] = []
  readonly #offsetTexts = new Map<number, string>()

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
    const offset = remember(this.#dayOffsets, 20_000, day, (d) => this.#steadyOffset(d))
    // A steady day prints its wall-clock time as it is, with the day's offset:
    // three remembered pieces, no Date (the answer of formatInstant, measured at
    // a quarter of the cost of a million-row answer's mapping when built anew).
    if (offset !== null) return `${remember(this.#dayTexts, 20_000, day, dayText)}T${timeOfDayText(this.#timeTexts, wallMs - day)}${remember(this.#offsetTexts, 100, offset, formatOffset)}`
    return remember(this.#changeDayTimes, 20_000, wallMs, (ms) => {
      const { utcMs, offsetMinutes } = wallClockToInstant(this.#zone, ms)
      return formatInstant(utcMs, offsetMinutes)
    })
  }

  /** ISO 8601 of a DATE and TIME pair as the plugin stores them; undefined when either is no value. */
  iso(date: string, time: string): string | undefined {
    const dayMs = this.dayMs(date)
    const seconds = this.seconds(time)
    if (Number.isNaN(dayMs) || Number.isNaN(seconds)) return undefined
    return this.isoAt(dayMs, seconds)
  }

  // A million bookings repeat a few thousand dates and times: each is parsed once.
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
    const space = value.indexOf(' ')
    if (space < 0) return this.iso(value, '00:00:00')
    return this.iso(value.slice(0, space), value.slice(space + 1))
  }

  #steadyOffset(dayMs: number): number | null {
    // The wall-clock times of this day are instants between midnight - 14 h and
    // midnight + 24 h + 12 h (offsets run from -12:00 to +14:00). The same offset
    // at both ends means no change in between: zones change theirs weeks apart.
    const before = offsetAt(this.#zone, dayMs - 14 * 3_600_000)
    const after = offsetAt(this.#zone, dayMs + 36 * 3_600_000)
    return before === after ? before : null
  }
}

/** `YYYY-MM-DD` of a day's UTC midnight in milliseconds. */
function dayText(dayMs: number): string {
  const d = new Date(dayMs)
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`
}

/** `HH:MM:SS` of milliseconds after midnight (0 to a day), each built once into `timeTexts`. */
function timeOfDayText(timeTexts: string[], msAfterMidnight: number): string {
  const seconds = Math.floor(msAfterMidnight / 1000)
  return timeTexts[seconds] ??= `${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}`
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
