// What `GET disabled-time/` means: which rules, which range, which periods. No req or res here.
import type { Logger } from 'pino'
import type { Db } from '../../db/connect.ts'
import { findRules } from '../../db/disabled-times.ts'
import { findAllServices } from '../../db/services.ts'
import { invalidParams } from '../errors.ts'
import { wallClockFor } from './wall-clock.ts'
import { todayInZone, zoneLabel, type SiteZone } from './zone-offsets.ts'
import { decodeSlug } from './slugs.ts'
import { checkTimedRange, expandRules, readRules, resolveRange, type ExpandedPeriod } from './rules.ts'
import { resolveService, serviceLookups, type ServiceLookups } from './services.ts'

/** What the answer reads of disabled-time/'s parameters, as routes/disabled-time.ts parses them. */
export interface DisabledTimeQuery {
  service?: string | undefined
  start?: string | undefined
  end?: string | undefined
}

export interface DisabledTimeAnswer {
  /** Each with its windowDay, which routes/disabled-time.ts leaves out of the JSON. */
  disabled_times: ExpandedPeriod[]
  start: string
  end: string
  timezone: string
  total: number
}

/**
 * Remembers which broken rules were already logged, so each is logged once
 * (PLUGIN_TABLES.md), not once per request. Keyed by the rule's ID and its
 * problem, so a rule that is fixed and then broken another way is logged again.
 */
export class RuleProblemLog {
  readonly #seen = new Set<string>()

  constructor(private readonly log: Logger) {}

  report(ruleId: number, problem: string): void {
    const key = `${ruleId}:${problem}`
    if (this.#seen.has(key)) return
    if (this.#seen.size > 10_000) this.#seen.clear()
    this.#seen.add(key)
    this.log.warn({ ruleId, problem }, 'skipped a disabled-time rule that makes no sense')
  }
}

/** The queries answerDisabledTime makes: db/, or rows in memory in unit tests. */
export interface DisabledTimeQueries extends ServiceLookups {
  findRules: typeof findRules
  findAllServices: typeof findAllServices
}

export const disabledTimeQueries: DisabledTimeQueries = { ...serviceLookups, findRules, findAllServices }

export async function answerDisabledTime(
  db: Db,
  params: DisabledTimeQuery,
  options: { zone: SiteZone; now: number; maxRangeDays: number; problems: RuleProblemLog },
  queries: DisabledTimeQueries = disabledTimeQueries,
): Promise<DisabledTimeAnswer> {
  const range = resolveRange(params.start, params.end, todayInZone(options.zone, options.now))
  const rangeProblem = checkTimedRange(range, { start: params.start !== undefined, end: params.end !== undefined }, options.maxRangeDays)
  if (rangeProblem) throw invalidParams({ [rangeProblem.param]: rangeProblem.message })

  const service = params.service === undefined ? undefined : await resolveService(db, params.service, queries)
  // With a service, its rules and the site-wide ones (no slug) are all there are, and its row
  // is at hand: no third statement for the slugs of all services (docs/performance.md).
  const [rows, services] = await Promise.all([queries.findRules(db, service?.ID), service ? [service] : queries.findAllServices(db)])
  const rules = readRules(rows, options.problems)
  // A rule of a deleted service keeps its service_id, with service_slug null.
  const slugs = new Map(services.map((s) => [s.ID, decodeSlug(s.post_name)]))
  const periods = expandRules(rules, range, wallClockFor(options.zone), (id) => slugs.get(id) ?? null)
  return { disabled_times: periods, start: range.start, end: range.end, timezone: zoneLabel(options.zone), total: periods.length }
}
