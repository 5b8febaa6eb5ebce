// What `GET slots/` means (API.md, "GET slots/"): which bookings, in which
// order, on which page. No req or res here.
import { createHash } from 'node:crypto'
import type { Db, DbPools } from '../../db/connect.ts'
import { readSnapshot, type Snapshot } from '../../db/snapshot.ts'
import type { Admission } from '../../db/stream-gate.ts'
import type { AnswerSize } from '../../db/fair-queue.ts'
import { countBookings, digestBookings, findBookingsPage, findFirstBookings, streamBookings } from '../../db/bookings.ts'
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
   * With `options.tagged`, for a streamed answer of at most `maxTaggedRows`
   * bookings: what its tag is made of besides its rows (the filter, the
   * service as the ID it resolved to, and the total), read in its snapshot.
   * The rows are hashed as they are read (server/http/row-tagger.ts).
   */
  rowTagParts?: unknown[] | undefined
  /**
   * For a streamed answer: the digest of the rows rowsInto would hand a
   * sink, read in its snapshot by a statement that sends no row
   * (db/row-digest.ts); a sink that hashes what rowsInto gives it
   * (http/row-tagger.ts) comes to the same. An answer not counted first has
   * its `total` set from it, when within its uncountedUpTo.
   */
  rowsDigest?: (() => Promise<RowsDigest>) | undefined
  /**
   * Set for a tagged answer not counted first (countedAsRead): the most rows it
   * may have. Its rows are counted as they are read (`total` is set when
   * rowsInto ends); an answer that finds more, or cannot be held whole, throws
   * RecountNeeded before it sends anything, and is answered again, counted first.
   */
  uncountedUpTo?: number | undefined
  /**
   * With `options.tagged`, for an answer read whole in one statement: its
   * records' SHA-256, or true when its bookings are in the sink as bytes (the
   * route hashes the body). What it holds is what it sends, so hashing it
   * names its data; no second statement, no transaction.
   */
  tagFromContent?: string | true | undefined
}

/** The SHA-256 of records, as their JSON: every field the answer shows of them. */
export function recordsDigest(records: readonly BookingRecord[]): string {
  return createHash('sha256').update(JSON.stringify(records)).digest('base64url')
}

/**
 * What rowsInto writes the bookings into: it may be told to drop what it
 * holds, when a first statement's answer is read again (an ID that was a slug, a narrow answer too large).
 */
export interface AnswerSink extends BookingRowSink {
  /** Drops what is written: the answer starts again from its start. */
  dropRows(): void
}

/**
 * A tagged answer is held whole before it is sent, so its rows can be counted
 * as they are read, saving the count statement (a tenth of the database's time
 * for a year's report, docs/performance.md). Only a bounded range of at most
 * this many days goes that way: an answer past ETAG_MAX_ROWS or the hold's
 * bounds must be answered again, counted first, and a year of bookings of one
 * site rarely comes near 250,000.
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

/**
 * Thrown by a body that cannot send an answer not counted first (more rows than
 * its uncountedUpTo, or past the hold's bounds) before anything is sent:
 * answerSlots answers again in a new snapshot, counted first.
 */
export class RecountNeeded extends Error {
  constructor() {
    super('The answer has more rows than it can hold whole: it is answered again, counted first.')
  }
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
  streamBookings: typeof streamBookings
  streamBookingPackets: typeof streamBookingPackets
  findBookingsPage: typeof findBookingsPage
  findFirstBookings: typeof findFirstBookings
  findFirstBookingPackets: typeof findFirstBookingPackets
}

export const slotsQueries: SlotsQueries = {
  ...serviceLookups, readSnapshot, countBookings, digestBookings, streamBookings, streamBookingPackets, findBookingsPage, findFirstBookings, findFirstBookingPackets,
}

/** How a slots/ answer's rows become records: in the site's zone, with or without customer data. */
export function bookingMapping(zone: SiteZone, exposeCustomer: boolean): BookingMapping {
  return { clock: wallClockFor(zone), exposeCustomer, slugOf: createSlugDecoder() }
}

/** What the first statement of a narrow answer found (see answerSlots). */
interface FirstBookings {
  /** Bookings read, up to SMALL_ANSWER_ROWS + 1. */
  count: number
  /** Whether the first came joined to its bc_service post: the service ID given is a service's. */
  firstHasService: boolean
  /** The records, when they were not written into the sink. */
  records: BookingRecord[] | undefined
}

