// The one query of GET summary/ (API.md, "GET summary/"): bookings counted and
// summed with GROUP BY in the database, so a year of a million bookings leaves
// MariaDB as at most one row per day, service (and status), never as bookings.
import { sql, type CompiledQuery, type ExpressionBuilder } from 'kysely'
import { matches, type BookingFilter } from './bookings.ts'
import type { Database } from './database.ts'
import type { Db } from './connect.ts'

export interface SummaryQuery {
  filter: BookingFilter
  /** Which date gives a booking its day: booking_date, or the day of created_at (filter_by=created_date). */
  dateOf: 'booking_date' | 'created_date'
  byStatus: boolean
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
}

// Each measure is as cheap per booking as it can be, as it runs for every
// booking of the range (200,000 in a busy year): the difference is NULL where
// either time is, and SUM skips NULLs, so no CASE; whole-day bookings are those
// without time_from, which COUNT(time_from) leaves out.
const BOOKED_SECONDS = sql<number | string | null>`SUM(TIME_TO_SEC(time_to) - TIME_TO_SEC(time_from) + 86400 * (time_to < time_from))`
const ALL_DAY_BOOKINGS = sql<number | string>`COUNT(*) - COUNT(time_from)`

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
    ])
    .where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, query.filter))
  const day = byCreation ? sql`DATE(created_at)` : sql`booking_date`
  const groups = [day, sql`service_id`, ...(query.byStatus ? [sql`status`] : []), ...(byCreation ? [sql`whole_day_date`] : [])]
  // Node puts the groups in order: ORDER BY NULL spares MariaDB the sort its GROUP BY would imply.
  return base.groupBy(groups).orderBy(sql`NULL`)
}

/** The SQL of a summary, for EXPLAIN in `npm run indexes`. */
export function compileSummaryQuery(db: Db, query: SummaryQuery): CompiledQuery {
  return selectSummary(db, query).compile()
}

/** The rows of one statement; a long range is cut in two by the caller (domain/summary.ts, splitByBookingDate). */
export async function findSummaryRows(db: Db, query: SummaryQuery): Promise<SummaryRow[]> {
  const rows = await selectSummary(db, query).execute()
  // COUNT and SUM arrive as strings (DECIMAL) from mysql2.
  return rows.map((row) => ({
    day: row.day,
    service_id: Number(row.service_id),
    status: row.status,
    whole_day_date: Number(row.all_day_bookings ?? 0) > 0 ? row.whole_day_date : null,
    bookings: Number(row.bookings),
    all_day_bookings: Number(row.all_day_bookings ?? 0),
    booked_seconds: Number(row.booked_seconds ?? 0),
  }))
}
