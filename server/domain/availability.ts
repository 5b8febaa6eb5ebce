// GET availability/ (API.md, "GET availability/"; docs/availability.md): which
// services, which range, their disabled periods (exactly disabled-time/'s) and
// blocking bookings, and the free windows or bookable start times of each,
// made lazily, service by service, as the answer is written.
import { createHash } from 'node:crypto'
import type { Db, DbPools } from '../../db/connect.ts'
import { readSnapshot } from '../../db/snapshot.ts'
import { compileBlockingBookingsQuery, type BlockingRow } from '../../db/availability.ts'
import { findRules } from '../../db/disabled-times.ts'
import { findAllServices, type ServiceRow } from '../../db/services.ts'
import type { Admission } from '../../db/stream-gate.ts'
import { invalidParams } from '../errors.ts'
import { DAY_MS, addDays, dayToMs, daysInclusive, timeToSeconds } from './day-arithmetic.ts'
import { bookableStarts, bookingInterval, mostBookableStarts, subtractBusy, wallMinutes, type Interval } from './free-time.ts'
import { checkTimedRange, expandRules, readRules, type DateRange, type ValidRule } from './rules.ts'
import type { RuleProblemLog } from './disabled-time.ts'
import { resolveService, serviceLookups, type ServiceLookups } from './services.ts'
import { decodeSlug } from './slugs.ts'
import { answerSizeOfDays } from './slots.ts'
import { wallClockFor, type WallClock } from './wall-clock.ts'
import { offsetAt, todayInZone, zoneLabel, type SiteZone } from './zone-offsets.ts'

/** A rejected or expired booking frees its time (API.md). */
export const DEFAULT_BLOCKING = ['pending', 'booked', 'completed']

export interface AvailabilityQuery {
  service?: string | undefined
  start?: string | undefined
  end?: string | undefined
  blocking?: string[] | undefined
  duration?: number | undefined
  step?: number | undefined
  limit?: number | undefined
}

/** A free window, or a bookable start (no `minutes`). */
export interface FreeItem {
  service_id: number
  service_slug: string | null
  start: string
  end: string
  minutes?: number
}

export interface AvailabilityAnswer {
  /** Made as they are written: service by service, never the whole range's start times at once. */
  free: Iterable<FreeItem>
  start: string
  end: string
  timezone: string
  blocking: string[]
  duration?: number
  step?: number
  /**
   * What the items are made of, read for this request: the services, the rule
   * rows, a SHA-256 over the blocking rows as they arrived, the zone. The same
   * parts give the same items (the ETag, docs/conditional-requests.md).
   */
  tagParts: unknown[]
}

/** The queries answerAvailability makes: db/, or rows in memory in unit tests. */
export interface AvailabilityQueries extends ServiceLookups {
  findRules: typeof findRules
  findAllServices: typeof findAllServices
  readBlocking: (db: Db, pools: DbPools, filter: Parameters<typeof compileBlockingBookingsQuery>[1], admission: Admission | undefined, into: (row: BlockingRow) => void, rowTimeoutMs: number) => Promise<void>
}

/** The blocking bookings through the stream pool's cursor, each row handed on as it arrives. */
async function readBlocking(db: Db, pools: DbPools, filter: Parameters<typeof compileBlockingBookingsQuery>[1], admission: Admission | undefined, into: (row: BlockingRow) => void, rowTimeoutMs: number): Promise<void> {
  await readSnapshot(pools.stream, async (snapshot) => {
    for await (const batch of snapshot.batches(compileBlockingBookingsQuery(db, filter), { rowTimeoutMs, batchSize: 1000 })) {
      for (const row of batch) into(row)
    }
  }, { admission })
}

export const availabilityQueries: AvailabilityQueries = { ...serviceLookups, findRules, findAllServices, readBlocking }

