// The range of `slots/?format=ics` (API.md, "Calendar feeds: format=ics"):
// without start and end, 30 days before today to one year after, site time.
// Pure: today comes in as a date.
import { invalidParams } from '../errors.ts'
import { addDays, addMonthsClamped } from './day-arithmetic.ts'
import { checkTimedRange, notPastLastRangeDay, type DateRange } from './rules.ts'

export const FEED_DAYS_BEFORE = 30
export const FEED_MONTHS_AFTER = 12

/**
 * `start` omitted: 30 days before today. `end` omitted: one year after `start`
 * when `start` is given, else one year after today. Either way at most
 * `maxRangeDays` days, counting both ends; a range that breaks that (or an end
 * before the default start) is a 400 naming the parameter to change.
 */
export function resolveFeedRange(start: string | undefined, end: string | undefined, today: string, maxRangeDays: number): DateRange {
  const range = {
    start: start ?? addDays(today, -FEED_DAYS_BEFORE),
    end: end ?? notPastLastRangeDay(addMonthsClamped(start ?? today, FEED_MONTHS_AFTER)),
  }
  if (start === undefined && range.end < range.start) {
    throw invalidParams({ end: `end must not be before start, which for a calendar feed defaults to ${FEED_DAYS_BEFORE} days before today (${range.start}).` })
  }
  const given = {
    // Stryker disable next-line ConditionalExpression: checkRange reads it only for an end before start, refused above when start is not given
    start: start !== undefined,
    end: end !== undefined,
  }
  const problem = checkTimedRange(range, given, maxRangeDays)
  if (problem) throw invalidParams({ [problem.param]: problem.message })
  return range
}
