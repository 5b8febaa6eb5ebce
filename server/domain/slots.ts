// What `GET slots/` means (API.md, "GET slots/"): which bookings, in which
// order, on which page. No req or res here.
import { createHash } from 'node:crypto'
import type { Db, DbPools } from '../../db/connect.ts'
import { readSnapshot, type Snapshot } from '../../db/snapshot.ts'
import type { Admission } from '../../db/stream-gate.ts'
import type { AnswerSize } from '../../db/fair-queue.ts'
import { countBookings, digestBookings, findBookingsPage, findFirstBookings } from '../../db/bookings.ts'
import type { RowsDigest } from '../../db/row-digest.ts'
import { findFirstBookingPackets, streamBookingPackets, type BookingRowSink } from '../../db/booking-packets.ts'
import type { BookingFilter } from '../../db/booking-filter.ts'
import type { BookingColumns, BookingRow } from '../../db/booking-queries.ts'
import { RestError } from '../errors.ts'
import { daysInclusive } from './day-arithmetic.ts'
import { wallClockFor } from './wall-clock.ts'
import { type SiteZone } from './zone-offsets.ts'
import { toBookingRecord, type BookingMapping, type BookingRecord } from './booking-record.ts'
import { createSlugDecoder } from './slugs.ts'
import { resolveService, serviceLookups, type ServiceLookups } from './services.ts'

/** What the answer reads of slots/'s parameters, as routes/slots.ts parses them. */
export interface SlotsQuery {
  status?: string[] | undefined
  service?: string | undefined
  start?: string | undefined
  end?: string | undefined
  filter_by: 'booking_date' | 'created_date'
  page?: number | undefined
  per_page?: number | undefined
}

export interface SlotsAnswer {
  /**
   * Bookings that match, over all pages. A streamed answer knows it once its
   * body has read its first batch (batches or rowsInto set it before they yield
   * one); before that, or for a body never read (HEAD), count() gives it.
   */
  total: number | undefined
  count(): Promise<number>
  /** With per_page: the page shown and how many there are. */
  paging: { page: number; totalPages: number } | undefined
  /** The records in batches, in booking order, or grouped by service ID when `grouped`. */
  batches: AsyncIterable<BookingRecord[]>
  /**
   * The same bookings handed to `sink` as the database sends them (db/row-packets.ts),
   * yielding each batch's number of rows once written; read this or `batches`, not
   * both. With answerSlots' `options.sink` the rows may be written already.
   */
  rowsInto: ((sink: AnswerSink) => AsyncIterable<number>) | undefined
  /**
   * Whether the sink given to answerSlots (`options.sink`) holds every one of
   * the answer's `total` bookings already, written as the statement was read (a
   * narrow answer): the body is then whole without reading anything more (SlotsBody.whole).
   */
  written: boolean
  grouped: boolean
  /**
   * With `options.tagged`, for a streamed answer: what its tag is made of
   * besides its rows (the filter), read in its snapshot. The rows are hashed
   * as they are read (server/http/row-tagger.ts). The answer is tagged only
   * when it has at most `maxTaggedRows` rows.
   */
  rowTagParts?: unknown[] | undefined
  /** A streamed answer of more rows than this goes untagged (ETAG_MAX_ROWS). */
  maxTaggedRows: number
  /**
   * For a streamed answer: the digest of the rows rowsInto would hand a
   * sink, read in its snapshot by a statement that sends no row
   * (db/row-digest.ts); a sink that hashes what rowsInto gives it
   * (http/row-tagger.ts) comes to the same. It sets `total` (the rows it counted).
   */
  rowsDigest?: (() => Promise<RowsDigest>) | undefined
  /**
   * A tagged answer not counted first (countedAsRead): its rows are counted
   * as they are read, `total` set when rowsInto ends, so its body is held
   * whole before anything is sent (SendOutcome).
   */
  countedAsRead: boolean
  /**
   * With `options.tagged`, for an answer read whole in one statement: its
   * records' SHA-256, or true when its bookings are in the sink as bytes (the
   * route hashes the body). What it holds is what it sends, so hashing it
   * names its data; no second statement, no transaction.
   */
  tagFromContent?: string | true | undefined
}

