// The one query of GET summary/ (API.md, "GET summary/"): bookings counted and
// summed with GROUP BY in the database, so a year of a million bookings leaves
// MariaDB as at most one row per day, service (and status), never as bookings.
import { sql, type CompiledQuery } from 'kysely'
import { matches, type BookingFilter } from './booking-filter.ts'
import type { Db } from './connect.ts'
import type { BoundedPool } from './bounded-pool.ts'
import { readCells, type RowPacketSink } from './row-packets.ts'

export interface SummaryQuery {
  filter: BookingFilter
  /** Which date gives a booking its day: booking_date, or the day of created_at (filter_by=created_date). */
  dateOf: 'booking_date' | 'created_date'
  byStatus: boolean
  /** Lower-case statuses whose bookings take time (`blocking`, as availability/ reads it); the column's _ci collation matches `Booked ` too. */
  blocking: string[]
}

/**
 * One row per day, service and (when grouped by it) stored status. Periods are
 * made of days in Node: grouping by the columns `booking_date, service_id,
 * status` in the order of the index bc_api_summary lets MariaDB aggregate while
 * it reads the index, without a temporary table.
 */
export interface SummaryRow {
  /** `YYYY-MM-DD`: the booking_date, or the creation day with filter_by=created_date. */
  day: string
  service_id: number
  /** As stored (the collation groups `Booked ` with `booked`); null when not grouped by status. */
  status: string | null
  /** The booking_date of the row's whole-day bookings, whose open minutes they count; null when it has none. */
  whole_day_date: string | null
  bookings: number
  all_day_bookings: number
  /** Over bookings with both times: time_to − time_from, plus a day past midnight; 24:00:00 is 86,400. */
  booked_seconds: number
  /** Of all_day_bookings, those whose status blocks. Absent (rows made by hand): all of them. */
  blocked_all_day_bookings?: number
  /** Of booked_seconds, those of bookings whose status blocks. Absent (rows made by hand): all of them. */
  blocked_seconds?: number
}

// Each measure is as cheap per booking as it can be, as it runs for every
// booking of the range (200,000 in a busy year): the difference is NULL where
// either time is, and SUM skips NULLs, so no CASE; whole-day bookings are those
// without time_from, which COUNT(time_from) leaves out.
const BOOKED_SECONDS = sql<number | string | null>`SUM(TIME_TO_SEC(time_to) - TIME_TO_SEC(time_from) + 86400 * (time_to < time_from))`
const ALL_DAY_BOOKINGS = sql<number | string>`COUNT(*) - COUNT(time_from)`
// The same over the blocking statuses only: `status IN (...)` as availability/'s query
// matches it (db/booking-filter.ts), so the two agree on which bookings take time.
const blocks = (statuses: string[]) => sql`status IN (${sql.join(statuses)})`
const blockedSeconds = (statuses: string[]) =>
  sql<number | string | null>`SUM(IF(${blocks(statuses)}, TIME_TO_SEC(time_to) - TIME_TO_SEC(time_from) + 86400 * (time_to < time_from), NULL))`
const blockedAllDayBookings = (statuses: string[]) => sql<number | string | null>`SUM(time_from IS NULL AND ${blocks(statuses)})`

function selectSummary(db: Db, query: SummaryQuery) {
  const byCreation = query.dateOf === 'created_date'
  const base = db
    .selectFrom('booking_calendar_bookings')
    .select([
      (byCreation ? sql<string>`DATE(created_at)` : sql<string>`booking_date`).as('day'),
      'booking_calendar_bookings.service_id',
      (query.byStatus ? sql<string | null>`status` : sql<string | null>`NULL`).as('status'),
      // With filter_by=created_date a row's whole-day bookings keep their own booking_date apart.
      (byCreation ? sql<string | null>`IF(time_from IS NULL, booking_date, NULL)` : sql<string | null>`booking_date`).as('whole_day_date'),
      sql<number | string>`COUNT(*)`.as('bookings'),
      ALL_DAY_BOOKINGS.as('all_day_bookings'),
      BOOKED_SECONDS.as('booked_seconds'),
      blockedAllDayBookings(query.blocking).as('blocked_all_day_bookings'),
      blockedSeconds(query.blocking).as('blocked_seconds'),
    ])
    .where((eb) => matches(eb, query.filter))
  const day = byCreation ? sql`DATE(created_at)` : sql`booking_date`
  const groups = [day, sql`service_id`, ...(query.byStatus ? [sql`status`] : []), ...(byCreation ? [sql`whole_day_date`] : [])]
  // Node puts the groups in order: ORDER BY NULL spares MariaDB the sort its GROUP BY would imply.
  return base.groupBy(groups).orderBy(sql`NULL`)
}

function compileSummaryQuery(db: Db, query: SummaryQuery): CompiledQuery {
  return selectSummary(db, query).compile()
}

