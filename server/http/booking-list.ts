// The bookings of a slots/ answer as JSON objects or CSV lines in UTF-8 chunks:
// from records, or a row in the usual form straight from MariaDB's bytes, its
// cells copied with keys, quotes and offsets around them (#writeRow); any other
// row takes the record's way, byte for byte the same (tests/unit/booking-list.test.ts).
// Why and how: docs/performance.md, "The bulk path"; decision 0023.
// ROWS_AS_BYTES=false never hands a row packet to this list.
import { isUtf8 } from 'node:buffer'
import { BOOKING_ROW_COLUMNS, type BookingRow } from '../../db/booking-queries.ts'
import { readCells, type ParsedRow, type ResultColumn } from '../../db/row-packets.ts'
import { statusOf, toBookingRecord, type BookingMapping, type BookingRecord } from '../domain/booking-record.ts'
import type { AnswerSink } from '../domain/slots.ts'
import { DAY_SECONDS } from '../domain/day-arithmetic.ts'
import type { ClockDay, WallClock } from '../domain/wall-clock.ts'
import { bookingCsvRow, bookingJson, csvText, jsonText } from './booking-text.ts'
import { CHUNK_BYTES } from './chunk-pool.ts'
import type { Utf8Chunks } from './stream-body.ts'

export type ListFormat = 'json' | 'csv'

export interface BookingListOptions {
  format: ListFormat
  /** What the body holds before the first booking (`{"booked_slots":[`, the CSV header line), written at once. */
  head: string
  /** JSON only: `"<service ID>":[...]` groups, the records arriving ordered by service ID. */
  grouped: boolean
  mapping: BookingMapping
  /** A record's text other than the whole record's (`_fields`); such a list takes records only, never bytes. */
  recordText?: (record: BookingRecord) => string
}

interface RowDay {
  clockDay: ClockDay
  offset: Buffer | null
  /** JSON only, made on the first such row of the day: what a timed booking on it has around its two times (jsonTimes). */
  jsonTimes: JsonTimes | undefined
}

/**
 * What a JSON record of a timed booking on a day of steady offset has between
 * its status and its created_date, but for the two times: one copy each
 * instead of seven pieces.
 */
interface JsonTimes {
  /** `2026-03-01","start":"2026-03-01T` */
  head: Buffer
  /** `+01:00","end":"2026-03-01T` */
  middle: Buffer
  /** `+01:00","all_day":false,"created_date":` */
  tail: Buffer
}

/** A stored status, and its cell as it is written (#statusCell); `index`: its place in #statusCells. */
interface StatusCell {
  stored: Buffer
  text: Buffer
  index: number
}

/** A service's cell (#serviceCell), and by status index that cell with the status's after it: one copy a row. */
interface ServiceCell {
  text: Buffer
  withStatus: Array<Buffer | undefined>
}

const CELLS = BOOKING_ROW_COLUMNS.length
const INTEGER_TYPES = new Set([1, 2, 3, 8, 9]) // TINY, SHORT, LONG, LONGLONG, INT24
const TEXT_COLUMNS = new Set<string>(['status', 'customer_name', 'customer_email', 'customer_phone', 'note'])
/** Bytes a row's text may take besides its cells and its service's slug (keys, quotes, times, offsets). */
const ROW_OVERHEAD_BYTES = 512
/** Distinct stored statuses kept as cells; a site has a handful. Past this, rows take the record's way. */
const MAX_STATUS_CELLS = 64

export class BookingList implements AnswerSink {
  readonly #body: Utf8Chunks
  readonly #format: ListFormat
  readonly #grouped: boolean
  readonly #mapping: BookingMapping
  readonly #recordText: (record: BookingRecord) => string
  readonly #takesBytes: boolean
  #first = true
  #group: number | undefined
  #names: ReadonlyMap<number, string> = new Map()
  #slugIsText = false
  /** Per service ID: what is written from its ID to its status (#serviceCell). */
  readonly #serviceCells = new Map<number, ServiceCell>()
  readonly #statusCells: StatusCell[] = []
  readonly #days: Map<number, RowDay | null>
  // The last booked day and the last day of creation, each looked up again
  // only when it changes: rows come in booked-day order, their created_at in none.
  #lastDayNumber = -2
  #lastDay: RowDay | null = null
  #lastCreatedNumber = -2
  #lastCreated: RowDay | null = null
  readonly #cellStart = new Int32Array(CELLS)
  readonly #cellLength = new Int32Array(CELLS)