/**
 * What sending an answer came to: sent (undefined), or, for an answer
 * counted as read, not sent because its body could not be held whole (the
 * hold's bounds spent, its disk failing). Its statement was then read to its
 * end, keeping nothing, so `rows` is its total: answerSlots sends it again in
 * the same snapshot, with the same connection and permit, counted.
 */
export type SendOutcome = void | { notHeld: true; rows: number }

/** The SHA-256 of records, as their JSON: every field the answer shows of them. */
export function recordsDigest(records: readonly BookingRecord[]): string {
  return createHash('sha256').update(JSON.stringify(records)).digest('base64url')
}

/** What rowsInto writes the bookings into: a body's list, or the RowTagger before it. */
export type AnswerSink = BookingRowSink

/**
 * A tagged answer is held whole before it is sent, so its rows can be counted
 * as they are read, saving the count statement (a tenth of the database's time
 * for a year's report, docs/performance.md). Only a bounded range of at most
 * this many days goes that way: an answer that cannot be held whole (the
 * hold's bounds spent) is read again in its snapshot (SendOutcome), and a year
 * of one site's bookings rarely comes near the hold's bounds.
 */
export const COUNTED_AS_READ_MAX_DAYS = 366

/** An answer of a range of at most this many days (a quarter) goes ahead of others in the line for stream permits (db/fair-queue.ts). */
export const SHORT_ANSWER_MAX_DAYS = 92

/**
 * An answer of a range of this many days or more (over two years), or with
 * an open end, is wide: wide answers share all stream permits but one
 * (db/fair-queue.ts). Two years, not one: a calendar feed's default range is
 * 30 days and a year, and a year's report is the common long one.
 */
export const WIDE_ANSWER_MIN_DAYS = 732

/** The days of the filter's range, by booking or creation date; infinitely many when an end is open. */
function rangeDays(filter: BookingFilter): number {
  const range = filter.bookingDate ?? (filter.createdAt && {
    from: filter.createdAt.from?.slice(0, 10), to: filter.createdAt.to?.slice(0, 10),
  })
  return range?.from !== undefined && range.to !== undefined ? daysInclusive(range.from, range.to) : Number.POSITIVE_INFINITY
}

/** Whether a tagged answer of `filter` may skip its count (COUNTED_AS_READ_MAX_DAYS). */
export function countedAsRead(filter: BookingFilter): boolean {
  return rangeDays(filter) <= COUNTED_AS_READ_MAX_DAYS
}

/** The expected size of an answer of `filter`, for the line for stream permits (SHORT_ANSWER_MAX_DAYS, WIDE_ANSWER_MIN_DAYS). */
export function answerSize(filter: BookingFilter): AnswerSize {
  return answerSizeOfDays(rangeDays(filter))
}

/** The expected size of an answer over this many days (slots/, availability/). */
export function answerSizeOfDays(days: number): AnswerSize {
  if (days <= SHORT_ANSWER_MAX_DAYS) return 'short'
  return days >= WIDE_ANSWER_MIN_DAYS ? 'wide' : 'long'
}

/** At most this many bookings are answered from one statement held in memory (see isNarrow). */
export const SMALL_ANSWER_ROWS = 1000

/**
 * A filter that usually matches few bookings: one service, or a range of at
 * most two months. The typical report (a service's month) is such a filter.
 */
export function isNarrow(filter: BookingFilter): boolean {
  if (filter.serviceId !== undefined) return true
  return rangeDays(filter) <= 62
}

export function bookingFilter(params: Pick<SlotsQuery, 'status' | 'start' | 'end' | 'filter_by'>, serviceId: number | undefined): BookingFilter {
  const filter: BookingFilter = { serviceId, statuses: params.status }
  if (params.start || params.end) {
    if (params.filter_by === 'created_date') {
      // created_date: from 00:00:00 of start to 23:59:59 of end, site time (API.md).
      filter.createdAt = {
        from: params.start ? `${params.start} 00:00:00` : undefined,
        to: params.end ? `${params.end} 23:59:59` : undefined,
      }
    } else {
      filter.bookingDate = { from: params.start, to: params.end }
    }
  }
  return filter
}