/** The SQL of a summary, for server/tools.ts (EXPLAIN in `npm run indexes`, the bench). */
export const statementsForTools = { compileSummaryQuery }

/**
 * Where a summary's rows go, one at a time as they arrive (SummaryRow's fields,
 * in its order): domain/summary-rows.ts keeps them as numbers, as objects kept
 * until the last made the garbage collector a quarter of a summary's CPU (docs/performance.md).
 */
export interface SummaryRowSink {
  add(
    day: string, serviceId: number, status: string | null, wholeDayDate: string | null, bookings: number, allDayBookings: number, bookedSeconds: number,
    blockedAllDayBookings: number, blockedSeconds: number,
  ): void
}

/** A row as mysql2 makes it, for a result the packet reader leaves to it. */
export interface ParsedSummaryRow {
  day: string | null
  service_id: number | string
  status: string | null
  whole_day_date: string | null
  bookings: number | string
  all_day_bookings: number | string | null
  booked_seconds: number | string | null
  blocked_all_day_bookings?: number | string | null
  blocked_seconds?: number | string | null
}

/** The result's cells, in selectSummary's order. */
const CELLS = 9
const CELL_START = new Int32Array(CELLS)
const CELL_LENGTH = new Int32Array(CELLS)

/**
 * The rows of one statement, each handed to `into` as it arrives; a long range
 * is cut in two by the caller (domain/summary-split.ts, splitByBookingDate), both
 * halves into the same sink. The cells are read from the row packets
 * (db/row-packets.ts), so no row becomes an object; COUNT and SUM come as text
 * (DECIMAL), NULL where no booking had times.
 */
export async function findSummaryRows(db: Db, pool: BoundedPool, query: SummaryQuery, into: SummaryRowSink): Promise<void> {
  const compiled = compileSummaryQuery(db, query)
  const lease = await pool.acquire()
  try {
    const rows = await lease.query<ParsedSummaryRow | number>(compiled.sql, compiled.parameters, undefined, summaryRowPackets(into))
    // Objects only if mysql2 no longer hands its packets over (db/row-packets.ts).
    for (const row of rows) if (typeof row === 'object') addParsedSummaryRow(into, row)
  } finally {
    lease.release()
  }
}

/** The rows of a summary's result, read from their packets into `into`. */
export function summaryRowPackets(into: SummaryRowSink): RowPacketSink<ParsedSummaryRow> {
  return {
    accepts: (columns) => columns.length === CELLS,
    row(bytes, start, end, row) {
      if (!readCells(bytes, start, end, CELLS, CELL_START, CELL_LENGTH)) return addParsedSummaryRow(into, row.parsed())
      const allDayBookings = cellNumber(bytes, 5)
      into.add(
        cellText(bytes, 0, 'latin1') ?? '', cellNumber(bytes, 1), cellText(bytes, 2, 'utf8'),
        allDayBookings > 0 ? cellText(bytes, 3, 'latin1') : null,
        cellNumber(bytes, 4), allDayBookings, cellNumber(bytes, 6), cellNumber(bytes, 7), cellNumber(bytes, 8),
      )
    },
  }
}

/** A row as an object (mysql2's, or a SummaryRow), into the sink: the values the packet reader gives. */
export function addParsedSummaryRow(into: SummaryRowSink, row: ParsedSummaryRow): void {
  const allDayBookings = Number(row.all_day_bookings ?? 0)
  const bookedSeconds = Number(row.booked_seconds ?? 0)
  into.add(row.day ?? '', Number(row.service_id), row.status, allDayBookings > 0 ? row.whole_day_date : null,
    Number(row.bookings), allDayBookings, bookedSeconds,
    row.blocked_all_day_bookings === undefined ? allDayBookings : Number(row.blocked_all_day_bookings ?? 0),
    row.blocked_seconds === undefined ? bookedSeconds : Number(row.blocked_seconds ?? 0))
}

/** Cell `cell` of the row read last as text; null for SQL NULL. */
function cellText(bytes: Buffer, cell: number, encoding: 'latin1' | 'utf8'): string | null {
  const length = CELL_LENGTH[cell]!
  if (length < 0) return null
  const start = CELL_START[cell]!
  return bytes.toString(encoding, start, start + length)
}

/** Cell `cell` of the row read last as a number, 0 for SQL NULL: its digits read here, any other text by Number. */
function cellNumber(bytes: Buffer, cell: number): number {
  const length = CELL_LENGTH[cell]!
  if (length < 0) return 0
  const start = CELL_START[cell]!
  let value = 0
  for (let at = start; at < start + length; at++) {
    const digit = bytes[at]! - 48
    // A sign, a fraction (times with fractional seconds) or an exponent.
    if (digit < 0 || digit > 9) return Number(bytes.toString('latin1', start, start + length))
    value = value * 10 + digit
  }
  return value
}
