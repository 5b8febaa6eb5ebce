// Every query on {prefix}booking_calendar_bookings.
import { sql, type CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { Snapshot } from './snapshot.ts'
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
}

/** `booking`: date, start (whole-day first: NULL sorts first), id. `service`: the same within each service. */
export type BookingOrder = 'booking' | 'service'

// The zero date sorts below every real DATETIME, so any created_at range
// starts here at the latest: a zero-date booking never matches (API.md, created_date).
const FIRST_REAL_DATETIME = '1000-01-01 00:00:00'

/** The WHERE of a filter; summary/ counts with the same one, so its counts agree with slots/. */
export function matches(eb: ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter: BookingFilter): Expression<SqlBool> {
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

/** How many bookings match, read in the snapshot the rows will come from. */
export async function countBookings(db: Db, snapshot: Snapshot, filter: BookingFilter): Promise<number> {
  const query = db
    .selectFrom('booking_calendar_bookings')
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .where((eb) => matches(eb, filter))
  const [row] = await snapshot.rows(query.compile())
  return Number(row?.total ?? 0)
}

function selectBookings(db: Db, filter: BookingFilter, order: BookingOrder) {
  return orderBookings(selectBookingColumns(db).where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter)), order)
}

function selectBookingColumns(db: Db) {
  return db
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
      'posts.post_name as service_post_name',
    ])
}

function orderBookings<Q extends { orderBy(column: 'booking_calendar_bookings.service_id' | 'booking_calendar_bookings.booking_date' | 'booking_calendar_bookings.time_from' | 'booking_calendar_bookings.id'): Q }>(query: Q, order: BookingOrder): Q {
  if (order === 'service') query = query.orderBy('booking_calendar_bookings.service_id')
  return query
    .orderBy('booking_calendar_bookings.booking_date')
    .orderBy('booking_calendar_bookings.time_from')
    .orderBy('booking_calendar_bookings.id')
}

/** The SQL the service sends for these bookings, for EXPLAIN and the benchmark's raw timings. */
export function compileBookingsQuery(db: Db, filter: BookingFilter, order: BookingOrder, page?: { limit: number; offset: number }) {
  const query = selectBookings(db, filter, order)
  return (page ? query.limit(page.limit).offset(page.offset) : query).compile()
}

/**
 * All matching bookings from the server's cursor, in batches, with
 * back-pressure. QUERY_TIMEOUT_MS bounds the time to the first row (the sort
 * happens before it) and any stall between rows, not the time a client takes to read a million rows.
 */
export function streamBookings(
  db: Db, snapshot: Snapshot, filter: BookingFilter, order: BookingOrder, rowTimeoutMs: number,
): AsyncGenerator<BookingRow[]> {
  // The selected columns are BookingRow's (the join makes Kysely's inferred type wider than it is).
  const query = selectBookings(db, filter, order).compile() as CompiledQuery<BookingRow>
  return snapshot.batches(query, { rowTimeoutMs })
}

/**
 * One page of matching bookings in booking order (at most 1000 rows: per_page's
 * bound), as a deferred join: the page's ids are cut from the ordered ids alone,
 * which the recommended index (booking_date, time_from, id, status) holds,
 * status filter included, and only those rows are read and joined. Skipping the offset rows
 * then walks the index instead of reading and joining every skipped row, so a
 * page costs nearly the same at any depth.
 */
export function compileBookingsPage(db: Db, filter: BookingFilter, limit: number, offset: number): CompiledQuery<BookingRow> {
  // Without plugins: a subquery is transformed by the outer query's compile
  // too, and would otherwise have its table prefixed twice.
  const pageIds = db.withoutPlugins()
    .selectFrom('booking_calendar_bookings')
    .select('booking_calendar_bookings.id')
    .where((eb) => matches(eb, filter))
    .orderBy('booking_calendar_bookings.booking_date')
    .orderBy('booking_calendar_bookings.time_from')
    .orderBy('booking_calendar_bookings.id')
    .limit(limit)
    .offset(offset)
  // The derived table's name is written as raw SQL: the table prefix plugin
  // would otherwise prefix it like a table (connect.ts).
  const query = selectBookingColumns(db)
    .innerJoin(pageIds.as('page_ids'), (join) => join.on(sql<SqlBool>`page_ids.id = ${sql.ref('booking_calendar_bookings.id')}`))
  return orderBookings(query, 'booking').compile() as CompiledQuery<BookingRow>
}

export async function findBookingsPage(db: Db, snapshot: Snapshot, filter: BookingFilter, limit: number, offset: number): Promise<BookingRow[]> {
  return await snapshot.rows(compileBookingsPage(db, filter, limit, offset))
}

/**
 * The first `limit` matching bookings in one statement, outside any
 * transaction: a single statement reads one snapshot by itself. Used to answer
 * small results without a count or a transaction (domain/slots.ts).
 */
export async function findFirstBookings(db: Db, filter: BookingFilter, order: BookingOrder, limit: number): Promise<BookingRow[]> {
  return await selectBookings(db, filter, order).limit(limit).execute() as BookingRow[]
}
