// The one query of GET summary/ (API.md, "GET summary/"): bookings counted and
// summed with GROUP BY in the database, so a year of a million bookings leaves
// MariaDB as a few hundred rows, never as bookings.
import { sql, type CompiledQuery, type ExpressionBuilder, type RawBuilder } from 'kysely'
import { matches, type BookingFilter } from './bookings.ts'
import type { Database } from './database.ts'
import type { Db } from './connect.ts'

export type SummaryPeriod = 'day' | 'week' | 'month' | 'year'

export interface SummaryQuery {
  filter: BookingFilter
  /** The period to group by, or none. */
  period: SummaryPeriod | undefined
  /** Which date gives a booking its period: booking_date, or the day of created_at (filter_by=created_date). */
  dateOf: 'booking_date' | 'created_date'
  byStatus: boolean
  /** 0 = Sunday … 6 = Saturday: the first day of a week. */
  startOfWeek: number
}

/**
 * One row per period, service, status (when grouped by it) and, for whole-day
 * bookings only, their booking_date: a whole-day booking counts the open
 * minutes of its own day, which only Node knows (from the disabled-time rules).
 */
export interface SummaryRow {
  /** `YYYY-MM-DD`: the first day of the whole period (not cut to the range); null without a period. */
  period_key: string | null
  service_id: number
  /** Trimmed, lower case; null when not grouped by status. */
  status: string | null
  /** booking_date of whole-day bookings; null for bookings with a start time. */
  whole_day_date: string | null
  bookings: number
  /** Over bookings with both times: time_to − time_from, plus a day past midnight; 24:00:00 is 86,400. */
  booked_seconds: number
}

function periodKey(period: SummaryPeriod | undefined, dateOf: SummaryQuery['dateOf'], startOfWeek: number): RawBuilder<string | null> {
  const day = dateOf === 'created_date' ? sql`DATE(created_at)` : sql`booking_date`
  switch (period) {
    case 'day': return sql<string>`${day}`
    // DAYOFWEEK is 1 = Sunday … 7; back to the last day that is startOfWeek.
    case 'week': return sql<string>`${day} - INTERVAL ((DAYOFWEEK(${day}) + 6 - ${sql.lit(startOfWeek)}) % 7) DAY`
    case 'month': return sql<string>`DATE_FORMAT(${day}, '%Y-%m-01')`
    case 'year': return sql<string>`DATE_FORMAT(${day}, '%Y-01-01')`
    default: return sql<null>`NULL`
  }
}

function selectSummary(db: Db, query: SummaryQuery) {
  return db
    .selectFrom('booking_calendar_bookings')
    .select([
      periodKey(query.period, query.dateOf, query.startOfWeek).as('period_key'),
      'booking_calendar_bookings.service_id',
      (query.byStatus ? sql<string | null>`LOWER(TRIM(status))` : sql<string | null>`NULL`).as('status'),
      sql<string | null>`IF(time_from IS NULL, booking_date, NULL)`.as('whole_day_date'),
      sql<number | string>`COUNT(*)`.as('bookings'),
      sql<number | string | null>`SUM(CASE WHEN time_from IS NOT NULL AND time_to IS NOT NULL
        THEN TIME_TO_SEC(time_to) - TIME_TO_SEC(time_from) + IF(time_to < time_from, 86400, 0) ELSE 0 END)`.as('booked_seconds'),
    ])
    .where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, query.filter))
    .groupBy([sql`period_key`, 'booking_calendar_bookings.service_id', sql`status`, sql`whole_day_date`])
}

/** The SQL of a summary, for EXPLAIN in `npm run indexes`. */
export function compileSummaryQuery(db: Db, query: SummaryQuery): CompiledQuery {
  return selectSummary(db, query).compile()
}

export async function findSummaryRows(db: Db, query: SummaryQuery): Promise<SummaryRow[]> {
  const rows = await selectSummary(db, query).execute()
  // COUNT and SUM arrive as strings (DECIMAL) from mysql2.
  return rows.map((row) => ({
    period_key: row.period_key,
    service_id: Number(row.service_id),
    status: row.status,
    whole_day_date: row.whole_day_date,
    bookings: Number(row.bookings),
    booked_seconds: Number(row.booked_seconds ?? 0),
  }))
}
