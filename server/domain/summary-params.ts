// summary/'s parameters as the answer reads them (API.md, "GET summary/"):
// group_by, and WordPress's start_of_week option. Pure.
import { PERIODS, type SummaryPeriod } from './summary-periods.ts'

export const GROUP_NAMES = ['service', 'status', ...PERIODS] as const
export type GroupName = (typeof GROUP_NAMES)[number]

export interface GroupBy {
  period: SummaryPeriod | undefined
  service: boolean
  status: boolean
}

/** What the answer reads of summary/'s parameters, as routes/summary.ts parses them. */
export interface SummaryQuery {
  status?: string[] | undefined
  service?: string | undefined
  start?: string | undefined
  end?: string | undefined
  filter_by: 'booking_date' | 'created_date'
  group_by: GroupBy
  /** The statuses whose bookings take time; undefined: availability/'s default. */
  blocking?: string[] | undefined
}

/**
 * `group_by`'s names (already split at commas), in any order and letter case:
 * any of service and status, and at most one period. Omitted: month.
 */
export function parseGroupBy(names: string[] | undefined): GroupBy | { problem: string } {
  if (names === undefined) return { period: 'month', service: false, status: false }
  const items = names.map((name) => name.trim().toLowerCase()).filter((name) => name !== '')
  const unknown = items.filter((item) => !(GROUP_NAMES as readonly string[]).includes(item))
  if (items.length === 0 || unknown.length > 0) {
    const got = unknown.length > 0 ? ` (got ${unknown.map((u) => `"${u}"`).join(', ')})` : ''
    return { problem: `group_by must be one or more of ${GROUP_NAMES.join(', ')}, comma-separated${got}.` }
  }
  const periods = [...new Set(items.filter((item): item is SummaryPeriod => (PERIODS as readonly string[]).includes(item)))]
  if (periods.length > 1) {
    return { problem: `group_by may name at most one period of ${PERIODS.join(', ')} (got ${periods.join(' and ')}); keep one of them.` }
  }
  return { period: periods[0], service: items.includes('service'), status: items.includes('status') }
}

/** The answer's `group_by`: the period first, then service, then status (the order of the groups' keys). */
export function groupByNames(groupBy: GroupBy): GroupName[] {
  return [
    ...(groupBy.period ? [groupBy.period] : []),
    ...(groupBy.service ? ['service' as const] : []),
    ...(groupBy.status ? ['status' as const] : []),
  ]
}

/** WordPress's start_of_week option: 0 (Sunday) to 6; 1 (Monday, WordPress's default) when missing or anything else. */
export function startOfWeekFrom(value: string | undefined): number {
  if (value === undefined) return 1
  const text = value.trim()
  return /^[0-6]$/.test(text) ? Number(text) : 1
}
