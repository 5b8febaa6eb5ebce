// The bookings that may take a service's time, for availability/ (API.md,
// "GET availability/"): only the four columns the answer needs, of the
// services asked for, over the range and the day before it (a slot past
// midnight runs into the range). Read as a cursor on the stream pool: two
// years of a large site is hundreds of thousands of rows, each folded into two
// numbers as it arrives (server/domain/availability.ts).
import type { CompiledQuery } from 'kysely'
import type { Db } from './database.ts'
import { matches, type BookingFilter } from './booking-filter.ts'

export interface BlockingRow {
  service_id: number
  booking_date: string
  time_from: string | null
  time_to: string | null
}

export interface BlockingFilter {
  /** One service, or undefined for all of them (the caller keeps the ones it answers for). */
  serviceId: number | undefined
  /** Lower-case statuses; the column's _ci collation matches `Booked ` too (PLUGIN_TABLES.md). */
  statuses: string[]
  /** Inclusive `YYYY-MM-DD` bounds on booking_date. */
  from: string
  to: string
}

export function compileBlockingBookingsQuery(db: Db, filter: BlockingFilter): CompiledQuery<BlockingRow> {
  const bookings: BookingFilter = { serviceId: filter.serviceId, statuses: filter.statuses, bookingDate: { from: filter.from, to: filter.to } }
  return db.selectFrom('booking_calendar_bookings')
    .select(['booking_calendar_bookings.service_id', 'booking_calendar_bookings.booking_date', 'booking_calendar_bookings.time_from', 'booking_calendar_bookings.time_to'])
    .where((eb) => matches(eb, bookings))
    .compile()
}