  constructor(body: Utf8Chunks, options: BookingListOptions) {
    this.#body = body
    this.#format = options.format
    this.#grouped = options.grouped && options.format === 'json'
    this.#mapping = options.mapping
    this.#days = rowDaysOf(options.mapping.clock)
    this.#recordText = options.recordText ?? (options.format === 'json' ? bookingJson : bookingCsvRow)
    this.#takesBytes = options.recordText === undefined
    body.write(options.head)
  }

  /** Whether rows may come as bytes: a list of whole records, no `_fields`. */
  get takesBytes(): boolean {
    return this.#takesBytes
  }

  /** One record. */
  record(record: BookingRecord): void {
    const text = this.#recordText(record)
    this.#body.write(this.#format === 'json' ? this.#separator(record.service_id) + text : text)
  }

  /** What closes the list in JSON: `]`, or `}` / `]}` of the groups. */
  jsonEnd(): string {
    if (!this.#grouped) return ']'
    return this.#group === undefined ? '}' : ']}'
  }

  accepts(columns: readonly ResultColumn[]): boolean {
    // A joined post_name is text; the names' NULL of a streamed answer is not.
    this.#slugIsText = columns[SERVICE_POST_NAME]?.encoding === 'utf8'
    // A list of picked fields (_fields) takes its rows parsed, as records.
    return this.#takesBytes && acceptsBookingColumns(columns)
  }

  serviceNames(names: ReadonlyMap<number, string>): void {
    this.#names = names
    this.#serviceCells.clear()
  }

  parsedRow(row: BookingRow): void {
    this.record(toBookingRecord(row, this.#mapping))
  }

  row(bytes: Buffer, start: number, end: number, row: ParsedRow<BookingRow>): void {
    if (this.#writeRow(bytes, start, end)) return
    const parsed = row.parsed()
    // A post joined to the row is its service's; else the names given, if any (serviceNames).
    parsed.service_post_name ??= this.#names.get(parsed.service_id) ?? null
    this.record(toBookingRecord(parsed, this.#mapping))
  }

  /** Between two JSON records: a comma, or the next group's key. */
  #separator(serviceId: number): string {
    let text = this.#first ? '' : ','
    if (this.#grouped && serviceId !== this.#group) {
      text = `${this.#group === undefined ? '' : '],'}"${serviceId}":[`
      this.#group = serviceId
    }
    this.#first = false
    return text
  }

  /**
   * The row written from its bytes, when it is in the usual form; false, with
   * nothing written, when it is not. Every check comes before the first byte is written.
   */
  #writeRow(b: Buffer, start: number, end: number): boolean {
    const at = this.#cellStart
    const length = this.#cellLength
    if (!readCells(b, start, end, CELLS, at, length)) return false
    const json = this.#format === 'json'
    if (!isCount(b, at[ID]!, length[ID]!) || !isCount(b, at[SERVICE_ID]!, length[SERVICE_ID]!)) return false
    const serviceId = countAt(b, at[SERVICE_ID]!, length[SERVICE_ID]!)
    const status = this.#statusCell(b, at[STATUS]!, length[STATUS]!)
    if (status === undefined) return false

    // The booked day, and the times on it: start, and end unless it is NULL.
    if (length[BOOKING_DATE] !== 10) return false
    const day = this.#day(dateNumberAt(b, at[BOOKING_DATE]!))
    if (day === null) return false
    const allDay = length[TIME_FROM]! < 0
    let from = 0
    let to = -1
    if (!allDay) {
      from = length[TIME_FROM] === 8 ? secondsAt(b, at[TIME_FROM]!) : -1
      if (from < 0) return false
      if (length[TIME_TO]! >= 0) {
        to = length[TIME_TO] === 8 ? secondsAt(b, at[TIME_TO]!) : -1
        if (to < 0) return false
      }
    }
    // A start or end that is its own text on the booked day is copied; any
    // other (past midnight, 24:00:00, on a day whose offset changes) is the clock's.
    const steady = day.offset !== null
    const fromCopied = steady && from < DAY_SECONDS && (allDay || isClockTime(b, at[TIME_FROM]!))
    const toCopied = steady && to >= from && to < DAY_SECONDS && isClockTime(b, at[TIME_TO]!)
    const clock = this.#mapping.clock
    const clockStart = fromCopied ? undefined : clock.isoOfDay(day.clockDay, from)
    const clockEnd = allDay ? clock.isoOfDay(day.clockDay, DAY_SECONDS)
      : to < 0 || toCopied ? undefined : clock.isoOfDay(day.clockDay, to < from ? DAY_SECONDS + to : to)

    // created_at: a DATETIME, copied the same way.
    const created = at[CREATED_AT]!
    if (length[CREATED_AT] !== 19 || b[created + 10] !== SPACE) return false
    const createdNumber = dateNumberAt(b, created)
    const createdSeconds = createdNumber < 0 ? -1 : secondsAt(b, created + 11)
    if (createdSeconds < 0) return false
    // The zero date (and any other that is no date) has no created_date.
    if (createdNumber !== this.#lastCreatedNumber) {
      this.#lastCreated = this.#dayOf(createdNumber)
      this.#lastCreatedNumber = createdNumber
    }
    const createdDay = this.#lastCreated
    const createdCopied = createdDay !== null && createdDay.offset !== null && isClockTime(b, created + 11)
    const clockCreated = createdDay === null || createdCopied ? undefined : clock.isoOfDay(createdDay.clockDay, createdSeconds)

    // Stored text: its length once escaped (JSON) or quoted (CSV); -1 when it is no valid UTF-8.
    const exposeCustomer = this.#mapping.exposeCustomer
    const cellSize = json ? jsonCellSize : csvCellSize
    let name = 0
    let email = 0
    let phone = 0
    if (exposeCustomer) {
      name = cellSize(b, at[NAME]!, length[NAME]!)
      email = cellSize(b, at[EMAIL]!, length[EMAIL]!)
      phone = cellSize(b, at[PHONE]!, length[PHONE]!)
      if (name < 0 || email < 0 || phone < 0) return false
    }
    const note = length[NOTE]! < 0 ? 0 : cellSize(b, at[NOTE]!, length[NOTE]!)
    if (note < 0) return false

    const service = this.#serviceCell(serviceId, b, at[SERVICE_POST_NAME]!, length[SERVICE_POST_NAME]!)
    if (service === undefined) return false
    const serviceStatus = service.withStatus[status.index] ??= Buffer.concat([service.text, status.text])
    const room = end - start + serviceStatus.length + ROW_OVERHEAD_BYTES +
      name + email + phone + note + GROUP_KEY_BYTES
    if (room > CHUNK_BYTES) return false

    const out = this.#body.room(room)
    let w = this.#body.used
    const date = at[BOOKING_DATE]!
    if (json) {
      w = putText(out, w, this.#separator(serviceId))
      w = putBytes(out, w, JSON_ID, 0, JSON_ID.length)
      w = putBytes(out, w, b, at[ID]!, length[ID]!)
      w = putBytes(out, w, serviceStatus, 0, serviceStatus.length)
      if (!allDay && clockStart === undefined && to >= 0 && clockEnd === undefined) {
        // The usual booking: from and to copied, on a day of steady offset.
        const times = day.jsonTimes ??= jsonTimes(b, date, day.offset!)
        w = putBytes(out, w, times.head, 0, times.head.length)
        w = putTime(out, w, b, at[TIME_FROM]!)
        w = putBytes(out, w, times.middle, 0, times.middle.length)
        w = putTime(out, w, b, at[TIME_TO]!)
        w = putBytes(out, w, times.tail, 0, times.tail.length)
      } else {
        w = putBytes(out, w, b, date, 10)
        w = putBytes(out, w, JSON_START, 0, JSON_START.length)
        w = clockStart === undefined ? putIso(out, w, b, date, allDay ? -1 : at[TIME_FROM]!, day.offset!) : putText(out, w, clockStart)
        if (to < 0 && !allDay) {
          w = putBytes(out, w, JSON_NO_END, 0, JSON_NO_END.length)
        } else {
          w = putBytes(out, w, JSON_END, 0, JSON_END.length)
          w = clockEnd === undefined ? putIso(out, w, b, date, at[TIME_TO]!, day.offset!) : putText(out, w, clockEnd)
          w = putBytes(out, w, JSON_ALL_DAY, 0, JSON_ALL_DAY.length)
        }
        w = allDay ? putBytes(out, w, JSON_TRUE_CREATED, 0, JSON_TRUE_CREATED.length) : putBytes(out, w, JSON_FALSE_CREATED, 0, JSON_FALSE_CREATED.length)
      }
      if (createdDay === null) {
        w = putBytes(out, w, JSON_NULL, 0, JSON_NULL.length)
      } else {
        out[w++] = QUOTE
        w = clockCreated === undefined ? putIso(out, w, b, created, created + 11, createdDay.offset!) : putText(out, w, clockCreated)
        out[w++] = QUOTE
      }
      const noteNull = length[NOTE]! < 0
      if (exposeCustomer) {
        w = putBytes(out, w, JSON_NAME, 0, JSON_NAME.length)
        w = putJsonCell(out, w, b, at[NAME]!, length[NAME]!, name)
        w = putBytes(out, w, JSON_EMAIL, 0, JSON_EMAIL.length)
        w = putJsonCell(out, w, b, at[EMAIL]!, length[EMAIL]!, email)
        w = putBytes(out, w, JSON_PHONE, 0, JSON_PHONE.length)
        w = putJsonCell(out, w, b, at[PHONE]!, length[PHONE]!, phone)
        const next = noteNull ? JSON_CUSTOMER_END_NULL_NOTE : JSON_CUSTOMER_END_NOTE
        w = putBytes(out, w, next, 0, next.length)
      } else {
        const next = noteNull ? JSON_NO_CUSTOMER_NULL_NOTE : JSON_NO_CUSTOMER_NOTE
        w = putBytes(out, w, next, 0, next.length)
      }
      if (!noteNull) {
        w = putJsonCell(out, w, b, at[NOTE]!, length[NOTE]!, note)
        out[w++] = QUOTE
        out[w++] = CLOSE_BRACE
      }
    } else {
      w = putBytes(out, w, b, at[ID]!, length[ID]!)
      w = putBytes(out, w, serviceStatus, 0, serviceStatus.length)
      w = putBytes(out, w, b, date, 10)
      out[w++] = COMMA
      w = clockStart === undefined ? putIso(out, w, b, date, allDay ? -1 : at[TIME_FROM]!, day.offset!) : putText(out, w, clockStart)
      out[w++] = COMMA
      if (to >= 0 || allDay) w = clockEnd === undefined ? putIso(out, w, b, date, at[TIME_TO]!, day.offset!) : putText(out, w, clockEnd)
      w = allDay ? putBytes(out, w, CSV_TRUE, 0, CSV_TRUE.length) : putBytes(out, w, CSV_FALSE, 0, CSV_FALSE.length)
      if (createdDay !== null) w = clockCreated === undefined ? putIso(out, w, b, created, created + 11, createdDay.offset!) : putText(out, w, clockCreated)
      out[w++] = COMMA
      if (exposeCustomer) {
        w = putCsvCell(out, w, b, at[NAME]!, length[NAME]!, name)
        out[w++] = COMMA
        w = putCsvCell(out, w, b, at[EMAIL]!, length[EMAIL]!, email)
        out[w++] = COMMA
        w = putCsvCell(out, w, b, at[PHONE]!, length[PHONE]!, phone)
        out[w++] = COMMA
      } else {
        out[w++] = COMMA
        out[w++] = COMMA
        out[w++] = COMMA
      }
      if (length[NOTE]! >= 0) w = putCsvCell(out, w, b, at[NOTE]!, length[NOTE]!, note)
      out[w++] = CR
      out[w++] = LF
    }
    this.#body.used = w
    return true
  }

  /** The booked day of the date YYYYMMDD (#dayOf). */
  #day(number: number): RowDay | null {
    if (number === this.#lastDayNumber) return this.#lastDay
    this.#lastDayNumber = number
    this.#lastDay = this.#dayOf(number)
    return this.#lastDay
  }

  /** The day of the date YYYYMMDD, with its offset's bytes (null on a day whose offset changes); null when it is no date. */
  #dayOf(number: number): RowDay | null {
    let day = this.#days.get(number)
    if (day === undefined) {
      const clockDay = number < 0 ? null : this.#mapping.clock.dayOfNumber(number)
      day = clockDay === null ? null : { clockDay, offset: clockDay.offset === null ? null : Buffer.from(clockDay.offset, 'latin1'), jsonTimes: undefined }
      if (this.#days.size >= MAX_DAYS) this.#days.clear()
      this.#days.set(number, day)
    }
    return day
  }

  /**
   * The stored status's cell, as it is written (statusOf, then JSON with the
   * next key, or CSV with its comma); undefined past MAX_STATUS_CELLS distinct ones.
   */
  #statusCell(b: Buffer, at: number, length: number): StatusCell | undefined {
    if (length < 0) return undefined
    for (const cell of this.#statusCells) {
      if (sameBytes(cell.stored, b, at, length)) return cell
    }
    if (this.#statusCells.length >= MAX_STATUS_CELLS) return undefined
    const stored = Buffer.from(b.subarray(at, at + length))
    // The text mysql2 would have made of these bytes (utf8Slice), as the record's way reads it.
    const status = statusOf(stored.toString('utf8'))
    const text = Buffer.from(this.#format === 'json' ? `${jsonText(status)},"booking_date":"` : `${csvText(status)},`, 'utf8')
    const cell = { stored, text, index: this.#statusCells.length }
    this.#statusCells.push(cell)
    return cell
  }

  /**
   * From the service's ID to its status: `,"service_id":12,"service_slug":"haircut","status":`,
   * or `,12,haircut,` in CSV. The slug is of the post joined to the row (its
   * service_post_name cell, at `at`), else of the names given (serviceNames):
   * a statement joins every row of a service to the same post. Undefined for a
   * joined post_name that is no valid UTF-8, which the record's way decodes as mysql2 does.
   */
  #serviceCell(serviceId: number, b: Buffer, at: number, length: number): ServiceCell | undefined {
    let cell = this.#serviceCells.get(serviceId)
    if (cell === undefined) {
      if (length >= 0 && (!this.#slugIsText || !isUtf8(b.subarray(at, at + length)))) return undefined
      const postName = length >= 0 ? b.toString('utf8', at, at + length) : this.#names.get(serviceId)
      const slug = postName === undefined ? null : this.#mapping.slugOf(postName)
      const text = Buffer.from(this.#format === 'json'
        ? `,"service_id":${serviceId},"service_slug":${jsonText(slug)},"status":`
        : `,${serviceId},${csvText(slug)},`, 'utf8')
      cell = { text, withStatus: [] }
      this.#serviceCells.set(serviceId, cell)
    }
    return cell
  }
}

// The cells of a row, in BOOKING_ROW_COLUMNS' order.
const ID = 0
const SERVICE_ID = 1
const STATUS = 2
const BOOKING_DATE = 3
const TIME_FROM = 4
const TIME_TO = 5
const NAME = 6
const EMAIL = 7
const PHONE = 8
const NOTE = 9
const CREATED_AT = 10
const SERVICE_POST_NAME = 11

/** Whether a result's columns are a booking row's as a list writes it from its bytes: BOOKING_ROW_COLUMNS, integer IDs, text in UTF-8. */
export function acceptsBookingColumns(columns: readonly ResultColumn[]): boolean {
  return columns.length === CELLS && columns.every((column, i) =>
    column.name === BOOKING_ROW_COLUMNS[i] &&
    (i > 1 || INTEGER_TYPES.has(column.columnType)) &&
    (!TEXT_COLUMNS.has(column.name) || column.encoding === 'utf8'))
}

/** Days kept with their offset's bytes; a million bookings span a few thousand. */
const MAX_DAYS = 20_000

/**
 * The days of each clock with their offset's bytes, shared by every list of
 * the process, as the clock shares its days (wallClockFor): the rows of a
 * month's report were created on nearly as many days as there are rows, and
 * each answer making its own days again was most of the memory it promoted.
 */
const ROW_DAYS = new WeakMap<WallClock, Map<number, RowDay | null>>()

function rowDaysOf(clock: WallClock): Map<number, RowDay | null> {
  let days = ROW_DAYS.get(clock)
  if (days === undefined) {
    days = new Map()
    ROW_DAYS.set(clock, days)
  }
  return days
}

/** The most a grouped list's separator takes: `],"` and `":[` around a service ID of up to 15 digits. */
const GROUP_KEY_BYTES = 24

const QUOTE = 0x22
const COMMA = 0x2c
const SPACE = 0x20
const DIGIT_0 = 0x30
const BACKSLASH = 0x5c
const CLOSE_BRACE = 0x7d
const CR = 0x0d
const LF = 0x0a

// What a JSON record has between its cells.
const JSON_ID = Buffer.from('{"id":')
const JSON_START = Buffer.from('","start":"')
const JSON_NO_END = Buffer.from('","end":null,"all_day":')
const JSON_END = Buffer.from('","end":"')
const JSON_ALL_DAY = Buffer.from('","all_day":')
const JSON_TRUE_CREATED = Buffer.from('true,"created_date":')
const JSON_FALSE_CREATED = Buffer.from('false,"created_date":')
const JSON_NULL = Buffer.from('null')
const JSON_NAME = Buffer.from(',"customer":{"name":"')
const JSON_EMAIL = Buffer.from('","email":"')
const JSON_PHONE = Buffer.from('","phone":"')
const JSON_CUSTOMER_END_NOTE = Buffer.from('"},"note":"')
const JSON_CUSTOMER_END_NULL_NOTE = Buffer.from('"},"note":null}')
const JSON_NO_CUSTOMER_NOTE = Buffer.from(',"customer":null,"note":"')
const JSON_NO_CUSTOMER_NULL_NOTE = Buffer.from(',"customer":null,"note":null}')
const CSV_TRUE = Buffer.from(',true,')
const CSV_FALSE = Buffer.from(',false,')

/** Digits of a number as String(Number(text)) writes it: 1 to 15 digits, no leading zero. */
function isCount(b: Buffer, at: number, length: number): boolean {
  if (length < 1 || length > 15 || (length > 1 && b[at] === DIGIT_0)) return false
  for (let i = at; i < at + length; i++) {
    const digit = b[i]! - DIGIT_0
    if (digit < 0 || digit > 9) return false
  }
  return true
}

function countAt(b: Buffer, at: number, length: number): number {
  let number = 0
  for (let i = at; i < at + length; i++) number = number * 10 + (b[i]! - DIGIT_0)
  return number
}

function sameBytes(stored: Buffer, b: Buffer, at: number, length: number): boolean {
  if (stored.length !== length) return false
  for (let i = 0; i < length; i++) if (stored[i] !== b[at + i]) return false
  return true
}

function digitAt(b: Buffer, at: number): number {
  const digit = b[at]! - DIGIT_0
  return digit >= 0 && digit <= 9 ? digit : -1
}

/** `YYYY-MM-DD` as the number YYYYMMDD, unchecked as a date (WallClock.dayOfNumber checks it); -1 when not of that form. */
function dateNumberAt(b: Buffer, at: number): number {
  if (b[at + 4] !== 0x2d || b[at + 7] !== 0x2d) return -1
  const y1 = digitAt(b, at), y2 = digitAt(b, at + 1), y3 = digitAt(b, at + 2), y4 = digitAt(b, at + 3)
  const m1 = digitAt(b, at + 5), m2 = digitAt(b, at + 6), d1 = digitAt(b, at + 8), d2 = digitAt(b, at + 9)
  if ((y1 | y2 | y3 | y4 | m1 | m2 | d1 | d2) < 0) return -1
  return ((((((y1 * 10 + y2) * 10 + y3) * 10 + y4) * 10 + m1) * 10 + m2) * 10 + d1) * 10 + d2
}

/** `HH:MM:SS` as seconds, as WallClock.timeSeconds counts them (any two digits each); -1 when not of that form. */
function secondsAt(b: Buffer, at: number): number {
  if (b[at + 2] !== 0x3a || b[at + 5] !== 0x3a) return -1
  const h1 = digitAt(b, at), h2 = digitAt(b, at + 1)
  const m1 = digitAt(b, at + 3), m2 = digitAt(b, at + 4)
  const s1 = digitAt(b, at + 6), s2 = digitAt(b, at + 7)
  if ((h1 | h2 | m1 | m2 | s1 | s2) < 0) return -1
  return (h1 * 10 + h2) * 3600 + (m1 * 10 + m2) * 60 + s1 * 10 + s2
}

/** Whether `HH:MM:SS` (secondsAt's form) is a time of day as the clock writes it back: hours under 24, minutes and seconds under 60. */
function isClockTime(b: Buffer, at: number): boolean {
  return (b[at]! - DIGIT_0) * 10 + (b[at + 1]! - DIGIT_0) < 24 && b[at + 3]! < 0x36 && b[at + 6]! < 0x36
}

/** How JSON.stringify escapes a character below 0x20 that has a short form (\b \t \n \f \r); 0 for \u00XX. */
const SHORT_ESCAPES = new Uint8Array(0x20)
SHORT_ESCAPES[0x08] = 0x62
SHORT_ESCAPES[0x09] = 0x74
SHORT_ESCAPES[0x0a] = 0x6e
SHORT_ESCAPES[0x0c] = 0x66
SHORT_ESCAPES[0x0d] = 0x72

/**
 * The length of stored text in a JSON string, as JSON.stringify escapes it
 * (quote, backslash, control characters; valid UTF-8 needs nothing else); -1 when it is no valid UTF-8.
 */
function jsonCellSize(b: Buffer, at: number, length: number): number {
  let size = length
  let ascii = true
  for (let i = at; i < at + length; i++) {
    const c = b[i]!
    if (c < 0x20) size += SHORT_ESCAPES[c] === 0 ? 5 : 1
    else if (c === QUOTE || c === BACKSLASH) size += 1
    else if (c >= 0x80) ascii = false
  }
  return ascii || isUtf8(b.subarray(at, at + length)) ? size : -1
}

function putJsonCell(out: Buffer, w: number, b: Buffer, at: number, length: number, size: number): number {
  if (size === length) return putBytes(out, w, b, at, length)
  for (let i = at; i < at + length; i++) {
    const c = b[i]!
    if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) {
      out[w++] = c
    } else if (c >= 0x20) {
      out[w++] = BACKSLASH
      out[w++] = c
    } else if (SHORT_ESCAPES[c] !== 0) {
      out[w++] = BACKSLASH
      out[w++] = SHORT_ESCAPES[c]!
    } else {
      // \u00XX, in lower-case hex as JSON.stringify writes it.
      w = putText(out, w, `\\u00${c.toString(16).padStart(2, '0')}`)
    }
  }
  return w
}

/** Whether a cell starting with this byte is one a spreadsheet would run as a formula (= + - @ tab CR): csvCell prefixes `'`. */
function startsFormula(c: number): boolean {
  return c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 || c === 0x09 || c === CR
}

/**
 * The length of stored text as a CSV cell, as csvCell writes it (the formula
 * guard's `'`, quotes around text with a quote, comma, CR or LF, and each quote
 * doubled); -1 when it is no valid UTF-8.
 */
function csvCellSize(b: Buffer, at: number, length: number): number {
  if (length === 0) return 0
  let size = startsFormula(b[at]!) ? length + 1 : length
  let quoted = false
  let ascii = true
  for (let i = at; i < at + length; i++) {
    const c = b[i]!
    if (c === QUOTE) {
      quoted = true
      size += 1
    } else if (c === COMMA || c === CR || c === LF) {
      quoted = true
    } else if (c >= 0x80) {
      ascii = false
    }
  }
  if (quoted) size += 2
  return ascii || isUtf8(b.subarray(at, at + length)) ? size : -1
}

function putCsvCell(out: Buffer, w: number, b: Buffer, at: number, length: number, size: number): number {
  if (size === length) return putBytes(out, w, b, at, length)
  const guard = startsFormula(b[at]!)
  const quoted = size !== length + (guard ? 1 : 0)
  if (quoted) out[w++] = QUOTE
  if (guard) out[w++] = 0x27 // '
  for (let i = at; i < at + length; i++) {
    const c = b[i]!
    out[w++] = c
    if (c === QUOTE) out[w++] = QUOTE
  }
  if (quoted) out[w++] = QUOTE
  return w
}

/** ASCII text (the clock's ISO times, a group's key) into `out` at `w`; returns the end. */
function putText(out: Buffer, w: number, text: string): number {
  for (let i = 0; i < text.length; i++) out[w + i] = text.charCodeAt(i)
  return w + text.length
}

function putBytes(out: Buffer, w: number, from: Buffer, at: number, length: number): number {
  // A whole buffer of over 16 bytes is set in one call; a part of one
  // is copied byte by byte up to about 48 (a subarray to set from cost as much).
  if (length === from.length ? length > 16 : length > 48) {
    out.set(length === from.length ? from : from.subarray(at, at + length), w)
  } else {
    for (let i = 0; i < length; i++) out[w + i] = from[at + i]!
  }
  return w + length
}

/** JsonTimes of the day whose date is at `date` in `b`, with its offset's bytes. */
function jsonTimes(b: Buffer, date: number, offset: Buffer): JsonTimes {
  const day = b.toString('latin1', date, date + 10)
  const zone = offset.toString('latin1')
  return {
    head: Buffer.from(`${day}","start":"${day}T`, 'latin1'),
    middle: Buffer.from(`${zone}","end":"${day}T`, 'latin1'),
    tail: Buffer.from(`${zone}","all_day":false,"created_date":`, 'latin1'),
  }
}

/** `HH:MM:SS` copied from `b` at `at`. */
function putTime(out: Buffer, w: number, b: Buffer, at: number): number {
  out[w] = b[at]!
  out[w + 1] = b[at + 1]!
  out[w + 2] = b[at + 2]!
  out[w + 3] = b[at + 3]!
  out[w + 4] = b[at + 4]!
  out[w + 5] = b[at + 5]!
  out[w + 6] = b[at + 6]!
  out[w + 7] = b[at + 7]!
  return w + 8
}

/** `YYYY-MM-DDTHH:MM:SS+hh:mm` from a date's bytes and a time's (timeAt -1: 00:00:00), with the day's offset. */
function putIso(out: Buffer, w: number, b: Buffer, dateAt: number, timeAt: number, offset: Buffer): number {
  // Written out byte by byte: three of these per booking, where a loop per piece cost twice as much.
  out[w] = b[dateAt]!
  out[w + 1] = b[dateAt + 1]!
  out[w + 2] = b[dateAt + 2]!
  out[w + 3] = b[dateAt + 3]!
  out[w + 4] = b[dateAt + 4]!
  out[w + 5] = b[dateAt + 5]!
  out[w + 6] = b[dateAt + 6]!
  out[w + 7] = b[dateAt + 7]!
  out[w + 8] = b[dateAt + 8]!
  out[w + 9] = b[dateAt + 9]!
  out[w + 10] = 0x54 // T
  w = timeAt < 0 ? putTime(out, w + 11, MIDNIGHT, 0) : putTime(out, w + 11, b, timeAt)
  if (offset.length === 6) {
    // ±hh:mm, unrolled: every offset but UTC's Z.
    out[w] = offset[0]!
    out[w + 1] = offset[1]!
    out[w + 2] = offset[2]!
    out[w + 3] = offset[3]!
    out[w + 4] = offset[4]!
    out[w + 5] = offset[5]!
    return w + 6
  }
  for (let i = 0; i < offset.length; i++) out[w + i] = offset[i]!
  return w + offset.length
}
const MIDNIGHT = Buffer.from('00:00:00')