export async function answerAvailability(
  db: Db,
  pools: DbPools,
  params: AvailabilityQuery,
  options: { zone: SiteZone; now: number; maxRangeDays: number; maxItems: number; problems: RuleProblemLog; queryTimeoutMs: number; admission?: Admission },
  queries: AvailabilityQueries = availabilityQueries,
): Promise<AvailabilityAnswer> {
  const today = todayInZone(options.zone, options.now)
  const start = params.start ?? today
  const range: DateRange = { start, end: params.end ?? addDays(start, 6) }
  const problem = checkTimedRange(range, { start: params.start !== undefined, end: params.end !== undefined }, options.maxRangeDays)
  if (problem) throw invalidParams({ [problem.param]: problem.message })

  const named = params.service === undefined ? undefined : await resolveService(db, params.service, queries)
  const services: ServiceRow[] = named ? [named] : (await queries.findAllServices(db)).filter((post) => post.post_status === 'publish')
  services.sort((a, b) => a.ID - b.ID)
  const blocking = params.blocking ?? DEFAULT_BLOCKING
  const wanted = new Set(services.map((service) => service.ID))
  const limit = params.limit ?? Number.POSITIVE_INFINITY
  const days = daysInclusive(range.start, range.end)
  // Its place in the line for stream permits, as a slots/ answer of as many days: a week's lookup is short, and no report.
  if (options.admission) options.admission.size = answerSizeOfDays(days)
  // Start times: bounded before anything is read, from the grid alone (the count of services free all the range long).
  if (params.duration !== undefined) {
    const step = params.step ?? params.duration
    const most = services.length * Math.min(limit, mostBookableStarts(days, params.duration, step))
    if (most > options.maxItems) throw invalidParams({ step: tooManyItems(`up to ${most} start times`, services.length, days, options.maxItems, `a step longer than ${step} minutes`) })
  }

  // Rules and bookings from the day before the range: a window or slot past midnight reaches into it.
  const dayBefore = addDays(range.start, -1)
  const readFrom = Number.isNaN(dayToMs(dayBefore)) ? range.start : dayBefore
  const busy = new Map<number, Interval[]>()
  // Every row read goes into the tag, kept or not: four columns of fixed form, joined unambiguously.
  const bookingsRead = createHash('sha256')
  const [ruleRows] = await Promise.all([
    queries.findRules(db, named?.ID),
    services.length === 0 ? undefined : queries.readBlocking(db, pools, { serviceId: named?.ID, statuses: blocking, from: readFrom, to: range.end }, options.admission, (row) => {
      bookingsRead.update(`${row.service_id},${row.booking_date},${row.time_from},${row.time_to};`)
      if (!wanted.has(row.service_id)) return
      const interval = bookingInterval({
        dayMs: dayToMs(row.booking_date),
        fromSeconds: row.time_from === null ? null : timeToSeconds(row.time_from),
        toSeconds: row.time_to === null ? null : timeToSeconds(row.time_to),
      })
      if (interval === undefined || Number.isNaN(interval[0]) || Number.isNaN(interval[1])) return
      let list = busy.get(row.service_id)
      if (!list) busy.set(row.service_id, list = [])
      list.push(interval)
    }, options.queryTimeoutMs),
  ])
  const rules = readRules(ruleRows, options.problems)

  const clock = wallClockFor(options.zone)
  const span: Interval = [dayToMs(range.start), dayToMs(range.end) + DAY_MS]
  const disabled = disabledIntervals(rules, { start: readFrom, end: range.end }, clock)
  const grid = params.duration === undefined ? undefined : { durationMs: params.duration * 60_000, stepMs: (params.step ?? params.duration) * 60_000 }
  const exists = existsOnClock(clock, options.zone)
  const windowsOf = (service: ServiceRow) => subtractBusy(span, [...(disabled.get(0) ?? []), ...(disabled.get(service.ID) ?? []), ...(busy.get(service.ID) ?? [])])
  // Windows: as many as the bookings and rules read allow, so counted once they are read, before the first byte.
  const windowsByService = grid ? undefined : new Map(services.map((service) => [service.ID, windowsOf(service).slice(0, limit)]))
  if (windowsByService) {
    let count = 0
    for (const windows of windowsByService.values()) count += windows.length
    if (count > options.maxItems) throw invalidParams({ end: tooManyItems(`${count} free windows`, services.length, days, options.maxItems) })
  }

  function* free(): Generator<FreeItem> {
    for (const service of services) {
      const slug = decodeSlug(service.post_name)
      if (grid) {
        const windows = windowsOf(service)
        for (const [start, end] of bookableStarts(windows, { firstDayMs: span[0], endMs: span[1], ...grid, limit, exists })) {
          yield { service_id: service.ID, service_slug: slug, start: isoOf(clock, start), end: isoOf(clock, end) }
        }
        continue
      }
      for (const window of windowsByService!.get(service.ID)!) {
        yield { service_id: service.ID, service_slug: slug, start: isoOf(clock, window[0]), end: isoOf(clock, window[1]), minutes: wallMinutes(window) }
      }
    }
  }

  return {
    free: { [Symbol.iterator]: free },
    start: range.start,
    end: range.end,
    timezone: zoneLabel(options.zone),
    blocking,
    ...(params.duration === undefined ? {} : { duration: params.duration, step: params.step ?? params.duration }),
    tagParts: [
      range, blocking, params.duration ?? null, params.step ?? null, params.limit ?? null, options.zone,
      services.map((service) => [service.ID, service.post_name, service.post_status]), ruleRows, bookingsRead.digest('base64url'),
    ],
  }
}

