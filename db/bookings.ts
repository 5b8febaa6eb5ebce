// Every query on {prefix}booking_calendar_bookings.
import { sql, type CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { Snapshot } from './snapshot.ts'
import type { Database } from './database.ts'
import { STATEMENT_TIMER_MARGIN_MS, type Db } from './connect.ts'
import { compiledShapesOf } from './compiled-shapes.ts'
import { bookingDateIndex, forgetHintedIndexes, serviceDateIndex } from './booking-indexes.ts'
import { readCells, ROW_TAKEN, type RowPacketSink } from './row-packets.ts'
import type { BoundedPool } from './bounded-pool.ts'

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
  /** The customer's three fields are '' when they were not read (BookingColumns). */
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
// starts here at the latest: a zero-date booking never matches (API.md, created_date;
// README, "Choices made where API.md is silent").
const FIRST_REAL_DATETIME = '1000-01-01 00:00:00'
// The same for booking_date: a range given by its `end` alone never matches the zero date either.
const FIRST_REAL_DATE = '1000-01-01'

/** The WHERE of a filter; summary/ counts with the same one, so its counts agree with slots/. */
export function matches(eb: ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter: BookingFilter): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = []
  if (filter.serviceId !== undefined) conditions.push(eb('booking_calendar_bookings.service_id', '=', filter.serviceId))
  if (filter.statuses) conditions.push(eb('booking_calendar_bookings.status', 'in', filter.statuses))
  if (filter.bookingDate) conditions.push(eb('booking_calendar_bookings.booking_date', '>=', filter.bookingDate.from ?? FIRST_REAL_DATE))
  if (filter.bookingDate?.to !== undefined) conditions.push(eb('booking_calendar_bookings.booking_date', '<=', filter.bookingDate.to))
  if (filter.createdAt) {
    conditions.push(eb('booking_calendar_bookings.created_at', '>=', filter.createdAt.from ?? FIRST_REAL_DATETIME))
    if (filter.createdAt.to !== undefined) conditions.push(eb('booking_calendar_bookings.created_at', '<=', filter.createdAt.to))
  }
  return eb.and(conditions)
}

/** How many bookings match, read in the snapshot the rows will come from. */
export async function countBookings(db: Db, snapshot: Snapshot, filter: BookingFilter): Promise<number> {
  const [row] = await snapshot.rows(compileCountQuery(db, filter))
  return Number(row?.total ?? 0)
}

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
function compileBookings(db: Db, filter: BookingFilter, order: BookingOrder, columns: BookingColumns, limit?: number, joinSlug = true): CompiledQuery<BookingRow> {
  const index = hintedIndex(db, filter, order)
  const kind = `bookings ${order} ${columns.customer} ${joinSlug} ${limit === undefined ? '' : 'limit'} ${index ?? ''}`
  return compileFiltered(db, kind, filter, (probe, [limitSlot]) => {
    const query = selectBookings(db, probe, order, columns, joinSlug)
    const compiled = (limit === undefined ? query : query.limit(limitSlot as number)).compile() as CompiledQuery<BookingRow>
    return index === undefined ? compiled : forceIndex(compiled, index)
  }, limit === undefined ? [] : [limit])
}

