// The digest source's period digests (changes/, decision 0037) from the digests
// MariaDB gives per booking_date (compileBookingsDayDigests): each day's
// number of rows and sums of CRC-32s, added up by period. Pure.
import { randomUUID } from 'node:crypto'
import { periodDigestColumns, periodOfDay, type BookingColumns, type BookingRow, type BookingsDayDigestRow, type PeriodKind } from './booking-queries.ts'
import { rowCellsCrcs, type RowCrcs } from './row-digest.ts'

/**
 * The most rows a day's sums are exact for: each CRC-32 is below 2^32, and the
 * statement adds them as DOUBLEs, exact below 2^53.
 */
export const MOST_EXACT_DAY_ROWS = 2 ** 21

/** A day as `booking_date + 0` gives it (20250230, 0 for the zero date) → its text ("2025-02-30", "0000-00-00"). */
export function dayOfNumber(day: number | string): string {
  const digits = String(day).padStart(8, '0')
  return `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6, 8)}`
}

/**
 * Each period's digest ("rows:sum:sum", the sums exact, as big integers) from
 * the rows of one or more statements of day digests (a day may come in both
 * halves of a read cut by id). A period with a day of more rows than
 * MOST_EXACT_DAY_ROWS gets a digest no other read gives (`unique`): it is
 * replaced by every delta, never wrongly kept.
 */
export function periodDigestsOfDays(rows: readonly BookingsDayDigestRow[], kind: PeriodKind, unique: () => string = randomUUID): Map<number, string> {
  const sums = new Map<number, PeriodDigestSum>()
  const inexact = new Set<number>()
  for (const row of rows) {
    const period = periodOfDay(dayOfNumber(row.day), kind)
    const sum = sums.get(period) ?? new PeriodDigestSum()
    sums.set(period, sum)
    const count = Number(row.row_count)
    sum.addSums(count, BigInt(row.row_crc_sum ?? 0), BigInt(row.row_crc_reversed_sum ?? 0))
    if (count > MOST_EXACT_DAY_ROWS) inexact.add(period)
  }
  return new Map([...sums].map(([period, sum]) => [period, inexact.has(period) ? `${sum.rows}:unknown:${unique()}` : sum.digest]))
}

/**
 * A booking's two CRC-32s as the statement computes them (compileBookingsDayDigests):
 * its cells (periodDigestColumns) as MariaDB sends them as text, numbers in
 * their digits, NULL as NULL. The rows a page sends, digested here, are
 * compared with the digests the statement read (server/domain/changes.ts).
 */
export function bookingRowCrcs(row: BookingRow, columns: BookingColumns, out: RowCrcs): void {
  rowCellsCrcs(periodDigestColumns(columns).map(({ name }) => {
    const cell = row[name as keyof BookingRow]
    return cell === null ? null : String(cell)
  }), out)
}

/** A period's digest added up ("rows:sum:sum", the sums exact), by rows or by days, from the text of an earlier part (a page's). */
export class PeriodDigestSum {
  #rows: number
  #crc: bigint
  #reversed: bigint
  readonly #crcs: RowCrcs = { crc: 0, reversed: 0 }

  constructor(from = '0:0:0') {
    const [rows, crc, reversed] = from.split(':')
    this.#rows = Number(rows)
    this.#crc = BigInt(crc!)
    this.#reversed = BigInt(reversed!)
  }

  /** A row as the worker sends it. */
  add(row: BookingRow, columns: BookingColumns): void {
    bookingRowCrcs(row, columns, this.#crcs)
    this.addSums(1, BigInt(this.#crcs.crc), BigInt(this.#crcs.reversed))
  }

  /** Rows already added up: a day's, as the statement gives them. */
  addSums(rows: number, crc: bigint, reversed: bigint): void {
    this.#rows += rows
    this.#crc += crc
    this.#reversed += reversed
  }

  get rows(): number {
    return this.#rows
  }

  get digest(): string {
    return `${this.#rows}:${this.#crc}:${this.#reversed}`
  }
}
