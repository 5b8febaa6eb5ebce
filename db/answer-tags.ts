// What a slots/ answer's entity tag is made of (API.md, "Conditional
// requests"; docs/conditional-requests.md): a digest the database computes
// over exactly the bookings the answer holds, with every column the answer
// shows, and over every bc_service post (their slugs are shown), in one
// statement, so in one snapshot of its own; or in the answer's own snapshot.
import { sql, type CompiledQuery, type RawBuilder } from 'kysely'
import type { Snapshot } from './snapshot.ts'
import type { Db } from './connect.ts'
import type { BoundedPool } from './bounded-pool.ts'
import { matches, type BookingFilter } from './booking-filter.ts'
import type { BookingColumns } from './booking-queries.ts'
import { forceIndex, hintedIndex } from './index-hints.ts'
import { readWithoutLostIndex } from './lost-index.ts'
import { digestStatement, isStatementTimeout, type DatabaseServer } from './server-dialect.ts'

/** What the database says of an answer's bookings: the same bookings give the same values, and other bookings others. */
export interface BookingsDigest {
  /** Bookings that match (X-WP-Total). */
  total: number
  /** SHA-256 (hex) over the per-row digests of the bookings of the answer; '' for none. */
  rows: string
  /** SHA-256 (hex) over every bc_service post's ID, post_name and post_status; '' for none. */
  services: string
}

/**
 * Ids per bucket of the two-level digest (bucketed), for answers whose text
 * passes max_allowed_packet (16 MiB by default), which bounds a GROUP_CONCAT
 * whatever group_concat_max_len says: 4,096 rows of at most a 64 KiB note each
 * fit in 16 MiB only when notes are short, so a bucket too may be too long.
 */
const BUCKET_IDS = 4_096

/**
 * A booking as text that no other booking has: the columns in a fixed order,
 * strings through QUOTE() (quoted, with ' and \ escaped; NULL as the bare word
 * NULL), so a comma, a quote or a semicolon inside a note cannot make two rows,
 * or two lists of rows joined by ';', read alike. Dates, times and numbers have
 * none of them. Customer data only where the answer shows it (columns.customer):
 * hidden, it is not read.
 */
function rowText(columns: BookingColumns): RawBuilder<string> {
  const column = (name: string) => sql.ref(`booking_calendar_bookings.${name}`)
  const quoted = (name: string) => sql`QUOTE(${column(name)})`
  const cells = [
    column('id'), column('service_id'), quoted('status'), quoted('booking_date'), quoted('time_from'), quoted('time_to'),
    ...(columns.customer ? [quoted('customer_name'), quoted('customer_email'), quoted('customer_phone')] : []),
    quoted('note'), quoted('created_at'),
  ]
  return sql<string>`CONCAT_WS(',', ${sql.join(cells)})`
}

/**
 * The statement. The rows' texts are joined by ';' and the SHA-256 of the
 * whole taken, once: hashing each row first cost MariaDB about a third more
 * (docs/conditional-requests.md, "What it costs"). MariaDB cuts a GROUP_CONCAT
 * at max_allowed_packet; a text that long gives NULL, never the digest of
 * fewer rows. `bucketed`: one SHA-256 per range of BUCKET_IDS ids, each whole
 * (its length checked the same way), then one over those in id order.
 */