/** The queries answerSlots makes: db/, or rows in memory in unit tests. */
export interface SlotsQueries extends ServiceLookups {
  readSnapshot: typeof readSnapshot
  countBookings: typeof countBookings
  digestBookings: typeof digestBookings
  streamBookingPackets: typeof streamBookingPackets
  findBookingsPage: typeof findBookingsPage
  findFirstBookings: typeof findFirstBookings
  findFirstBookingPackets: typeof findFirstBookingPackets
}

export const slotsQueries: SlotsQueries = {
  ...serviceLookups, readSnapshot, countBookings, digestBookings, streamBookingPackets, findBookingsPage, findFirstBookings, findFirstBookingPackets,
}

/** How a slots/ answer's rows become records: in the site's zone, with or without customer data. */
export function bookingMapping(zone: SiteZone, exposeCustomer: boolean): BookingMapping {
  return { clock: wallClockFor(zone), exposeCustomer, slugOf: createSlugDecoder() }
}

/** What the first statement of a narrow answer found (see answerSlots). */
interface FirstBookings<B> {
  /** Bookings read, up to SMALL_ANSWER_ROWS + 1. */
  count: number
  /** Whether the first came joined to its bc_service post: the service ID given is a service's. */
  firstHasService: boolean
  /** The records, when they were not written into the body's sink. */
  records: BookingRecord[] | undefined
  /** The body they were read for. */
  body: B
}

/** What answerSlots needs of a body: where an answer read at once writes its bookings, when it takes them as rows. */
export interface SlotsAnswerBody {
  readonly sink: AnswerSink | undefined
}

/**
 * Answers `GET slots/`. The count and the rows are read in one read-only
 * snapshot, so `total` and the bookings sent agree even while the site takes
 * new bookings; `send` runs inside it and must consume the answer before returning.
 *
 * The answer is planned before it is read (docs/architecture.md, "How an
 * answer is planned"): a narrow one in one statement, a page, or streamed,
 * counted first or as read. Each attempt gets a body of its own from
 * `newBody`, so nothing an earlier attempt wrote can reach the client: a
 * narrow statement that found too many bookings, or an answer counted as
 * read that could not be held whole (sent again in the same snapshot).
 */