/** Why an answer is refused for AVAILABILITY_MAX_ITEMS, and how to ask for less. */
function tooManyItems(items: string, services: number, days: number, maxItems: number, longerStep?: string): string {
  const of = `${services} service${services === 1 ? '' : 's'} over ${days} day${days === 1 ? '' : 's'}`
  const asks = ['a narrower range (start, end)', longerStep, services > 1 ? 'one service' : undefined, 'a lower limit per service'].filter((ask) => ask !== undefined)
  return `This would list ${items} (${of}), more than the ${maxItems} an answer lists at most (AVAILABILITY_MAX_ITEMS): ask for ${asks.slice(0, -1).join(', ')} or ${asks.at(-1)!}.`
}

/** Disabled periods by rule's service_id (0: site-wide), as wall-clock intervals: expandRules', the periods disabled-time/ gives. */
function disabledIntervals(rules: ValidRule[], span: DateRange, clock: WallClock): Map<number, Interval[]> {
  const byService = new Map<number, Interval[]>()
  for (const period of expandRules(rules, span, clock, () => null)) {
    const id = period.service_id ?? 0
    let list = byService.get(id)
    if (!list) byService.set(id, list = [])
    list.push([wallMsOfIso(period.start), wallMsOfIso(period.end)])
  }
  return byService
}

/** Wall-clock milliseconds of an ISO 8601 time with offset, as expandRules writes them. */
function wallMsOfIso(iso: string): number {
  return dayToMs(iso.slice(0, 10)) + timeToSeconds(iso.slice(11, 19)) * 1000
}

/** ISO 8601 with the site's offset, as slots/ writes times (a time in a gap moves forward by it). */
function isoOf(clock: WallClock, wallMs: number): string {
  const day = Math.floor(wallMs / DAY_MS) * DAY_MS
  return clock.isoAt(day, (wallMs - day) / 1000)
}

/**
 * Whether a wall-clock time occurs on the site's clock: false in the hour
 * skipped when clocks go forward. Asked of days whose offset changes only.
 */
function existsOnClock(clock: WallClock, zone: SiteZone): (wallMs: number) => boolean {
  const steady = new Map<number, boolean>()
  const offsetMinutes = (wallMs: number) => offsetAt(zone, clock.instantOf(wallMs))
  return (wallMs) => {
    const day = Math.floor(wallMs / DAY_MS) * DAY_MS
    let isSteady = steady.get(day)
    if (isSteady === undefined) {
      isSteady = offsetMinutes(day) === offsetMinutes(day + DAY_MS - 1000)
      steady.set(day, isSteady)
    }
    if (isSteady) return true
    const utc = clock.instantOf(wallMs)
    return utc + offsetAt(zone, utc) * 60_000 === wallMs
  }
}
