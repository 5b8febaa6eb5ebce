// Every query on {prefix}booking_calendar_bookings.
import { CompiledQuery, sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { Database } from './database.ts'
import type { Db } from './connect.ts'

export interface BookingFilter {
  serviceId?: number
  /** Lower-case statuses; the column's _ci collation also matches `Booked` and `booked  ` (PLUGIN_TABLES.md). */
  statuses?: string[]
  /** Inclusive `YYYY-MM-DD` bounds on booking_date. */
  bookingDate?: { from?: string; to?: string }
  /** Inclusive `YYYY-MM-DD HH:MM:SS` bounds on created_at. */
  createdAt?: { from?: string; to?: string }
}

/** A booking row with its service's slug and status; both null when the service post is gone. */
export interface BookingRow {
  id: number
  service_id: number
  status: string
  booking_date: string
  time_from: string | null
  time_to: string | null
  customer_name: string
  customer_email: string
  customer_phone: string
  note: string | null
  created_at: string
  service_post_name: string | null
  service_post_status: string | null
}

/** `booking`: date, start (whole-day first: NULL sorts first), id. `service`: the same within each service. */
export type BookingOrder = 'booking' | 'service'

// The zero date sorts below every real DATETIME, so any created_at range
// starts here at the latest: a zero-date booking never matches (API.md, created_date).
const FIRST_REAL_DATETIME = '1000-01-01 00:00:00'

function matches(eb: ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter: BookingFilter): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = []
  if (filter.serviceId !== undefined) conditions.push(eb('booking_calendar_bookings.service_id', '=', filter.serviceId))
  if (filter.statuses) conditions.push(eb('booking_calendar_bookings.status', 'in', filter.statuses))
  if (filter.bookingDate?.from) conditions.push(eb('booking_calendar_bookings.booking_date', '>=', filter.bookingDate.from))
  if (filter.bookingDate?.to) conditions.push(eb('booking_calendar_bookings.booking_date', '<=', filter.bookingDate.to))
  if (filter.createdAt) {
    conditions.push(eb('booking_calendar_bookings.created_at', '>=', filter.createdAt.from ?? FIRST_REAL_DATETIME))
    if (filter.createdAt.to) conditions.push(eb('booking_calendar_bookings.created_at', '<=', filter.createdAt.to))
  }
  return eb.and(conditions)
}

export async function countBookings(db: Db, filter: BookingFilter): Promise<number> {
  const row = await db
    .selectFrom('booking_calendar_bookings')
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .where((eb) => matches(eb, filter))
    .executeTakeFirstOrThrow()
  return Number(row.total)
}

function selectBookings(db: Db, filter: BookingFilter, order: BookingOrder) {
  let query = db
    .selectFrom('booking_calendar_bookings')
    // A service ID is only a service when its post has post_type bc_service (PLUGIN_TABLES.md).
    .leftJoin('posts', (join) => join
      .onRef('posts.ID', '=', 'booking_calendar_bookings.service_id')
      .on('posts.post_type', '=', 'bc_service'))
    .select([
      'booking_calendar_bookings.id', 'booking_calendar_bookings.service_id', 'booking_calendar_bookings.status',
      'booking_calendar_bookings.booking_date', 'booking_calendar_bookings.time_from', 'booking_calendar_bookings.time_to',
      'booking_calendar_bookings.customer_name', 'booking_calendar_bookings.customer_email',
      'booking_calendar_bookings.customer_phone', 'booking_calendar_bookings.note', 'booking_calendar_bookings.created_at',
      'posts.post_name as service_post_name', 'posts.post_status as service_post_status',
    ])
    .where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter))
  if (order === 'service') query = query.orderBy('booking_calendar_bookings.service_id')
  return query
    .orderBy('booking_calendar_bookings.booking_date')
    .orderBy('booking_calendar_bookings.time_from')
    .orderBy('booking_calendar_bookings.id')
}

/**
 * All matching bookings, row by row from the server's cursor, with back-pressure,
 * read on `trx`'s connection.
 *
 * QUERY_TIMEOUT_MS bounds how long the database works before it answers, not how
 * long a client takes to read a million rows: the session's max_statement_time
 * would cut a healthy answer off mid-stream. So this one statement runs without
 * it, and a watchdog on `db`'s pool cancels it on the server (KILL QUERY) when no
 * first row has come within `firstRowTimeoutMs`; the sort happens before that row.
 */
export async function* streamBookings(
  db: Db, trx: Db, filter: BookingFilter, order: BookingOrder, firstRowTimeoutMs: number,
): AsyncGenerator<BookingRow> {
  const { rows } = await sql<{ id: number }>`SELECT CONNECTION_ID() AS id`.execute(trx)
  const connectionId = rows[0]!.id
  const compiled = selectBookings(trx, filter, order).compile()
  const unbounded = CompiledQuery.raw(`SET STATEMENT max_statement_time = 0 FOR ${compiled.sql}`, [...compiled.parameters])
  const watchdog = setTimeout(() => {
    sql`KILL QUERY ${connectionId}`.execute(db).catch(() => { /* the query has ended, or the database is gone */ })
  }, firstRowTimeoutMs)
  try {
    for await (const result of trx.getExecutor().stream<BookingRow>(unbounded, 1)) {
      clearTimeout(watchdog)
      yield* result.rows
    }
  } finally {
    clearTimeout(watchdog)
  }
}

/** One page of matching bookings in booking order (at most 1000 rows: per_page's bound). */
export async function findBookingsPage(db: Db, filter: BookingFilter, limit: number, offset: number): Promise<BookingRow[]> {
  return await selectBookings(db, filter, 'booking').limit(limit).offset(offset).execute() as BookingRow[]
}