/**
 * Answers `GET slots/`. The count and the rows are read in one read-only
 * snapshot, so `total` and the bookings sent agree even while the site takes
 * new bookings; `send` runs inside it and must consume `batches` before returning.
 */
export async function answerSlots(
  db: Db,
  pools: DbPools,
  params: SlotsQuery,
  options: {
    mapping: BookingMapping; grouped: boolean; queryTimeoutMs: number
    /** Who asks and the client's signal: an export waits in line for a stream permit as this caller (db/stream-gate.ts). */
    admission?: Admission
    /** Where the body writes the bookings, when it takes them as bytes: a narrow answer is read into it at once. */
    sink?: AnswerSink | undefined
    /** Name the answer's data for its tag: SlotsAnswer.tagParts, read in the snapshot of its bookings, or tagFromContent. */
    tagged?: boolean
    /** A streamed answer of more bookings than this gets no tagParts (config ETAG_MAX_ROWS). */
    maxTaggedRows?: number
  },
  send: (answer: SlotsAnswer) => Promise<void>,
  queries: SlotsQueries = slotsQueries,
): Promise<void> {
  const { grouped, mapping, sink } = options
  const order = grouped ? 'service' : 'booking'
  // Customer data that is not shown is not read either.
  const columns = { customer: mapping.exposeCustomer }
  const toRecord = (row: BookingRow) => toBookingRecord(row, mapping)
  // The first SMALL_ANSWER_ROWS + 1 bookings in one statement: into the sink, or as records; in `snapshot` when given.
  const readFirst = async (firstFilter: BookingFilter, snapshot?: Snapshot): Promise<FirstBookings> => {
    if (sink) {
      // What an earlier statement wrote (for an ID that turned out to be a slug) goes.
      sink.dropRows()
      const read = await queries.findFirstBookingPackets(db, snapshot ?? pools.short, firstFilter, order, SMALL_ANSWER_ROWS + 1, columns, sink)
      return { count: read.rows, firstHasService: read.firstHasService, records: undefined }
    }
    const rows = await queries.findFirstBookings(db, firstFilter, order, SMALL_ANSWER_ROWS + 1, columns, snapshot)
    return { count: rows.length, firstHasService: rows[0] !== undefined && rows[0].service_post_name !== null, records: rows.map(toRecord) }
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
  // does the answer go the streamed way below (the first statement's work is
  // then lost, which is why only narrow filters try it).
  if (params.per_page === undefined && isNarrow(filter)) {
    const head = early && serviceId === givenId ? early : await readFirst(filter)
    if (head.count <= SMALL_ANSWER_ROWS) {
      const answer = head.records ? answerInMemory(head.count, undefined, head.records) : answerWritten(head.count)
      // Tagged by what it holds, read in this one statement: records here, the body's bytes by the route.
      if (options.tagged) answer.tagFromContent = head.records ? recordsDigest(head.records) : true
      await send(answer)
      return
    }
  }
  // Whatever a first statement wrote into the sink goes: the answer starts again.
  sink?.dropRows()
  try {
    await readInSnapshot(filter, false)
  } catch (error) {
    if (!(error instanceof RecountNeeded)) throw error
    sink?.dropRows()
    await readInSnapshot(filter, true)
  }

  async function readInSnapshot(filter: BookingFilter, countFirst: boolean): Promise<void> {
    // Told to the line for stream permits: a quarter's export goes ahead of whole-table ones, which leave it a permit.
    if (options.admission) options.admission.size = answerSize(filter)
    // Pages are short queries; an answer without per_page may stream for minutes
    // to a slow reader, so it holds a connection of the stream pool instead.
    await queries.readSnapshot(params.per_page === undefined ? pools.stream : pools.short, async (snapshot) => {
      if (params.per_page === undefined) {
        const answer = streamedAnswer({ db, snapshot, filter, order, columns, toRecord, queries, queryTimeoutMs: options.queryTimeoutMs }, grouped)
        if (options.tagged) {
          const maxTaggedRows = options.maxTaggedRows ?? Number.POSITIVE_INFINITY
          if (!countFirst && countedAsRead(filter)) {
            // Counted as its rows are read into the held answer (COUNTED_AS_READ_MAX_DAYS).
            answer.rowTagParts = [filter]
            answer.uncountedUpTo = maxTaggedRows
          } else {
            // Counted first (an index range, no row read): past maxTaggedRows the answer is streamed untagged, never held whole for a tag.
            answer.total = await queries.countBookings(db, snapshot, filter)
            if (answer.total <= maxTaggedRows) answer.rowTagParts = [filter]
          }
        }
        await send(answer)
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
      await send(answer)
    }, { admission: options.admission })
  }

  function answerInMemory(total: number, paging: SlotsAnswer['paging'], records: BookingRecord[]): SlotsAnswer {
    return { total, count: async () => total, paging, grouped, rowsInto: undefined, written: false, batches: fromArray([records]) }
  }

  /** An answer whose `total` bookings are written into the sink already. */
  function answerWritten(total: number): SlotsAnswer {
    return {
      total, count: async () => total, paging: undefined, grouped, rowsInto: (given) => writtenRows(given, sink, total), written: true, batches: noRecords(),
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
  toRecord: (row: BookingRow) => BookingRecord
  queries: SlotsQueries
  queryTimeoutMs: number
}

/** The answer without per_page: each of its ways is read only when iterated, and the body takes one of them. */
function streamedAnswer(read: StreamedRead, grouped: boolean): SlotsAnswer {
  const answer: SlotsAnswer = {
    total: undefined, paging: undefined, grouped, written: false,
    count: () => countStreamed(read, answer),
    batches: { [Symbol.asyncIterator]: () => streamedRecords(read, answer) },
    rowsInto: (sink) => streamedRowsInto(read, answer, sink),
    rowsDigest: () => digestStreamed(read, answer),
  }
  return answer
}

async function digestStreamed(read: StreamedRead, answer: SlotsAnswer): Promise<RowsDigest> {
  const digest = await read.queries.digestBookings(read.db, read.snapshot, read.filter, read.columns, read.queryTimeoutMs)
  if (answer.uncountedUpTo !== undefined && digest.rows <= answer.uncountedUpTo) answer.total = digest.rows
  return digest
}

async function countStreamed(read: StreamedRead, answer: SlotsAnswer): Promise<number> {
  return (answer.total ??= await read.queries.countBookings(read.db, read.snapshot, read.filter))
}

async function* streamedRecords(read: StreamedRead, answer: SlotsAnswer): AsyncGenerator<BookingRecord[]> {
  const { db, snapshot, filter, order, columns, queries, queryTimeoutMs } = read
  await countStreamed(read, answer)
  yield* mapBatches(queries.streamBookings(db, snapshot, filter, order, queryTimeoutMs, columns), read.toRecord)
}

async function* streamedRowsInto(read: StreamedRead, answer: SlotsAnswer, sink: AnswerSink): AsyncGenerator<number> {
  const { db, snapshot, filter, order, columns, queries, queryTimeoutMs } = read
  // Counted first, X-WP-Total going before the body; or, not counted first (uncountedUpTo), as its rows are read.
  if (answer.uncountedUpTo === undefined) await countStreamed(read, answer)
  let rows = 0
  for await (const batch of queries.streamBookingPackets(db, snapshot, filter, order, queryTimeoutMs, columns, sink)) {
    rows += batch
    yield batch
  }
  if (answer.uncountedUpTo !== undefined) answer.total = rows
}

/** The rows of an answer written into `sink` already (answerWritten): `total` of them, for that sink only. */
async function* writtenRows(given: AnswerSink, sink: AnswerSink | undefined, total: number): AsyncGenerator<number> {
  if (given !== sink) throw new Error('This answer is written into the sink given to answerSlots.')
  yield total
}

// eslint-disable-next-line require-yield -- an answer whose rows are in its sink has no records to give: asking is a bug
async function* noRecords(): AsyncGenerator<BookingRecord[]> {
  throw new Error('This answer is written into its sink as bytes: read rowsInto.')
}

async function* mapBatches<R, T>(batches: AsyncIterable<R[]>, map: (row: R) => T): AsyncGenerator<T[]> {
  for await (const batch of batches) yield batch.map(map)
}

async function* fromArray<T>(items: T[]): AsyncGenerator<T> {
  yield* items
}
