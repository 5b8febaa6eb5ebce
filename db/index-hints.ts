// The index a bookings query names, where MariaDB would scan and sort
// (db/booking-indexes.ts; decision 0019).
import type { CompiledQuery } from 'kysely'
import type { Db } from './connect.ts'
import { bookingDateIndex, serviceDateIndex } from './booking-indexes.ts'
import type { BookingFilter, BookingOrder } from './booking-filter.ts'

/**
 * The index to name, if any: the booking-date index for a range of booking dates
 * across services or the whole table in booking order, the service-date index for
 * the whole table in service order. Statuses or creation dates alone are left to
 * the optimizer: through the index every row would be looked up.
 */
export function hintedIndex(db: Db, filter: BookingFilter, order: BookingOrder): string | undefined {
  if (filter.serviceId !== undefined) return undefined
  if (filter.bookingDate?.from !== undefined || filter.bookingDate?.to !== undefined) return bookingDateIndex(db)
  if (filter.statuses !== undefined || filter.createdAt?.from !== undefined || filter.createdAt?.to !== undefined) return undefined
  return order === 'booking' ? bookingDateIndex(db) : serviceDateIndex(db)
}

/** The query with `FORCE INDEX` on its bookings table: Kysely has no index hints, so it goes into the compiled text. */
export function forceIndex<Row>(compiled: CompiledQuery<Row>, index: string): CompiledQuery<Row> {
  const from = /^(.*? from `[^`]*booking_calendar_bookings`)( .*)$/s.exec(compiled.sql)
  if (!from) return compiled
  return { ...compiled, sql: `${from[1]} FORCE INDEX (\`${index.replace(/`/g, '``')}\`)${from[2]}` }
}