export async function answerSlots<B extends SlotsAnswerBody>(
  db: Db,
  pools: DbPools,
  params: SlotsQuery,
  options: {
    mapping: BookingMapping; grouped: boolean; queryTimeoutMs: number
    /** Who asks and the client's signal: an export waits in line for a stream permit as this caller (db/stream-gate.ts). */
    admission?: Admission
    /** A new, empty body for each attempt: a narrow answer is read into its sink at once. */
    newBody: () => B
    /** Name the answer's data for its tag: SlotsAnswer.rowTagParts, read in the snapshot of its bookings, or tagFromContent. */
    tagged?: boolean
    /** A streamed answer of more bookings than this goes untagged (config ETAG_MAX_ROWS). */
    maxTaggedRows?: number
    /** Whether answers can be held (HOLD_* not both 0): only then is a tagged answer counted as read. */
    holds?: boolean
  },
  send: (answer: SlotsAnswer, body: B) => Promise<SendOutcome>,
  queries: SlotsQueries = slotsQueries,
): Promise<void> {
  const { grouped, mapping } = options
  const maxTaggedRows = options.maxTaggedRows ?? Number.POSITIVE_INFINITY
  const order = grouped ? 'service' : 'booking'
  // Customer data that is not shown is not read either.
  const columns = { customer: mapping.exposeCustomer }
  const toRecord = (row: BookingRow) => toBookingRecord(row, mapping)
  // The first SMALL_ANSWER_ROWS + 1 bookings in one statement, into a new body's sink or as records.
  const readFirst = async (firstFilter: BookingFilter): Promise<FirstBookings<B>> => {
    const body = options.newBody()
    if (body.sink) {
      const read = await queries.findFirstBookingPackets(db, pools.short, firstFilter, order, SMALL_ANSWER_ROWS + 1, columns, body.sink)
      return { count: read.rows, firstHasService: read.firstHasService, records: undefined, body }
    }
    const rows = await queries.findFirstBookings(db, firstFilter, order, SMALL_ANSWER_ROWS + 1, columns)
    return { count: rows.length, firstHasService: rows[0] !== undefined && rows[0].service_post_name !== null, records: rows.map(toRecord), body }
  }

  // A service given by its ID (the usual report) is read in one statement:
  // its bookings, each joined to its bc_service post. A booking that comes
  // back with its post's slug proves the ID names a service, which is what
  // resolveService would look up; only without one is the ID looked up.
  // Digits past the safe integers name no ID (resolveService takes them as a slug).
  const givenId = params.per_page === undefined && params.service !== undefined && /^\d+$/.test(params.service) && Number.isSafeInteger(Number(params.service))
    ? Number(params.service) : undefined
  const early = givenId === undefined ? undefined : await readFirst(bookingFilter(params, givenId))
  const serviceId = early?.firstHasService ? givenId
    : params.service === undefined ? undefined : (await resolveService(db, params.service, queries)).ID
  const filter = bookingFilter(params, serviceId)

  // A narrow filter without paging is first answered by one statement, which
  // reads one snapshot by itself: no count, no transaction, one round trip to
  // the database instead of four. Only when more than SMALL_ANSWER_ROWS match
  // does the answer go the streamed way below, with a new body (the first
  // statement's work is then lost, which is why only narrow filters try it).
  if (params.per_page === undefined && isNarrow(filter)) {
    const head = early && serviceId === givenId ? early : await readFirst(filter)
    if (head.count <= SMALL_ANSWER_ROWS) {
      const answer = head.records ? answerInMemory(head.count, undefined, head.records) : answerWritten(head.count, head.body.sink!)
      // Tagged by what it holds, read in this one statement: records here, the body's bytes by the route.
      if (options.tagged) answer.tagFromContent = head.records ? recordsDigest(head.records) : true
      await send(answer, head.body)
      return
    }
  }
  // Told to the line for stream permits: a quarter's export goes ahead of whole-table ones, which leave it a permit.
  if (options.admission) options.admission.size = answerSize(filter)
  // Pages are short queries; an answer without per_page may stream for minutes
  // to a slow reader, so it holds a connection of the stream pool instead.
  await queries.readSnapshot(params.per_page === undefined ? pools.stream : pools.short, async (snapshot) => {
    if (params.per_page === undefined) {
      const read: StreamedRead = { db, snapshot, filter, order, columns, queries, queryTimeoutMs: options.queryTimeoutMs }
      const answer = streamedAnswer(read, grouped, maxTaggedRows)
      if (options.tagged) {
        answer.rowTagParts = [filter]
        // Counted as its rows are read into the held answer (COUNTED_AS_READ_MAX_DAYS), or
        // counted first (an index range, no row read): past maxTaggedRows it goes untagged.
        if (options.holds && countedAsRead(filter)) answer.countedAsRead = true
        else answer.total = await queries.countBookings(db, snapshot, filter)
      }
      const outcome = await send(answer, options.newBody())
      if (outcome?.notHeld) {
        // Not held whole: its statement was read to the end, counted. The same snapshot, its
        // connection and its permit, read again into a new body, untagged, streamed.
        const again = streamedAnswer(read, grouped, maxTaggedRows)
        again.total = outcome.rows
        await send(again, options.newBody())
      }
      return
    }
    const total = await queries.countBookings(db, snapshot, filter)
    const perPage = params.per_page
    const page = params.page ?? 1
    const totalPages = Math.ceil(total / perPage)
    if (total > 0 && page > totalPages) {
      throw new RestError(400, 'rest_invalid_page_number', 'The page number requested is larger than the number of pages available.')
    }
    const rows = total === 0 ? [] : await queries.findBookingsPage(db, snapshot, filter, perPage, (page - 1) * perPage, columns)
    const records = rows.map(toRecord)
    // A page is cut from the bookings in booking order, then grouped (at most per_page records held).
    if (grouped) records.sort((a, b) => a.service_id - b.service_id)
    const answer = answerInMemory(total, { page, totalPages }, records)
    // A page holds at most 1000 records, read with its count in this snapshot: tagged by them and
    // by the total and pages. A digest would cut the page again, as deep as the page is.
    if (options.tagged) answer.tagFromContent = `${total}:${page}:${totalPages}:${recordsDigest(records)}`
    await send(answer, options.newBody())
  }, { admission: options.admission })

  function answerInMemory(total: number, paging: SlotsAnswer['paging'], records: BookingRecord[]): SlotsAnswer {
    return {
      total, count: async () => total, paging, grouped, rowsInto: undefined, written: false, batches: fromArray([records]), maxTaggedRows, countedAsRead: false,
    }
  }

  /** An answer whose `total` bookings are written into `sink` already. */
  function answerWritten(total: number, sink: AnswerSink): SlotsAnswer {
    return {
      total, count: async () => total, paging: undefined, grouped, rowsInto: (given) => writtenRows(given, sink, total), written: true, batches: noRecords(),
      maxTaggedRows, countedAsRead: false,
    }
  }
}

