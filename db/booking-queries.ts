// The SQL of every read of {prefix}booking_calendar_bookings, compiled once per
// shape of filter (db/compiled-shapes.ts).
import { sql, type CompiledQuery, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { Snapshot } from './snapshot.ts'
import type { Database } from './database.ts'
import type { Db } from './connect.ts'
import { compiledShapesOf } from './compiled-shapes.ts'
import { matches, type BookingFilter, type BookingOrder } from './booking-filter.ts'
import { forceIndex, hintedIndex } from './index-hints.ts'
import { rowsDigestSql, type DigestedColumn } from './row-digest.ts'

/** A booking row with its service's slug and status; both null when the service post is gone. */
export interface BookingRow {
  id: number
  service_id: number
  status: string
  booking_date: string
  time_from: string | null
  time_to: string | null
  /** The customer's three fields are '' when they were not read (BookingColumns). */
  customer_name: string
  customer_email: string
  customer_phone: string
  note: string | null
  created_at: string
  service_post_name: string | null
}

/** The columns of a bookings query, in the order MariaDB sends them (BookingRow); the SELECT list is made from it. */
export const BOOKING_ROW_COLUMNS = [
  'id', 'service_id', 'status', 'booking_date', 'time_from', 'time_to',
  'customer_name', 'customer_email', 'customer_phone', 'note', 'created_at', 'service_post_name',
] as const

/** true only when A and B name the same keys: a column added to BookingRow and not to BOOKING_ROW_COLUMNS (or the other way) does not compile. */
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const BOOKING_ROW_COLUMNS_ARE_BOOKING_ROW: SameKeys<(typeof BOOKING_ROW_COLUMNS)[number], keyof BookingRow> = true

/** The customer's columns, read only when customer data is shown (BookingColumns). */
const CUSTOMER_COLUMNS: ReadonlySet<string> = new Set(['customer_name', 'customer_email', 'customer_phone'])

/** How the digest of a streamed answer's rows reads each of BOOKING_ROW_COLUMNS (db/row-digest.ts; PLUGIN_TABLES.md's types). */
const BOOKING_ROW_DIGEST: Record<(typeof BOOKING_ROW_COLUMNS)[number], Omit<DigestedColumn, 'name'>> = {
  id: { text: false, nullable: false },
  service_id: { text: false, nullable: false },
  status: { text: true, nullable: false },
  booking_date: { text: false, nullable: false },
  time_from: { text: false, nullable: true },
  time_to: { text: false, nullable: true },
  customer_name: { text: true, nullable: false },
  customer_email: { text: true, nullable: false },
  customer_phone: { text: true, nullable: false },
  note: { text: true, nullable: true },
  created_at: { text: false, nullable: false },
  // NULL in a streamed answer's statement: the names are hashed apart.
  service_post_name: { text: true, nullable: true },
}

const BOOKING_ROW_DIGESTED: readonly DigestedColumn[] = BOOKING_ROW_COLUMNS.map((name) => ({ name, ...BOOKING_ROW_DIGEST[name] }))

/** The count countBookings runs; the bench measures it beside the rows (scripts/bench/raw-sql.ts). */
export function compileCountQuery(db: Db, filter: BookingFilter): CompiledQuery<{ total: number | string }> {
  return compileFiltered(db, 'count', filter, (probe) => db
    .selectFrom('booking_calendar_bookings')
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .where((eb) => matches(eb, probe))
    .compile())
}

/**
 * A query over the bookings a filter matches, compiled once per shape of
 * filter (db/compiled-shapes.ts): `build` gets the filter with placeholders
 * for its values and must use them only as values.
 */
function compileFiltered<Row>(db: Db, kind: string, filter: BookingFilter, build: (probe: BookingFilter, extra: readonly unknown[]) => CompiledQuery<Row>, extra: readonly unknown[] = []): CompiledQuery<Row> {
  const values: unknown[] = []
  const shape = JSON.stringify(mapFilterValues(filter, (value) => { values.push(value); return 0 }))
  values.push(...extra)
  return compiledShapesOf(db).compile(`${kind} ${shape}`, values, (slots) => {
    let next = 0
    const probe = mapFilterValues(filter, () => slots[next++])
    return build(probe, slots.slice(next))
  })
}

/** The filter with each value replaced by `replace(value)`, in a fixed order; its keys are the filter's own. */
function mapFilterValues(filter: BookingFilter, replace: (value: unknown) => unknown): BookingFilter {
  const each = <T>(value: T | undefined) => (value === undefined ? undefined : replace(value) as T)
  const bounds = <T extends { from?: string; to?: string }>(range: T | undefined) => range && { from: each(range.from), to: each(range.to) }
  return {
    serviceId: each(filter.serviceId),
    statuses: filter.statuses?.map((status) => replace(status) as string),
    bookingDate: bounds(filter.bookingDate),
    createdAt: bounds(filter.createdAt),
  }
}

function selectBookings(db: Db, filter: BookingFilter, order: BookingOrder, columns: BookingColumns = EVERY_COLUMN, joinSlug = true) {
  return orderBookings(selectBookingColumns(db, columns, joinSlug).where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter)), order)
}

