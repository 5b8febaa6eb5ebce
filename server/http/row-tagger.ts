// The tag of a streamed slots/ answer, made from its rows as they are read
// (decisions 0028 and 0034; docs/conditional-requests.md): each row's CRC-32
// over its cells as MariaDB sends them (db/row-digest.ts), added up, and the
// services' names read in the same snapshot. The database computes the same
// digest for a conditional request without sending a row (SlotsAnswer.rowsDigest);
// a 200 hashes the rows it reads for its body, in the same pass.
import { BOOKING_ROW_COLUMNS, type BookingRow } from '../../db/booking-queries.ts'
import type { ParsedRow, ResultColumn } from '../../db/row-packets.ts'
import { RowCrcSum, rowCellsCrcs, rowPacketCrcs, serviceNamesDigest, type RowCrcs, type RowsDigest } from '../../db/row-digest.ts'
import type { AnswerSink } from '../domain/slots.ts'
import type { BookingRowSink } from '../../db/booking-packets.ts'
import { acceptsBookingColumns } from './booking-list.ts'

/**
 * A sink that hashes every row it is given and hands it on to `body` (the
 * body's list). It takes the rows as bytes whenever their
 * columns are the booking row's, whatever the body takes; to a body that
 * takes records (`_fields`), a row taken as bytes is handed on parsed. A row
 * that reaches it parsed (ROWS_AS_BYTES=false) is hashed as the cells MariaDB
 * sent for it: the same digest either way.
 */
export class RowTagger implements BookingRowSink {
  readonly #body: AnswerSink
  readonly #bodyTakesBytes: boolean
  #sum = new RowCrcSum()
  /** Each row's CRCs, written in place: no object a row. */
  readonly #crcs: RowCrcs = { crc: 0, reversed: 0 }
  #names: ReadonlyMap<number, string> = new Map()
  #namesDigest = serviceNamesDigest(new Map())
  /** False once handOnNothing: rows are hashed and counted, and go no further. */
  #handingOn = true

  constructor(body: AnswerSink, bodyTakesBytes: boolean) {
    this.#body = body
    this.#bodyTakesBytes = bodyTakesBytes
  }

  /** From now on the rows are counted (and hashed) only: the body takes none (an answer read to its end to count it). */
  handOnNothing(): void {
    this.#handingOn = false
  }

  /** Rows hashed. */
  get rows(): number {
    return this.#sum.rows
  }

  /** The digest of the services' names and every row hashed, as SlotsAnswer.rowsDigest gives it. */
  digest(): RowsDigest {
    return { rows: this.#sum.rows, crcSum: this.#sum.sum, serviceNames: this.#namesDigest }
  }

  accepts(columns: readonly ResultColumn[]): boolean {
    const taken = acceptsBookingColumns(columns)
    // The body's list learns the columns too (it reads its slugs' encoding from them).
    if (this.#bodyTakesBytes && !this.#body.accepts(columns)) return false
    return taken
  }

  serviceNames(names: ReadonlyMap<number, string>): void {
    this.#names = names
    this.#namesDigest = serviceNamesDigest(names)
    this.#body.serviceNames(names)
  }

  row(bytes: Buffer, start: number, end: number, row: ParsedRow<BookingRow>): void {
    // A packet whose cells cannot be walked here never reaches a sink: acceptsBookingColumns checked its columns.
    if (!rowPacketCrcs(bytes, start, end, BOOKING_ROW_COLUMNS.length, this.#crcs)) rowCellsCrcs(rowCells(row.parsed()), this.#crcs)
    this.#sum.add(this.#crcs)
    if (!this.#handingOn) return
    if (this.#bodyTakesBytes) {
      this.#body.row(bytes, start, end, row)
      return
    }
    const parsed = row.parsed()
    parsed.service_post_name ??= this.#names.get(parsed.service_id) ?? null
    this.#body.parsedRow(parsed)
  }

  parsedRow(row: BookingRow): void {
    rowCellsCrcs(rowCells(row), this.#crcs)
    this.#sum.add(this.#crcs)
    if (this.#handingOn) this.#body.parsedRow(row)
  }
}

/**
 * A parsed row's cells as the text MariaDB sent: numbers in their decimal
 * digits; service_post_name as the NULL a streamed answer's statement sends
 * (the names are hashed apart).
 */
export function rowCells(row: BookingRow): Array<string | null> {
  return BOOKING_ROW_COLUMNS.map((column) => {
    const value = column === 'service_post_name' ? null : row[column]
    return value === null ? null : String(value)
  })
}
