// The body of `GET slots/` as JSON (grouped or flat) and as CSV (API.md, "GET slots/").
import type { BookingMapping, BookingRecord } from '../domain/booking-record.ts'
import { pickFields } from '../domain/pick-fields.ts'
import type { AnswerSink, SlotsAnswer } from '../domain/slots.ts'
import { BookingList } from './booking-list.ts'
import { CSV_COLUMNS, csvColumns, csvLine, csvRow } from './booking-text.ts'
import { Utf8Chunks } from './stream-body.ts'
import { BYTE_ORDER_MARK } from './text-chunks.ts'

/**
 * The body of one attempt at an answer, made before it (a new one for each
 * attempt: domain/slots.ts): an answer read at once (a narrow report) writes
 * its bookings into `sink` as it reads them.
 */
export class SlotsBody {
  readonly #chunks = new Utf8Chunks()
  readonly #list: BookingList
  readonly #format: 'json' | 'csv'

  /**
   * JSON: `{"booked_slots": {...} | [...], "total": N}`. Grouped records arrive
   * ordered by service ID, so each group is written as it is reached; keys are
   * the IDs as strings, in ascending numeric order. CSV: always the flat list,
   * after a byte-order mark with `bom` (API.md, "Spreadsheets and BI tools").
   */
  constructor(format: 'json' | 'csv', fields: readonly string[] | undefined, grouped: boolean, mapping: BookingMapping, bom = false) {
    this.#format = format
    if (format === 'json') {
      this.#list = new BookingList(this.#chunks, {
        format, head: grouped ? '{"booked_slots":{' : '{"booked_slots":[', grouped, mapping,
        recordText: fields && ((record: BookingRecord) => JSON.stringify(pickFields(record, fields))),
      })
    } else {
      const columns = csvColumns(fields)
      this.#list = new BookingList(this.#chunks, {
        format, head: (bom ? BYTE_ORDER_MARK : '') + csvLine(columns.map((column) => column.name)), grouped: false, mapping,
        recordText: columns === CSV_COLUMNS ? undefined : (record: BookingRecord) => csvRow(columns, record),
      })
    }
  }

  /** The body's list, which takes rows as bytes or (`_fields`) as records only (takesBytes). */
  get list(): AnswerSink {
    return this.#list
  }

  get takesBytes(): boolean {
    return this.#list.takesBytes
  }

  /** The body's chunks, its bookings written into it by `rows` (answer.rowsInto of a sink that hands them on to `list`). */
  async *chunksFrom(answer: SlotsAnswer, rows: AsyncIterable<number>, onRows: (rows: number) => void): AsyncGenerator<Buffer> {
    for await (const count of rows) {
      onRows(count)
      yield* this.#chunks.full()
    }
    yield* this.#end(answer.total)
  }

  /** Where the answer may write its bookings as bytes; undefined when the list takes records only (`_fields`). */
  get sink(): AnswerSink | undefined {
    return this.#list.takesBytes ? this.#list : undefined
  }

  /**
   * The whole body at once, for an answer whose bookings this body's sink
   * holds already (`written`: a narrow report read in one statement);
   * undefined for any other answer, which chunks() reads. Made without a
   * generator: each turn of one costs microtasks, and a one-month report
   * waits for every one of them (docs/performance.md).
   */
  whole(answer: SlotsAnswer): Buffer[] | undefined {
    if (!answer.written || !this.#list.takesBytes) return undefined
    return [...this.#end(answer.total)]
  }

  /** The body's chunks, made from an answer's records in memory (a page, a narrow answer with _fields). */
  async *chunks(answer: SlotsAnswer, onRows: (rows: number) => void): AsyncGenerator<Buffer> {
    const list = this.#list
    for await (const batch of answer.batches) {
      for (const record of batch) list.record(record)
      onRows(batch.length)
      yield* this.#chunks.full()
    }
    yield* this.#end(answer.total)
  }

  /** The body's last chunks: JSON's closing brackets and total written after the bookings, then whatever is held. */
  #end(total: number | undefined): Generator<Buffer> {
    if (this.#format === 'json') this.#chunks.write(`${this.#list.jsonEnd()},"total":${total}}`)
    return this.#chunks.end()
  }
}
