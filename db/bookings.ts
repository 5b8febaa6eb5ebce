// The reads of {prefix}booking_calendar_bookings the service makes: a count,
// a page, the first rows, or every row streamed. The SQL is in booking-queries.ts.
import type { Snapshot } from './snapshot.ts'
import type { Db } from './connect.ts'
import type { BookingFilter, BookingOrder } from './booking-filter.ts'
import {
  compileBookings, compileBookingsDigest, compileBookingsPage, compileCountQuery, EVERY_COLUMN, readServiceNames, type BookingColumns, type BookingRow, type BookingsDigestRow,
} from './booking-queries.ts'
import { readWithoutLostIndex, withoutLostIndex } from './lost-index.ts'
import { readRowsDigest, serviceNamesDigest, type RowsDigest } from './row-digest.ts'
import { rowsInTableOrder } from './server-dialect.ts'

/** How many bookings match, read in the snapshot the rows will come from. */
export async function countBookings(db: Db, snapshot: Snapshot, filter: BookingFilter): Promise<number> {
  const [row] = await snapshot.rows(compileCountQuery(db, filter))
  return Number(row?.total ?? 0)
}

/**
 * All matching bookings from the server's cursor, in batches, with
 * back-pressure. QUERY_TIMEOUT_MS bounds the time to the first row (the sort
 * happens before it) and any stall between rows, not the time a client takes to read a million rows.
 */
export async function* streamBookings(
  db: Db, snapshot: Snapshot, filter: BookingFilter, order: BookingOrder, rowTimeoutMs: number, columns: BookingColumns = EVERY_COLUMN,
): AsyncGenerator<BookingRow[]> {
  const names = await readServiceNames(db, snapshot, rowTimeoutMs)
  const read = () => snapshot.batches(compileBookings(db, filter, order, columns, undefined, false), { rowTimeoutMs })
  for await (const batch of withoutLostIndex(db, read)) {
    for (const row of batch) row.service_post_name = names.get(row.service_id) ?? null
    yield batch
  }
}

/**
 * The digest of the bookings streamBookingPackets would hand a sink, and of
 * the services' names it would tell it (db/row-digest.ts), read in `snapshot`
 * by one statement that sends no row: what a conditional request compares
 * with the tag its client holds.
 */
export async function digestBookings(db: Db, snapshot: Snapshot, filter: BookingFilter, columns: BookingColumns, rowTimeoutMs: number): Promise<RowsDigest> {
  const names = await readServiceNames(db, snapshot, rowTimeoutMs)
  const [row] = await readWithoutLostIndex(db, () => {
    const compiled = compileBookingsDigest(db, filter, columns)
    return snapshot.rows<BookingsDigestRow>({ ...compiled, sql: rowsInTableOrder(snapshot.server, compiled.sql) })
  })
  return { ...readRowsDigest(row), serviceNames: serviceNamesDigest(names) }
}

export async function findBookingsPage(db: Db, snapshot: Snapshot, filter: BookingFilter, limit: number, offset: number, columns: BookingColumns = EVERY_COLUMN): Promise<BookingRow[]> {
  return await snapshot.rows(compileBookingsPage(db, filter, limit, offset, columns))
}

/**
 * The first `limit` matching bookings in one statement, outside any
 * transaction: a single statement reads one snapshot by itself. Used to answer
 * small results without a count or a transaction (domain/slots.ts).
 */
export async function findFirstBookings(db: Db, filter: BookingFilter, order: BookingOrder, limit: number, columns: BookingColumns = EVERY_COLUMN): Promise<BookingRow[]> {
  return await readWithoutLostIndex(db, async () => (await db.executeQuery(compileBookings(db, filter, order, columns, limit))).rows)
}
