// What `GET summary/` means (API.md, "GET summary/"): answerSummary reads the
// database through db/ and hands the rows to the pure pieces beside it
// (summary-params, summary-periods, open-minutes, summary-sums, summary-split).
import type { Db } from '../../db/connect.ts'
import { findRules } from '../../db/disabled-times.ts'
import { readStartOfWeek } from '../../db/options.ts'
import { findAllServices } from '../../db/services.ts'
import { findSummaryRows } from '../../db/summary.ts'
import type { BoundedPool } from '../../db/bounded-pool.ts'
import { SummaryRows } from './summary-rows.ts'
import { invalidParams } from '../errors.ts'
import { zoneLabel, todayInZone, type SiteZone } from './zone-offsets.ts'
import { decodeSlug } from './slugs.ts'
import { checkRange, readRules } from './rules.ts'
import { resolveService, serviceLookups, type ServiceLookups } from './services.ts'
import { bookingFilter } from './slots.ts'
import type { RuleProblemLog } from './disabled-time.ts'
import { groupByNames, startOfWeekFrom, type GroupName, type SummaryQuery } from './summary-params.ts'
import { resolveSummaryRange } from './summary-periods.ts'
import { openMinutesFor } from './open-minutes.ts'
import { summarize, type SummaryGroup, type SummaryMeasures } from './summary-sums.ts'
import { splitByBookingDate } from './summary-split.ts'
import { DEFAULT_BLOCKING } from './availability.ts'

export interface SummaryAnswer {
  groups: SummaryGroup[]
  totals: SummaryMeasures
  start: string
  end: string
  timezone: string
  group_by: GroupName[]
  filter_by: 'booking_date' | 'created_date'
  /** The statuses whose bookings count in blocked_minutes and occupancy. */
  blocking: string[]
}
/** The queries answerSummary makes: db/, or rows in memory in unit tests. */
export interface SummaryQueries extends ServiceLookups {
  readStartOfWeek: typeof readStartOfWeek
  findSummaryRows: typeof findSummaryRows
  findRules: typeof findRules
  findAllServices: typeof findAllServices
}

export const summaryQueries: SummaryQueries = { ...serviceLookups, readStartOfWeek, findSummaryRows, findRules, findAllServices }

/** Answers `GET summary/`: counts in the database, periods, services and open minutes here. */
export async function answerSummary(
  db: Db,
  pool: BoundedPool,
  params: SummaryQuery,
  options: { zone: SiteZone; now: number; maxRangeDays: number; problems: RuleProblemLog },
  queries: SummaryQueries = summaryQueries,
): Promise<SummaryAnswer> {
  const range = resolveSummaryRange(params.start, params.end, todayInZone(options.zone, options.now))
  // Stryker disable next-line ConditionalExpression: without start, start is the first day of end's month, never after end, so given.start is not read
  const rangeProblem = checkRange(range, { start: params.start !== undefined, end: params.end !== undefined }, options.maxRangeDays)
  if (rangeProblem) throw invalidParams({ [rangeProblem.param]: rangeProblem.message })
  const groupBy = params.group_by

  const [service, startOfWeekText] = await Promise.all([
    params.service === undefined ? undefined : resolveService(db, params.service, queries),
    groupBy.period === 'week' ? queries.readStartOfWeek(db) : undefined,
  ])
  const startOfWeek = startOfWeekFrom(startOfWeekText)
  // The same filter as slots/ for the same parameters, so the counts agree with it.
  const filter = bookingFilter({ status: params.status, start: range.start, end: range.end, filter_by: params.filter_by }, service?.ID)
  // Both halves fold into the same columns as their rows arrive.
  const rows = new SummaryRows()
  // The same default as availability/'s, so the two agree on which bookings take time.
  const blocking = params.blocking ?? DEFAULT_BLOCKING
  const [, ruleRows, posts] = await Promise.all([
    Promise.all(splitByBookingDate({ filter, dateOf: params.filter_by, byStatus: groupBy.status, blocking })
      .map((part) => queries.findSummaryRows(db, pool, part, rows))),
    queries.findRules(db, service?.ID),
    // With a service, its row is the only one the answer names (as in domain/disabled-time.ts).
    service ? [service] : queries.findAllServices(db),
  ])

  const slugs = new Map(posts.map((post) => [post.ID, decodeSlug(post.post_name)]))
  // The services of the answer: the one named, else every published one and any other with a matching booking.
  const ids = service
    ? [service.ID]
    : [...new Set([...posts.filter((post) => post.post_status === 'publish').map((post) => post.ID), ...rows.serviceIds()])]
  const services = ids.sort((a, b) => a - b).map((id) => ({ id, slug: slugs.get(id) ?? null }))

  const rules = readRules(ruleRows, options.problems)
  const open = await openMinutesFor(ruleRows, rules, range, ids, options.zone)
  const withOpenMinutes = params.filter_by !== 'created_date' && !groupBy.status
  const { groups, totals } = summarize({ groupBy, range, startOfWeek, services, rows, open, withOpenMinutes })
  rows.release()
  return {
    groups, totals, start: range.start, end: range.end, timezone: zoneLabel(options.zone),
    group_by: groupByNames(groupBy), filter_by: params.filter_by, blocking,
  }
}