/**
 * The bookings query of a filter, compiled once per shape, and read through
 * an index the table has (db/booking-indexes.ts) where MariaDB would scan and sort (hintedIndex).
 */
export function compileBookings(db: Db, filter: BookingFilter, order: BookingOrder, columns: BookingColumns, limit?: number, joinSlug = true): CompiledQuery<BookingRow> {
  const index = hintedIndex(db, filter, order)
  const kind = `bookings ${order} ${columns.customer} ${joinSlug} ${limit === undefined ? '' : 'limit'} ${index ?? ''}`
  return compileFiltered(db, kind, filter, (probe, [limitSlot]) => {
    const query = selectBookings(db, probe, order, columns, joinSlug)
    const compiled = (limit === undefined ? query : query.limit(limitSlot as number)).compile() as CompiledQuery<BookingRow>
    return index === undefined ? compiled : forceIndex(compiled, index)
  }, limit === undefined ? [] : [limit])
}

/** The row of compileBookingsDigest: a RowsDigest as the database gives it (db/row-digest.ts). */
export interface BookingsDigestRow {
  row_count: number | string
  row_crc_sum: number | string | null
  row_crc_reversed_sum: number | string | null
}

/**
 * The digest of the rows compileBookings(…, joinSlug false) would send for
 * `filter`, in one row (db/row-digest.ts): the same columns (BOOKING_ROW_COLUMNS),
 * read through the same index, in no order.
 */
export function compileBookingsDigest(db: Db, filter: BookingFilter, columns: BookingColumns): CompiledQuery<BookingsDigestRow> {
  const index = hintedIndex(db, filter, 'booking')
  return compileFiltered(db, `digest ${columns.customer} ${index ?? ''}`, filter, (probe) => {
    const compiled = selectBookingColumns(db, columns, false).where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, probe)).compile()
    const rows = index === undefined ? compiled : forceIndex(compiled, index)
    return { ...rows, sql: rowsDigestSql(rows.sql, BOOKING_ROW_DIGESTED) }
  })
}

/** What a bookings query reads besides a booking's own columns. */
export interface BookingColumns {
  /** The customer's name, email and phone. Without them each is '': customer data that is never shown is never read. */
  customer: boolean
}

export const EVERY_COLUMN: BookingColumns = { customer: true }

/** `joinSlug` false: service_post_name is NULL, for the caller to fill in (streamBookings). */
function selectBookingColumns(db: Db, columns: BookingColumns = EVERY_COLUMN, joinSlug = true) {
  const bookings = db.selectFrom('booking_calendar_bookings')
  // A service ID is only a service when its post has post_type bc_service (PLUGIN_TABLES.md).
  const joined = bookings.leftJoin('posts', (join) => join
    .onRef('posts.ID', '=', 'booking_calendar_bookings.service_id')
    .on('posts.post_type', '=', 'bc_service'))
  // Without the join the query is of the same shape, typed as the joined one it stands for.
  const from = joinSlug ? joined : bookings as unknown as typeof joined
  // BOOKING_ROW_COLUMNS, in its order: the row packets are read by position (db/row-packets.ts).
  return from.select((eb) => BOOKING_ROW_COLUMNS.map((column) => {
    if (column === 'service_post_name') return joinSlug ? eb.ref('posts.post_name').as(column) : sql<string | null>`NULL`.as(column)
    if (CUSTOMER_COLUMNS.has(column) && !columns.customer) return sql<string>`''`.as(column)
    return eb.ref(`booking_calendar_bookings.${column}`).as(column)
  }))
}

function orderBookings<Q extends { orderBy(column: 'booking_calendar_bookings.service_id' | 'booking_calendar_bookings.booking_date' | 'booking_calendar_bookings.time_from' | 'booking_calendar_bookings.id'): Q }>(query: Q, order: BookingOrder): Q {
  if (order === 'service') query = query.orderBy('booking_calendar_bookings.service_id')
  return query
    .orderBy('booking_calendar_bookings.booking_date')
    .orderBy('booking_calendar_bookings.time_from')
    .orderBy('booking_calendar_bookings.id')
}

/**
 * The post_name of every service (a site has 10 to 500), read in the same
 * snapshot as the rows and put in by ID: joining posts to each row cost
 * MariaDB a quarter of a year's query (docs/performance.md). They are the
 * first rows of the answer, under the same first-row bound.
 */
export async function readServiceNames(db: Db, snapshot: Snapshot, rowTimeoutMs: number): Promise<Map<number, string>> {
  const names = new Map<number, string>()
  const services = compiledShapesOf(db).compile('service slugs', [], () => db
    .selectFrom('posts').select(['posts.ID', 'posts.post_name']).where('posts.post_type', '=', 'bc_service').compile())
  for await (const batch of snapshot.batches(services, { rowTimeoutMs })) {
    for (const service of batch) names.set(service.ID, service.post_name)
  }
  return names
}

