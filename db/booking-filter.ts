// Which bookings a read asks for: the filter, its WHERE, and the order. slots/,
// summary/, availability/ and the answers' tags all read through `matches`.
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import type { Database } from './database.ts'

export interface BookingFilter {
  serviceId?: number
  /** Lower-case statuses; the column's _ci collation also matches `Booked` and `booked  ` (PLUGIN_TABLES.md). */
  statuses?: string[]
  /** Inclusive `YYYY-MM-DD` bounds on booking_date. */
  bookingDate?: { from?: string; to?: string }
  /** Inclusive `YYYY-MM-DD HH:MM:SS` bounds on created_at. */
  createdAt?: { from?: string; to?: string }
}

/** `booking`: date, start (whole-day first: NULL sorts first), id. `service`: the same within each service. */
export type BookingOrder = 'booking' | 'service'

// The zero date sorts below every real DATETIME, so any created_at range
// starts here at the latest: a zero-date booking never matches (API.md, created_date;
// docs/api.md, "Choices made where the contract is silent").
const FIRST_REAL_DATETIME = '1000-01-01 00:00:00'
// The same for booking_date: a range given by its `end` alone never matches the zero date either.
const FIRST_REAL_DATE = '1000-01-01'

/** The WHERE of a filter; summary/ counts with the same one, so its counts agree with slots/. */
export function matches(eb: ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter: BookingFilter): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = []
  if (filter.serviceId !== undefined) conditions.push(eb('booking_calendar_bookings.service_id', '=', filter.serviceId))
  if (filter.statuses) conditions.push(eb('booking_calendar_bookings.status', 'in', filter.statuses))
  if (filter.bookingDate) conditions.push(eb('booking_calendar_bookings.booking_date', '>=', filter.bookingDate.from ?? FIRST_REAL_DATE))
  if (filter.bookingDate?.to !== undefined) conditions.push(eb('booking_calendar_bookings.booking_date', '<=', filter.bookingDate.to))
  if (filter.createdAt) {
    conditions.push(eb('booking_calendar_bookings.created_at', '>=', filter.createdAt.from ?? FIRST_REAL_DATETIME))
    if (filter.createdAt.to !== undefined) conditions.push(eb('booking_calendar_bookings.created_at', '<=', filter.createdAt.to))
  }
  return eb.and(conditions)
}