/**
 * The index to name for a bookings query, if any:
 * - a range of booking dates across services: the booking-date index;
 * - the whole table, unfiltered, in the answer's order: in booking order the
 *   booking-date index, in service order (grouped) the service-date index.
 *
 * MariaDB otherwise scans the whole table and sorts it before it sends the
 * first row: 0.23 to 0.31 s at a million bookings, 23 to 27 ms at 100,000,
 * against 1 to 9 ms through the index, and the whole read took the same or
 * less (docs/performance.md). A
 * filter on statuses or creation dates is left to the optimizer: through the
 * index every row would be looked up, however few match.
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
  return from.select((eb) => [
    'booking_calendar_bookings.id', 'booking_calendar_bookings.service_id', 'booking_calendar_bookings.status',
    'booking_calendar_bookings.booking_date', 'booking_calendar_bookings.time_from', 'booking_calendar_bookings.time_to',
    columns.customer ? eb.ref('booking_calendar_bookings.customer_name').as('customer_name') : sql<string>`''`.as('customer_name'),
    columns.customer ? eb.ref('booking_calendar_bookings.customer_email').as('customer_email') : sql<string>`''`.as('customer_email'),
    columns.customer ? eb.ref('booking_calendar_bookings.customer_phone').as('customer_phone') : sql<string>`''`.as('customer_phone'),
    'booking_calendar_bookings.note', 'booking_calendar_bookings.created_at',
    joinSlug ? eb.ref('posts.post_name').as('service_post_name') : sql<string | null>`NULL`.as('service_post_name'),
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
export function compileBookingsQuery(db: Db, filter: BookingFilter, order: BookingOrder, columns: BookingColumns = EVERY_COLUMN, joinSlug = true): CompiledQuery<BookingRow> {
  return compileBookings(db, filter, order, columns, undefined, joinSlug)
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

/** The columns of a streamed bookings query, in the order MariaDB sends them (BookingRow). */
export const BOOKING_ROW_COLUMNS = [
  'id', 'service_id', 'status', 'booking_date', 'time_from', 'time_to',
  'customer_name', 'customer_email', 'customer_phone', 'note', 'created_at', 'service_post_name',
] as const

/** Takes the rows of streamBookingPackets: as bytes where it can (db/row-packets.ts), else as BookingRows. */
export interface BookingRowSink extends RowPacketSink<BookingRow> {
  /** The post_name of every service by ID, before the first row: a row's service_post_name cell is always NULL. */
  serviceNames(names: ReadonlyMap<number, string>): void
  /** A row of a result the sink did not accept, its service_post_name filled in. */
  parsedRow(row: BookingRow): void
}

/**
 * streamBookings, with every row handed to `sink` as it arrives; yields how
 * many rows each batch had. The rows of the batch are written by then.
 * `limit`: the first so many only, read at once into the sink's memory, so the
 * statement is a short one: under QUERY_TIMEOUT_MS on the server, which cancels it itself.
 */
export async function* streamBookingPackets(
  db: Db, snapshot: Snapshot, filter: BookingFilter, order: BookingOrder, rowTimeoutMs: number, columns: BookingColumns, sink: BookingRowSink, limit?: number,
): AsyncGenerator<number> {
  const names = await readServiceNames(db, snapshot, rowTimeoutMs)
  sink.serviceNames(names)
  const short = limit === undefined ? {} : { serverTimeLimit: true, rowTimeoutMs: rowTimeoutMs + STATEMENT_TIMER_MARGIN_MS }
  const read = () => snapshot.batches(compileBookings(db, filter, order, columns, limit, false), { rowTimeoutMs, sink, ...short })
  for await (const batch of withoutLostIndex(db, read)) {
    for (const row of batch as Array<BookingRow | typeof ROW_TAKEN>) {
      if (row === ROW_TAKEN) continue
      row.service_post_name = names.get(row.service_id) ?? null
      sink.parsedRow(row)
    }
    yield batch.length
  }
}

/**
 * The post_name of every service (a site has 10 to 500), read in the same
 * snapshot as the rows and put in by ID: joining posts to each row cost
 * MariaDB a quarter of a year's query (docs/performance.md). They are the
 * first rows of the answer, under the same first-row bound.
 */
async function readServiceNames(db: Db, snapshot: Snapshot, rowTimeoutMs: number): Promise<Map<number, string>> {
  const names = new Map<number, string>()
  const services = compiledShapesOf(db).compile('service slugs', [], () => db
    .selectFrom('posts').select(['posts.ID', 'posts.post_name']).where('posts.post_type', '=', 'bc_service').compile())
  for await (const batch of snapshot.batches(services, { rowTimeoutMs })) {
    for (const service of batch) names.set(service.ID, service.post_name)
  }
  return names
}

/**
 * The batches of `read`; when MariaDB says the hinted index is gone before the
 * first batch (an operator dropped it), the query runs again without the hint,
 * in the same snapshot.
 */
async function* withoutLostIndex<R>(db: Db, read: () => AsyncGenerator<R[]>): AsyncGenerator<R[]> {
  let batches = read()
  let first: IteratorResult<R[]>
  try {
    first = await batches.next()
  } catch (error) {
    if (!forgetHintedIndexes(db, error)) throw error
    batches = read()
    first = await batches.next()
  }
  if (first.done) return
  yield first.value
  yield* batches
}

