// The tag of a streamed slots/ answer, made from its rows as they are read
// (decision 0028; docs/conditional-requests.md): a SHA-256 over each row as
// MariaDB sends it (its cells, length-coded, in BOOKING_ROW_COLUMNS' order) and
// over the services' names read in the same snapshot. The rows are read once:
// the same pass writes the body (a 200) or only hashes (a 304 decided).
import { createHash, type Hash } from 'node:crypto'
import { BOOKING_ROW_COLUMNS, type BookingRow } from '../../db/booking-queries.ts'
import type { ParsedRow, ResultColumn } from '../../db/row-packets.ts'
import type { AnswerSink } from '../domain/slots.ts'
import { acceptsBookingColumns } from './booking-list.ts'

/**
 * A sink that hashes every row it is given and hands it on to `body` (the
 * body's list), or to nothing. It takes the rows as bytes whenever their
 * columns are the booking row's, whatever the body takes, so a 200 and a 304
 * hash the same bytes; to a body that takes records (`_fields`), a row taken as
 * bytes is handed on parsed. A row that reaches it parsed (ROWS_AS_BYTES=false)
 * is hashed as the bytes MariaDB sent for it: the same tag either way.
 */
export class RowTagger implements AnswerSink {
  readonly #body: AnswerSink | undefined
  readonly #bodyTakesBytes: boolean
  #hash: Hash = createHash('sha256')
  #rows = 0
  #names: ReadonlyMap<number, string> = new Map()

  constructor(body: AnswerSink | undefined, bodyTakesBytes: boolean) {
    this.#body = body
    this.#bodyTakesBytes = bodyTakesBytes
  }

  /** Rows hashed. */
  get rows(): number {
    return this.#rows
  }

  /** The SHA-256 (base64url) of the services' names and every row hashed, in their order. */
  digest(): string {
    return this.#hash.copy().digest('base64url')
  }

  accepts(columns: readonly ResultColumn[]): boolean {
    const taken = acceptsBookingColumns(columns)
    // The body's list learns the columns too (it reads its slugs' encoding from them).
    if (this.#body !== undefined && this.#bodyTakesBytes && !this.#body.accepts(columns)) return false
    return taken
  }

  serviceNames(names: ReadonlyMap<number, string>): void {
    this.#names = names
    const sorted = [...names].sort(([a], [b]) => a - b)
    this.#hash.update(JSON.stringify(sorted))
    this.#body?.serviceNames(names)
  }

  row(bytes: Buffer, start: number, end: number, row: ParsedRow<BookingRow>): void {
    this.#rows++
    this.#hash.update(bytes.subarray(start, end))
    if (this.#body === undefined) return
    if (this.#bodyTakesBytes) {
      this.#body.row(bytes, start, end, row)
      return
    }
    const parsed = row.parsed()
    parsed.service_post_name ??= this.#names.get(parsed.service_id) ?? null
    this.#body.parsedRow(parsed)
  }

  parsedRow(row: BookingRow): void {
    this.#rows++
    this.#hash.update(rowPacket(row))
    this.#body?.parsedRow(row)
  }

  dropRows(): void {
    this.#hash = createHash('sha256')
    this.#rows = 0
    this.#body?.dropRows()
  }
}

/**
 * A parsed row as the bytes of its packet: each cell length-coded, NULL as
 * 0xFB, numbers in their decimal digits, text in UTF-8; service_post_name as
 * the NULL a streamed answer's statement sends (the names are hashed apart).
 */
export function rowPacket(row: BookingRow): Buffer {
  const parts: Buffer[] = []
  for (const column of BOOKING_ROW_COLUMNS) {
    const value = column === 'service_post_name' ? null : row[column]
    if (value === null) {
      parts.push(NULL_CELL)
      continue
    }
    const text = Buffer.from(String(value), 'utf8')
    parts.push(lengthCode(text.length), text)
  }
  return Buffer.concat(parts)
}

const NULL_CELL = Buffer.from([0xfb])

/** MySQL's length-encoded integer. */
function lengthCode(length: number): Buffer {
  if (length < 0xfb) return Buffer.from([length])
  if (length < 0x10000) return Buffer.from([0xfc, length & 0xff, length >> 8])
  if (length < 0x1000000) return Buffer.from([0xfd, length & 0xff, (length >> 8) & 0xff, length >> 16])
  const code = Buffer.alloc(9)
  code[0] = 0xfe
  code.writeBigUInt64LE(BigInt(length), 1)
  return code
}