// The generators of an answer are functions of this module, never closures made
// per answer: V8 gives the generators of each new generator function a map of
// their own, in the old generation, which kept much of the young generation alive
// through scavenges until a mark-compact (docs/performance.md).

/** What an answer without per_page reads, in its snapshot, when its body iterates one of its ways. */
interface StreamedRead {
  db: Db
  snapshot: Snapshot
  filter: BookingFilter
  order: 'service' | 'booking'
  columns: BookingColumns
  queries: SlotsQueries
  queryTimeoutMs: number
}

/** The answer without per_page: each of its ways is read only when iterated, and the body takes one of them. */
function streamedAnswer(read: StreamedRead, grouped: boolean, maxTaggedRows: number): SlotsAnswer {
  const answer: SlotsAnswer = {
    total: undefined, paging: undefined, grouped, written: false, maxTaggedRows, countedAsRead: false,
    count: () => countStreamed(read, answer),
    batches: noRecords(),
    rowsInto: (sink) => streamedRowsInto(read, answer, sink),
    rowsDigest: () => digestStreamed(read, answer),
  }
  return answer
}

async function digestStreamed(read: StreamedRead, answer: SlotsAnswer): Promise<RowsDigest> {
  const digest = await read.queries.digestBookings(read.db, read.snapshot, read.filter, read.columns, read.queryTimeoutMs)
  // Read in the answer's snapshot: its rows are its total.
  answer.total = digest.rows
  return digest
}

async function countStreamed(read: StreamedRead, answer: SlotsAnswer): Promise<number> {
  return (answer.total ??= await read.queries.countBookings(read.db, read.snapshot, read.filter))
}

async function* streamedRowsInto(read: StreamedRead, answer: SlotsAnswer, sink: AnswerSink): AsyncGenerator<number> {
  const { db, snapshot, filter, order, columns, queries, queryTimeoutMs } = read
  // Counted first, X-WP-Total going before the body; or, counted as read (countedAsRead), as its rows are read.
  const counting = answer.countedAsRead && answer.total === undefined
  if (!counting) await countStreamed(read, answer)
  let rows = 0
  for await (const batch of queries.streamBookingPackets(db, snapshot, filter, order, queryTimeoutMs, columns, sink)) {
    rows += batch
    yield batch
  }
  if (counting) answer.total = rows
}

/** The rows of an answer written into `sink` already (answerWritten): `total` of them, for that sink only. */
async function* writtenRows(given: AnswerSink, sink: AnswerSink | undefined, total: number): AsyncGenerator<number> {
  if (given !== sink) throw new Error('This answer is written into the sink of its body.')
  yield total
}

// eslint-disable-next-line require-yield -- an answer whose rows go to a sink has no records to give: asking is a bug
async function* noRecords(): AsyncGenerator<BookingRecord[]> {
  throw new Error('This answer\'s rows go to a sink: read rowsInto.')
}

async function* fromArray<T>(items: T[]): AsyncGenerator<T> {
  yield* items
}