/**
 * One page of matching bookings in booking order (at most 1000 rows: per_page's
 * bound), as a deferred join: the page's ids are cut from the ordered ids alone,
 * which the recommended index (booking_date, time_from, id, status) holds,
 * status filter included, and only those rows are read and joined. Skipping the offset rows
 * then walks the index instead of reading and joining every skipped row, so a
 * page costs nearly the same at any depth.
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

export async function findBookingsPage(db: Db, snapshot: Snapshot, filter: BookingFilter, limit: number, offset: number, columns: BookingColumns = EVERY_COLUMN): Promise<BookingRow[]> {
  return await snapshot.rows(compileBookingsPage(db, filter, limit, offset, columns))
}

/**
 * The first `limit` matching bookings in one statement, outside any
 * transaction: a single statement reads one snapshot by itself. Used to answer
 * small results without a count or a transaction (domain/slots.ts).
 */
export async function findFirstBookings(db: Db, filter: BookingFilter, order: BookingOrder, limit: number, columns: BookingColumns = EVERY_COLUMN, snapshot?: Snapshot): Promise<BookingRow[]> {
  const compiled = () => compileBookings(db, filter, order, columns, limit)
  if (snapshot) return await readWithoutLostIndex(db, () => snapshot.rows(compiled()))
  return await readWithoutLostIndex(db, async () => (await db.executeQuery(compiled())).rows)
}

/** One statement's rows, read again without the index hint when MariaDB says the hinted index is gone (withoutLostIndex). */
export async function readWithoutLostIndex<T>(db: Db, read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (!forgetHintedIndexes(db, error)) throw error
    return await read()
  }
}

/**
 * findFirstBookings with the rows handed to `sink` as they arrive, as bytes
 * where it takes them (db/row-packets.ts): how many there were, and whether
 * the first came joined to its bc_service post. A row's service_post_name
 * cell is its post's here, as in findFirstBookings: the sink is told no names.
 */
export async function findFirstBookingPackets(
  db: Db, source: BoundedPool | Snapshot, filter: BookingFilter, order: BookingOrder, limit: number, columns: BookingColumns, sink: BookingRowSink,
): Promise<{ rows: number; firstHasService: boolean }> {
  let firstHasService: boolean | undefined
  const watched: RowPacketSink<BookingRow> = {
    accepts: (result) => sink.accepts(result),
    row(bytes, start, end, row) {
      // A first row whose cells cannot be read here (over 16 MiB) counts as without a post: the ID is then looked up.
      firstHasService ??= readCells(bytes, start, end, BOOKING_ROW_COLUMNS.length, FIRST_ROW_CELLS.start, FIRST_ROW_CELLS.length) &&
        FIRST_ROW_CELLS.length[SERVICE_POST_NAME_CELL]! >= 0
      sink.row(bytes, start, end, row)
    },
  }
  // In a snapshot (a tagged answer, read with its digest) or as one statement of its own.
  const snapshot = 'rowsInto' in source ? source : undefined
  const lease = snapshot ? undefined : await (source as BoundedPool).acquire()
  try {
    const rows = await readWithoutLostIndex(db, () => {
      const compiled = compileBookings(db, filter, order, columns, limit)
      return snapshot ? snapshot.rowsInto(compiled, watched) : lease!.query<BookingRow | typeof ROW_TAKEN>(compiled.sql, compiled.parameters, undefined, watched)
    })
    for (const row of rows) {
      if (row === ROW_TAKEN) continue
      firstHasService ??= row.service_post_name !== null
      sink.parsedRow(row)
    }
    return { rows: rows.length, firstHasService: firstHasService ?? false }
  } finally {
    lease?.release()
  }
}

const SERVICE_POST_NAME_CELL = BOOKING_ROW_COLUMNS.indexOf('service_post_name')
const FIRST_ROW_CELLS = { start: new Int32Array(BOOKING_ROW_COLUMNS.length), length: new Int32Array(BOOKING_ROW_COLUMNS.length) }
