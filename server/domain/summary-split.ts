// summary/'s long booking-date ranges read in two halves at once
// (docs/performance.md). Pure.
import type { SummaryQuery as SummaryRowsQuery } from '../../db/summary.ts'
import { addDays, daysInclusive } from './day-arithmetic.ts'

/** Ranges of booking dates at least this many days long are counted in two halves at once. */
const SPLIT_MIN_DAYS = 62

/**
 * The booking-date range cut in two at a day, or the query whole. Each half
 * is its own statement on its own connection, so MariaDB reads a long range on
 * two cores (a year of a million bookings: 26 ms instead of 46); as a row is
 * one day, the halves' rows never share a group.
 */
export function splitByBookingDate(query: SummaryRowsQuery): SummaryRowsQuery[] {
  const { from, to } = query.filter.bookingDate ?? {}
  if (query.dateOf !== 'booking_date' || !from || !to) return [query]
  const days = daysInclusive(from, to)
  if (!(days > SPLIT_MIN_DAYS)) return [query]
  const lastOfFirstHalf = addDays(from, Math.floor((days - 1) / 2))
  return [
    { ...query, filter: { ...query.filter, bookingDate: { from, to: lastOfFirstHalf } } },
    { ...query, filter: { ...query.filter, bookingDate: { from: addDays(lastOfFirstHalf, 1), to } } },
  ]
}
