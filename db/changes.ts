// The reads of changes/ (API.md, "GET changes/"): a sync's page by id, a log
// delta's bookings by id, a digest delta's digests per period, the days and
// the rows of a changed period. Each is one statement, which reads one snapshot by itself
// (the digests are two, side by side, where an index finds the rows); the SQL is in
// booking-queries.ts.
import { sql } from 'kysely'
import type { Db } from './connect.ts'
import type { BookingFilter } from './booking-filter.ts'
import {
  bookingsDigestHalves, compileBookingDaysOfPeriod, compileBookingsAfterId, compileBookingsByIds, compileBookingsDayDigests, compileBookingsOfPeriod, compileBookingsOfPeriodAfter,
  type BookingColumns, type BookingRow, type DigestPeriod, type PeriodKind,
} from './booking-queries.ts'
import { readWithoutLostIndex } from './lost-index.ts'
import type { LogPosition } from './change-log.ts'
import { rowsInTableOrder, type DatabaseServer } from './server-dialect.ts'
import { readVisibleLogPosition } from './binlog-requirements.ts'
import { periodDigestsOfDays } from './day-digests.ts'

/**
 * Each period's digest (its number → "rows:sum:sum") of the bookings `filter`
 * matches: MariaDB's digests per day (compileBookingsDayDigests) added up by
 * period (day-digests.ts); on `server`'s terms, its rows read in the table's
 * order, as a 304's digest reads them (db/server-dialect.ts). Where an index
 * finds the rows, two statements read the two halves side by side, each one
 * snapshot of its own: a period's digest is still read before its rows are,
 * and the rows sent are digested and compared with it (server/domain/changes.ts,
 * decision 0038); the sums of the halves are the sums of the whole, to the
 * digit.
 */
export async function readPeriodDigests(db: Db, filter: BookingFilter, columns: BookingColumns, kind: PeriodKind, server?: DatabaseServer): Promise<Map<number, string>> {
  const halves = await readWithoutLostIndex(db, async () => await Promise.all(bookingsDigestHalves(db, filter).map(async (half) => {
    const compiled = compileBookingsDayDigests(db, filter, columns, half)
    return (await db.executeQuery(server === undefined ? compiled : { ...compiled, sql: rowsInTableOrder(server, compiled.sql) })).rows
  })))
  return periodDigestsOfDays(halves.flat(), kind)
}

export async function findBookingsAfterId(db: Db, filter: BookingFilter, columns: BookingColumns, afterId: number, limit: number): Promise<BookingRow[]> {
  return (await db.executeQuery(compileBookingsAfterId(db, filter, columns, afterId, limit))).rows
}

export async function findBookingsByIds(db: Db, filter: BookingFilter, columns: BookingColumns, ids: readonly number[]): Promise<BookingRow[]> {
  return (await db.executeQuery(compileBookingsByIds(db, filter, columns, ids))).rows
}

/** A period's matching bookings after `afterDay` (all when undefined), through `throughDay` (all when undefined), by day and id. */
export async function findBookingsOfPeriod(
  db: Db, filter: BookingFilter, columns: BookingColumns, period: DigestPeriod, afterDay: string | undefined, throughDay: string | undefined, limit: number,
): Promise<BookingRow[]> {
  return (await db.executeQuery(compileBookingsOfPeriod(db, filter, columns, period, afterDay, throughDay, limit))).rows
}

/** A period's matching bookings after the booking `after` (all when undefined), by day and id, at most `limit`. */
export async function findBookingsOfPeriodAfter(
  db: Db, filter: BookingFilter, columns: BookingColumns, period: DigestPeriod, after: { day: string; id: number } | undefined, limit: number,
): Promise<BookingRow[]> {
  return (await db.executeQuery(compileBookingsOfPeriodAfter(db, filter, columns, period, after, limit))).rows
}

/** How many bookings each day of a period after `afterDay` holds, by day (days without any left out). */
export async function countBookingsByDayOfPeriod(
  db: Db, filter: BookingFilter, period: DigestPeriod, afterDay: string | undefined,
): Promise<Array<{ day: string; bookings: number }>> {
  const { rows } = await db.executeQuery(compileBookingDaysOfPeriod(db, filter, period, afterDay))
  return rows.map((row) => ({ day: row.booking_date, bookings: Number(row.bookings) }))
}

/** The database server a log position belongs to: its server_id and its log's base name. */
export async function readLogServer(db: Db): Promise<string> {
  const { rows } = await sql<{ server_id: number | string; log_basename: string | null }>`select @@server_id as server_id, @@log_bin_basename as log_basename`.execute(db)
  const [row] = rows
  return `${row?.server_id ?? ''}:${(row?.log_basename ?? '').replace(/^.*\//, '')}`
}

/**
 * The server's binary log position now, up to which every change is visible to the reads that
 * follow (binlog-requirements.ts's readVisibleLogPosition: a consistent snapshot's position),
 * asked on this connection pool, on one of its connections (one statement on MariaDB): the log source's
 * account may (BINLOG MONITOR, REPLICATION CLIENT). Asked here rather than of the reader in the
 * primary: two trips between processes fewer on the way of every delta and sync.
 */
export async function readLogPosition(db: Db, server?: DatabaseServer): Promise<LogPosition> {
  const at = await db.connection().execute(async (connection) => await readVisibleLogPosition({
    query: async (statement) => [(await sql.raw(statement).execute(connection)).rows, undefined],
  }, server?.kind))
  if (at === undefined) throw new Error('the server keeps no binary log (log_bin is OFF)')
  return at
}

export type { LogPosition }