export function compileBookingsDigest(db: Db, filter: BookingFilter, columns: BookingColumns, bucketed = false): CompiledQuery<DigestRow> {
  // Subqueries without plugins: the outer query's compile prefixes their tables (as in compileBookingsPage).
  const matching = db.withoutPlugins()
  const rows = matching.selectFrom('booking_calendar_bookings').where((eb) => matches(eb, filter))
  const text = rowText(columns)
  const services = sql<string | null>`(SELECT SHA2(GROUP_CONCAT(CONCAT_WS(',', ${sql.ref('posts.ID')}, QUOTE(${sql.ref('posts.post_name')}), QUOTE(${sql.ref('posts.post_status')})) ORDER BY ${sql.ref('posts.ID')} SEPARATOR '\n'), 256) FROM ${sql.table('posts')} WHERE ${sql.ref('posts.post_type')} = 'bc_service')`
  const outer = bucketed
    ? db.selectFrom(rows.select([
      sql<number>`FLOOR(${sql.ref('booking_calendar_bookings.id')} / ${sql.lit(BUCKET_IDS)})`.as('bucket'),
      sql<number>`COUNT(*)`.as('row_count'),
      // The length the bucket's whole text has (each row's, and a ';' between), against the limit.
      sql<number>`SUM(LENGTH(${text})) + COUNT(*) - 1 < @@max_allowed_packet`.as('is_whole'),
      sql<Buffer>`UNHEX(SHA2(GROUP_CONCAT(${text} SEPARATOR ';'), 256))`.as('digest'),
    ]).groupBy(sql`bucket`).as('t')).select([
      sql<number>`SUM(t.row_count)`.as('row_count'),
      // Every bucket whole, in id order (32 bytes each): NULL otherwise.
      sql<string | null>`IF(MIN(t.is_whole) = 1, SHA2(GROUP_CONCAT(t.digest ORDER BY t.bucket SEPARATOR ''), 256), NULL)`.as('rows_digest'),
      sql<number>`SUM(t.row_count)`.as('total'),
      services.as('services_digest'),
    ])
    : db.selectFrom(rows.select([
      sql<number>`COUNT(*)`.as('row_count'),
      sql<string>`GROUP_CONCAT(${text} SEPARATOR ';')`.as('texts'),
    ]).as('t')).select([
      sql<number>`t.row_count`.as('row_count'),
      // Whole when shorter than the limit MariaDB cuts it at; as long as that, it may have been cut.
      sql<string | null>`IF(LENGTH(t.texts) < @@max_allowed_packet, SHA2(t.texts, 256), NULL)`.as('rows_digest'),
      sql<number>`t.row_count`.as('total'),
      services.as('services_digest'),
    ])
  let compiled = outer.compile() as CompiledQuery<DigestRow>
  // The rows are read through the index the answer reads them through (hintedIndex, db/index-hints.ts).
  const index = hintedIndex(db, filter, 'booking')
  if (index !== undefined) compiled = forceIndex(compiled, index)
  return compiled
}

/**
 * The digest statement for `server` (db/server-dialect.ts): its GROUP_CONCAT as long as
 * the server allows, and its rows looked up in the order of their ids (multi-range read),
 * not in the index's: the order of a digest's rows does not matter to it, and MariaDB
 * read a year's 80,000 bookings through bc_api_date in a third of the time.
 */
export function digestForServer<R>(server: DatabaseServer, compiled: CompiledQuery<R>): CompiledQuery<R> {
  return { ...compiled, sql: digestStatement(server, compiled.sql) }
}

interface DigestRow {
  row_count: number | string | null
  rows_digest: string | Buffer | null
  total: number | string | null
  services_digest: string | Buffer | null
}

/** Where the digest is read: in an answer's snapshot (so it and the rows agree), or as one statement of its own on a pool. */
export type DigestSource = Snapshot | BoundedPool

/**
 * The digest of the bookings an answer of `filter` holds, or undefined when the database could not make one (a result
 * MariaDB would not hold: then the answer goes without a tag, never with a wrong one).
 */
export async function digestBookings(db: Db, source: DigestSource, filter: BookingFilter, columns: BookingColumns): Promise<BookingsDigest | undefined> {
  const read = async (bucketed: boolean) => {
    // Compiled again for the retry: the hint is gone from it once MariaDB said the index is.
    const [row] = await readWithoutLostIndex(db, () => runOn(source, compileBookingsDigest(db, filter, columns, bucketed)))
    return row
  }
  let row: DigestRow | undefined
  try {
    row = await read(false)
    if (row && row.rows_digest === null && Number(row.row_count ?? 0) > 0) row = await read(true)
  } catch (error) {
    // A digest that the server stopped at its time limit (QUERY_TIMEOUT_MS; an export of
    // millions of rows on a slow server) leaves its connection and snapshot usable: the
    // answer goes without a tag, as it went before tags, and never becomes a 504 for it.
    if (isStatementTimeout(error)) return undefined
    throw error
  }
  if (!row) return undefined
  const count = Number(row.row_count ?? 0)
  if (count > 0 && row.rows_digest === null) return undefined
  return { total: Number(row.total ?? 0), rows: count === 0 ? '' : String(row.rows_digest), services: String(row.services_digest ?? '') }
}

async function runOn<R>(source: DigestSource, query: CompiledQuery<R>): Promise<R[]> {
  if ('rows' in source) return await source.rows(digestForServer(source.server, query))
  const lease = await source.acquire()
  try {
    return await lease.query<R>(digestStatement(lease.server, query.sql), query.parameters)
  } finally {
    lease.release()
  }
}