/**
 * One page of matching bookings in booking order, as a deferred join: the page's
 * ids are cut from the recommended index alone, then only those rows are read,
 * so a page costs nearly the same at any depth (docs/performance.md, "Indexes").
 */
export function compileBookingsPage(db: Db, filter: BookingFilter, limit: number, offset: number, columns: BookingColumns = EVERY_COLUMN): CompiledQuery<BookingRow> {
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
  const query = selectBookingColumns(db, columns)
    .innerJoin(pageIds.as('page_ids'), (join) => join.on(sql<SqlBool>`page_ids.id = ${sql.ref('booking_calendar_bookings.id')}`))
  return orderBookings(query, 'booking').compile()
}

/** A row of compileBookingsMonthDigests: one month's RowsDigest ("YYYY-MM"; "0000-00" holds the zero date). */
export interface BookingsMonthDigestRow extends BookingsDigestRow {
  month: string
}

/**
 * The digest of the rows compileBookings(…, joinSlug false) would send for
 * `filter`, one row per month of booking_date (changes/'s digest source): the
 * same bytes as compileBookingsDigest, grouped by the date's first seven characters.
 */
export function compileBookingsMonthDigests(db: Db, filter: BookingFilter, columns: BookingColumns): CompiledQuery<BookingsMonthDigestRow> {
  const index = hintedIndex(db, filter, 'booking')
  return compileFiltered<BookingsMonthDigestRow>(db, `month digests ${columns.customer} ${index ?? ''}`, filter, (probe) => {
    const compiled = selectBookingColumns(db, columns, false).where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, probe)).compile()
    const rows = index === undefined ? compiled : forceIndex(compiled, index)
    return { ...rows, sql: rowsDigestSql(rows.sql, BOOKING_ROW_DIGESTED, 'left(`digested`.`booking_date`, 7)') }
  })
}

/** Up to `limit` matching bookings with an id above `afterId`, by id: a page of a sync (changes/). */
export function compileBookingsAfterId(db: Db, filter: BookingFilter, columns: BookingColumns, afterId: number, limit: number): CompiledQuery<BookingRow> {
  return compileFiltered(db, `after id ${columns.customer}`, filter, (probe, [after, most]) => selectBookingColumns(db, columns)
    .where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, probe))
    .where('booking_calendar_bookings.id', '>', after as number)
    .orderBy('booking_calendar_bookings.id')
    .limit(most as number)
    .compile() as CompiledQuery<BookingRow>, [afterId, limit])
}

/** The matching bookings among `ids` (a page of a log delta, at most 1000): one statement, not cached (its shape is its length). */
export function compileBookingsByIds(db: Db, filter: BookingFilter, columns: BookingColumns, ids: readonly number[]): CompiledQuery<BookingRow> {
  return selectBookingColumns(db, columns)
    .where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter))
    .where('booking_calendar_bookings.id', 'in', ids.length === 0 ? [0] : [...ids])
    .compile()
}

/**
 * Up to `limit` matching bookings of one month of booking_date ("YYYY-MM"),
 * after the day `afterDay` and through `throughDay` when given, by day and
 * id: a replace of a digest delta. The range finds them by index; the month's
 * seven characters keep them exact, as the digests group them (a day 00 of a
 * month, the zero date's month "0000-00").
 */
export function compileBookingsOfMonth(
  db: Db, filter: BookingFilter, columns: BookingColumns, month: string, afterDay: string | undefined, throughDay: string | undefined, limit: number,
): CompiledQuery<BookingRow> {
  const kind = `of month ${columns.customer} ${afterDay === undefined ? 'from' : 'after'} ${throughDay === undefined ? '' : 'through'}`
  const extra = [afterDay ?? `${month}-00`, `${nextMonth(month)}-00`, month, limit, ...(throughDay === undefined ? [] : [throughDay])]
  return compileFiltered(db, kind, filter, (probe, [lower, before, key, most, through]) => {
    let query = selectBookingColumns(db, columns)
      .where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, probe))
      .where('booking_calendar_bookings.booking_date', afterDay === undefined ? '>=' : '>', lower as string)
      .where('booking_calendar_bookings.booking_date', '<', before as string)
      .where(sql<string>`left(${sql.ref('booking_calendar_bookings.booking_date')}, 7)`, '=', key as string)
    if (throughDay !== undefined) query = query.where('booking_calendar_bookings.booking_date', '<=', through as string)
    return query
      .orderBy('booking_calendar_bookings.booking_date')
      .orderBy('booking_calendar_bookings.id')
      .limit(most as number)
      .compile()
  }, extra)
}

/** "YYYY-MM" → the month after it; "0000-00" (the zero date's) → "0000-01". */
export function nextMonth(month: string): string {
  const year = Number(month.slice(0, 4))
  const number = Number(month.slice(5, 7))
  return number >= 12 ? `${String(year + 1).padStart(4, '0')}-01` : `${month.slice(0, 4)}-${String(number + 1).padStart(2, '0')}`
}
