// The site's time zone (PLUGIN_TABLES.md, "Site settings"): what it is, its UTC
// offset at an instant, and the instant of a wall-clock time in it (API.md,
// "GET slots/"). Pure functions only: no database, no clock.
import { DAY_MS, msToDay, pad2, pad4 } from './day-arithmetic.ts'

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
    return !/^[+-]/.test(name)
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
  // Number() reads a blank gmt_offset as 0 and a missing one as NaN: UTC either way.
  const hours = Number(gmtOffset)
  return Number.isFinite(hours) && Math.abs(hours) <= 14 ? fixedZone(Math.round(hours * 60)) : { kind: 'utc' }
}

export function formatOffset(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  return `${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`
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
  return instantByOffsets((utcMs) => offsetAt(zone, utcMs), wallMs)
}

/** wallClockToInstant's rule, with the zone's offsets given as a function of the UTC instant. */
function instantByOffsets(offsetOf: (utcMs: number) => number, wallMs: number): { utcMs: number; offsetMinutes: number } {
  // Offsets a day before and after bracket any change of offset near this time.
  const before = offsetOf(wallMs - DAY_MS)
  const after = offsetOf(wallMs + DAY_MS)
  // Read with the offset before a change: right for every time before it, and
  // for a time that occurs twice (clocks went back) the earlier, first occurrence.
  const early = wallMs - before * 60_000
  if (offsetOf(early) === before) return { utcMs: early, offsetMinutes: before }
  const late = wallMs - after * 60_000
  if (offsetOf(late) === after) return { utcMs: late, offsetMinutes: after }
  // Skipped (clocks went forward): read with the offset before the change, the
  // instant lands past the gap, so the wall-clock time moves forward by the gap.
  return { utcMs: early, offsetMinutes: after }
}

const HOUR_MS = 3_600_000

/**
 * wallClockToInstant for the wall-clock times of one calendar day (its 00:00
 * read as UTC: `dayMs`), for a day near a change of offset. The zone's changes
 * around the day are found once, each to the second, by halving the hour in
 * which the offset differs; a time of the day then needs no zone look-up. On
 * such a day each distinct time (every created_at with its own seconds) cost
 * three look-ups, 100 ms of a million-booking export (docs/performance.md). Its answers are wallClockToInstant's: the same rule, over
 * the same offsets. The look-ups cover every instant the rule reads for a time
 * of this day (a day either side, and offsets of up to ±26 hours); any other
 * instant is looked up as before.
 */
export function dayInstants(
  zone: SiteZone, dayMs: number, lookUp: (utcMs: number) => number = (utcMs) => offsetAt(zone, utcMs),
): (wallMs: number) => { utcMs: number; offsetMinutes: number } {
  const from = dayMs - 2 * DAY_MS
  const to = dayMs + 3 * DAY_MS
  const changes = offsetChanges(zone, from, to, lookUp)
  const offsetOf = (utcMs: number): number => {
    if (utcMs < from || utcMs >= to) return lookUp(utcMs)
    const second = Math.floor(utcMs / 1000) * 1000
    let offset = changes.first
    for (const change of changes.at) {
      if (second < change.utcMs) break
      offset = change.offsetMinutes
    }
    return offset
  }
  return (wallMs) => instantByOffsets(offsetOf, wallMs)
}

/**
 * The zone's offset at `from` and each change of it up to `to`: the first
 * whole second with the new offset. Hour by hour, then halving to the second
 * wherever two ends differ, so two changes in one hour are both found.
 * `lookUp` is offsetAt in the zone (tests count its calls).
 */
export function offsetChanges(
  zone: SiteZone, from: number, to: number, lookUp: (utcMs: number) => number = (utcMs) => offsetAt(zone, utcMs),
): { first: number; at: { utcMs: number; offsetMinutes: number }[] } {
  const at: { utcMs: number; offsetMinutes: number }[] = []
  const first = lookUp(from)
  const search = (lo: number, loOffset: number, hi: number, hiOffset: number): void => {
    // Whole seconds: offsetAt reads an instant to the second.
    if (hi - lo <= 1000) {
      at.push({ utcMs: hi, offsetMinutes: hiOffset })
      return
    }
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000
    const midOffset = lookUp(mid)
    if (midOffset !== loOffset) search(lo, loOffset, mid, midOffset)
    if (midOffset !== hiOffset) search(mid, midOffset, hi, hiOffset)
  }
  let lo = Math.floor(from / 1000) * 1000
  let loOffset = first
  while (lo < to) {
    const hi = Math.min(lo + HOUR_MS, Math.ceil(to / 1000) * 1000)
    const hiOffset = lookUp(hi)
    if (hiOffset !== loOffset) search(lo, loOffset, hi, hiOffset)
    lo = hi
    loOffset = hiOffset
  }
  return { first, at }
}

/** `YYYY-MM-DDTHH:mm:ss+HH:MM` for an instant shown with the given offset. */
export function formatInstant(utcMs: number, offsetMinutes: number): string {
  const d = new Date(utcMs + offsetMinutes * 60_000)
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}` +
    `T${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}${formatOffset(offsetMinutes)}`
}

/** Today's date (`YYYY-MM-DD`) in the site's zone at an instant. */
export function todayInZone(zone: SiteZone, nowMs: number): string {
  return msToDay(nowMs + offsetAt(zone, nowMs) * 60_000)
}
