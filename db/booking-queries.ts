// The SQL of every read of {prefix}booking_calendar_bookings, compiled once per
// shape of filter (db/compiled-shapes.ts).
import { sql, type CompiledQuery, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely'
import type { Snapshot } from './snapshot.ts'
import type { Database } from './database.ts'
import type { Db } from './connect.ts'
import { compiledShapesOf } from './compiled-shapes.ts'
import { matches, type BookingFilter, type BookingOrder } from './booking-filter.ts'
import { forceIndex, hintedIndex } from './index-hints.ts'
import { digestedCell, rowsDigestSql, type DigestedColumn } from './row-digest.ts'

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

/** A row of compileBookingsDayDigests: one booking_date's RowsDigest, the day as `booking_date + 0` gives it (YYYYMMDD, a number). */
export interface BookingsDayDigestRow extends BookingsDigestRow {
  day: number | string
}

/** A period of changes/'s digest source: a day, two or four days of a month, or a month (server/domain/change-days.ts). */
export type PeriodKind = 'day' | 'two-days' | 'four-days' | 'month'

/**
 * How each kind cuts a month: the days of a period, and how many periods (the
 * last runs to the month's end: parts × days reach 31, so a day's place,
 * (day − 1) div days, is never past it). A period's number is (year × 100 +
 * month) × PERIODS_PER_MONTH + its place in the month.
 */
export const PERIOD_CUTS: Readonly<Record<PeriodKind, { days: number; parts: number }>> = {
  day: { days: 1, parts: 31 },
  'two-days': { days: 2, parts: 16 },
  'four-days': { days: 4, parts: 8 },
  month: { days: 31, parts: 1 },
}
/** At least the most parts of a month (31 days). */
export const PERIODS_PER_MONTH = 32

/** One period: its number (periodOfDate), its kind, and the booking_date strings that find its rows, `lower` to before `before`. */
export interface DigestPeriod {
  number: number
  kind: PeriodKind
  lower: string
  before: string
}

/**
 * The period of a date column (server/domain/change-days.ts, periodOfDay), in
 * numbers (a number to group by cost MariaDB less than the date's text).
 * YEAR, MONTH and DAYOFMONTH give 0 for the parts of the zero date in MariaDB
 * and MySQL alike.
 */
export function periodOfDate(date: RawBuilder<unknown>, kind: PeriodKind): RawBuilder<number> {
  const { days, parts } = PERIOD_CUTS[kind]
  const month = sql<number>`(year(${date}) * 100 + month(${date})) * ${sql.lit(PERIODS_PER_MONTH)}`
  if (parts === 1) return month
  const place = sql<number>`greatest(dayofmonth(${date}) - 1, 0)`
  return days === 1 ? sql<number>`${month} + ${place}` : sql<number>`${month} + ${place} div ${sql.lit(days)}`
}

/**
 * A day's period as a number, as periodOfDate gives it in SQL:
 * (year × 100 + month) × PERIODS_PER_MONTH + its place in the month (always 0 for months). A
 * month 00 (the zero date's) is cut by its days as any other; a day 00 goes
 * with the first.
 */
export function periodOfDay(day: string, kind: PeriodKind): number {
  // A day is at most 31: its place is at most the last (PERIOD_CUTS's parts × days reach 31).
  const part = Math.floor(Math.max(Number(day.slice(8, 10)) - 1, 0) / PERIOD_CUTS[kind].days)
  return (Number(day.slice(0, 4)) * 100 + Number(day.slice(5, 7))) * PERIODS_PER_MONTH + part
}

/** The period of the bookings table's booking_date (a reference: Kysely puts the table's prefix on it). */
const periodOfBookingDate = (kind: PeriodKind) => periodOfDate(sql.ref('booking_calendar_bookings.booking_date'), kind)

/**
 * The cells of a booking the digest source digests, in order: those a 304's
 * digest joins (BOOKING_ROW_DIGESTED), but the slug (in the token's context)
 * and the customer's where hidden. The statement (compileBookingsDayDigests)
 * and the worker (day-digests.ts, bookingRowCrcs) join the same.
 */
export function periodDigestColumns(columns: BookingColumns): readonly DigestedColumn[] {
  return BOOKING_ROW_DIGESTED.filter(({ name }) => name !== 'service_post_name' && (columns.customer || !CUSTOMER_COLUMNS.has(name)))
}

/**
 * The digest of the bookings `filter` matches, one row per booking_date
 * (changes/'s digest source adds the days of a period up: db/changes.ts): per
 * day the number of rows and the sums of two CRC-32s of each row's cells
 * (db/row-digest.ts, decision 0035), the cells being every column a record is
 * made of (the customer's only where they are shown; a service's slug is in
 * the token's context). Read from the table itself, not from the rows
 * statement as a 304's digest is: a statement of its own cost MariaDB a tenth
 * less, and the worker digests the same cells of the rows it sends
 * (day-digests.ts, bookingRowCrcs; decision 0038).
 *
 * Grouped by `booking_date + 0`, a number no index is in the order of (a
 * group by the column itself would walk the index in order without the
 * multi-range read, half again as slow), and cheaper to group by than the
 * period's YEAR, MONTH and DAYOFMONTH. Each sum adds DOUBLEs, not DECIMALs
 * (a tenth less): a CRC-32 is below 2^32, so the sum of up to 2^21 of them is
 * below 2^53 and exact, and is given back as the integer it is (CAST … AS
 * UNSIGNED); a day of more rows is read as unknown (periodDigestsOfDays).
 * Decision 0037.
 *
 * `half`: only the first (0) or second (1) half of the bookings, read side by
 * side on two connections (bookingsDigestHalves) and added up, as the digests
 * are sums: the bookings whose id's remainder by 2 is `half`. Each half is a
 * snapshot of its own, so a booking is in exactly one of them: cut by day, a
 * booking moved across the cut between the two could be counted in both, or
 * in neither (decision 0038).
 */
export function compileBookingsDayDigests(db: Db, filter: BookingFilter, columns: BookingColumns, half?: 0 | 1): CompiledQuery<BookingsDayDigestRow> {
  const index = hintedIndex(db, filter, 'booking')
  return compileFiltered<BookingsDayDigestRow>(db, `day digests ${columns.customer} ${index ?? ''} ${half ?? 'whole'}`, filter, (probe, [cut]) => {
    const cell = (name: keyof Database['booking_calendar_bookings']) => sql.ref(`booking_calendar_bookings.${name}`)
    const cells = periodDigestColumns(columns)
      .map((column) => digestedCell<RawBuilder<unknown>>(column, cell(column.name as keyof Database['booking_calendar_bookings']), {
        binary: (value) => sql`cast(${value} as binary)`,
        orNullCell: (value) => sql`ifnull(${value}, _binary X'FE')`,
      }))
    const row = sql`concat_ws(_binary X'FF', ${sql.join(cells)})`
    const exactSum = (crc: RawBuilder<unknown>) => sql<string | number | null>`cast(sum(${crc} + 0e0) as unsigned)`
    let query = db.selectFrom('booking_calendar_bookings')
      .select([
        sql<number | string>`${cell('booking_date')} + 0`.as('day'),
        sql<number | string>`count(*)`.as('row_count'),
        exactSum(sql`crc32(${row})`).as('row_crc_sum'),
        exactSum(sql`crc32(reverse(${row}))`).as('row_crc_reversed_sum'),
      ])
      .where((eb) => matches(eb, probe))
    if (half !== undefined) query = query.where(sql<number>`${cell('id')} % 2`, '=', cut as number)
    const compiled = query.groupBy('day').compile() as CompiledQuery<BookingsDayDigestRow>
    return index === undefined ? compiled : forceIndex(compiled, index)
  }, half === undefined ? [] : [half])
}

/**
 * How many statements read a filter's period digests: two halves side by side
 * where an index finds the rows (each walks the index and looks up only its
 * half's rows: half the time each, on a database with a core to spare), one
 * where the table is scanned (two would each scan all of it).
 */
export function bookingsDigestHalves(db: Db, filter: BookingFilter): ReadonlyArray<0 | 1 | undefined> {
  return hintedIndex(db, filter, 'booking') !== undefined || filter.serviceId !== undefined ? [0, 1] : [undefined]
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

/**
 * The matching bookings among `ids` (a page of a log delta, at most 1000): one statement. Its
 * shape is its count of ids, so the list is filled up to the next power of two with its last id
 * (the same rows): a dozen shapes, each compiled once, where a delta of one booking is mostly round trips.
 */
export function compileBookingsByIds(db: Db, filter: BookingFilter, columns: BookingColumns, ids: readonly number[]): CompiledQuery<BookingRow> {
  const listed = ids.length === 0 ? [0] : ids
  const room = 2 ** Math.ceil(Math.log2(listed.length))
  const filled = [...listed, ...new Array<number>(room - listed.length).fill(listed.at(-1)!)]
  return compileFiltered(db, `by ${room} ids ${columns.customer}`, filter, (probe, slots) => selectBookingColumns(db, columns)
    .where((eb) => matches(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, probe))
    .where('booking_calendar_bookings.id', 'in', slots as number[])
    .compile() as CompiledQuery<BookingRow>, filled)
}

/**
 * Up to `limit` matching bookings of one period of booking_date (its number,
 * kind and range: change-days.ts's periodRange), after the day `afterDay` and through
 * `throughDay` when given, by day and id: a replace of a digest delta. The
 * range finds them by index; periodOfDate keeps them exact, as the digests
 * group them (a day 00, the zero date's month).
 */
export function compileBookingsOfPeriod(
  db: Db, filter: BookingFilter, columns: BookingColumns, period: DigestPeriod, afterDay: string | undefined, throughDay: string | undefined, limit: number,
): CompiledQuery<BookingRow> {
  const kind = `of ${period.kind} ${columns.customer} ${afterDay === undefined ? 'from' : 'after'} ${throughDay === undefined ? '' : 'through'}`
  const extra = [afterDay ?? period.lower, period.before, period.number, limit, ...(throughDay === undefined ? [] : [throughDay])]
  return compileFiltered(db, kind, filter, (probe, [lower, before, key, most, through]) => {
    return selectBookingColumns(db, columns)
      .where((eb) => inPeriod(eb as unknown as ExpressionBuilder<Database, 'booking_calendar_bookings'>, probe, period.kind, afterDay !== undefined, lower as string, before as string, key as number, through as string | undefined))
      .orderBy('booking_calendar_bookings.booking_date')
      .orderBy('booking_calendar_bookings.id')
      .limit(most as number)
      .compile()
  }, extra)
}

/**
 * Up to `limit` matching bookings of one period of booking_date, after the
 * booking `after` (its day and id) when given, by day and id: a page of the
 * digest source's sync, which may end inside a day.
 */
export function compileBookingsOfPeriodAfter(
  db: Db, filter: BookingFilter, columns: BookingColumns, period: DigestPeriod, after: { day: string; id: number } | undefined, limit: number,
): CompiledQuery<BookingRow> {
  const kind = `of ${period.kind} ${columns.customer} ${after === undefined ? 'from' : 'after booking'}`
  const extra = [after?.day ?? period.lower, period.before, period.number, limit, ...(after === undefined ? [] : [after.day, after.id])]
  return compileFiltered(db, kind, filter, (probe, [lower, before, key, most, day, id]) => {
    return selectBookingColumns(db, columns)
      .where((eb) => {
        const inIt = inPeriod(eb, probe, period.kind, false, lower as string, before as string, key as number, undefined)
        return after === undefined ? inIt : eb.and([inIt, eb.or([
          eb('booking_calendar_bookings.booking_date', '>', day as string),
          eb('booking_calendar_bookings.id', '>', id as number),
        ])])
      })
      .orderBy('booking_calendar_bookings.booking_date')
      .orderBy('booking_calendar_bookings.id')
      .limit(most as number)
      .compile()
  }, extra)
}

/** A row of compileBookingDaysOfPeriod: a day of booking_date and its matching bookings. */
export interface BookingDayCountRow {
  booking_date: string
  bookings: number | string
}

/**
 * The matching bookings of each day of a period after `afterDay`, by day: the
 * days a page of a digest delta can hold whole, counted in the index before
 * their rows are read (the rows of a page are then read to the last day that fits).
 */
export function compileBookingDaysOfPeriod(
  db: Db, filter: BookingFilter, period: DigestPeriod, afterDay: string | undefined,
): CompiledQuery<BookingDayCountRow> {
  const kind = `days of ${period.kind} ${afterDay === undefined ? 'from' : 'after'}`
  return compileFiltered(db, kind, filter, (probe, [lower, before, key]) => {
    return db.selectFrom('booking_calendar_bookings')
      .where((eb) => inPeriod(eb, probe, period.kind, afterDay !== undefined, lower as string, before as string, key as number, undefined))
      .select((eb) => ['booking_calendar_bookings.booking_date', eb.fn.countAll<number | string>().as('bookings')])
      .groupBy('booking_calendar_bookings.booking_date')
      .orderBy('booking_calendar_bookings.booking_date')
      .compile()
  }, [afterDay ?? period.lower, period.before, period.number])
}

/** The bookings of `filter` in a period's range (after `lower` when `after`, else from it), of that period, through a day when given. */
function inPeriod(
  eb: ExpressionBuilder<Database, 'booking_calendar_bookings'>, filter: BookingFilter, kind: PeriodKind, after: boolean, lower: string, before: string, period: number, through: string | undefined,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [
    matches(eb, filter),
    eb('booking_calendar_bookings.booking_date', after ? '>' : '>=', lower),
    eb('booking_calendar_bookings.booking_date', '<', before),
    eb(periodOfBookingDate(kind), '=', period),
  ]
  if (through !== undefined) conditions.push(eb('booking_calendar_bookings.booking_date', '<=', through))
  return eb.and(conditions)
}
