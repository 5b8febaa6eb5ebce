// The reads of changes/ (API.md, "GET changes/"): a sync's page by id, a log
// delta's bookings by id, a digest delta's digests per month and the rows of
// a changed month. Each is one statement, which reads one snapshot by itself;
// the SQL is in booking-queries.ts.
import { sql } from 'kysely'
import type { Db } from './connect.ts'
import type { BookingFilter } from './booking-filter.ts'
import {
  compileBookingsAfterId, compileBookingsByIds, compileBookingsMonthDigests, compileBookingsOfMonth, type BookingColumns, type BookingRow,
} from './booking-queries.ts'
import { readRowsDigest } from './row-digest.ts'
import { readWithoutLostIndex } from './lost-index.ts'
import type { LogPosition } from './change-log.ts'
import { rowsInTableOrder, type DatabaseServer } from './server-dialect.ts'

/**
 * Each month's digest ("YYYY-MM" → "rows:sum:sum") of the bookings `filter`
 * matches, in one statement; on `server`'s terms, its rows read in the
 * table's order, as a 304's digest reads them (db/server-dialect.ts).
 */
export async function readMonthDigests(db: Db, filter: BookingFilter, columns: BookingColumns, server?: DatabaseServer): Promise<Map<string, string>> {
  const rows = await readWithoutLostIndex(db, async () => {
    const compiled = compileBookingsMonthDigests(db, filter, columns)
    return (await db.executeQuery(server === undefined ? compiled : { ...compiled, sql: rowsInTableOrder(server, compiled.sql) })).rows
  })
  const months = new Map<string, string>()
  for (const row of rows) {
    const digest = readRowsDigest(row)
    months.set(String(row.month), `${digest.rows}:${digest.crcSum}`)
  }
  return months
}

export async function findBookingsAfterId(db: Db, filter: BookingFilter, columns: BookingColumns, afterId: number, limit: number): Promise<BookingRow[]> {
  return (await db.executeQuery(compileBookingsAfterId(db, filter, columns, afterId, limit))).rows
}

export async function findBookingsByIds(db: Db, filter: BookingFilter, columns: BookingColumns, ids: readonly number[]): Promise<BookingRow[]> {
  return (await db.executeQuery(compileBookingsByIds(db, filter, columns, ids))).rows
}

/** A month's matching bookings after `afterDay` (all when undefined), through `throughDay` (all when undefined), by day and id. */
export async function findBookingsOfMonth(
  db: Db, filter: BookingFilter, columns: BookingColumns, month: string, afterDay: string | undefined, throughDay: string | undefined, limit: number,
): Promise<BookingRow[]> {
  return await readWithoutLostIndex(db, async () => (await db.executeQuery(compileBookingsOfMonth(db, filter, columns, month, afterDay, throughDay, limit))).rows)
}

/** The database server a log position belongs to: its server_id and its log's base name. */
export async function readLogServer(db: Db): Promise<string> {
  const { rows } = await sql<{ server_id: number | string; log_basename: string | null }>`select @@server_id as server_id, @@log_bin_basename as log_basename`.execute(db)
  const [row] = rows
  return `${row?.server_id ?? ''}:${(row?.log_basename ?? '').replace(/^.*\//, '')}`
}

export type { LogPosition }
