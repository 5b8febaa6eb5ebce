// The digest source's period digests (changes/, decision 0037) from the digests
// MariaDB gives per booking_date (compileBookingsDayDigests): each day's
// number of rows and sums of CRC-32s, added up by period. Pure.
import { randomUUID } from 'node:crypto'
import { periodOfDay, type BookingsDayDigestRow, type PeriodKind } from './booking-queries.ts'

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
  const sums = new Map<number, { rows: number; crc: bigint; reversed: bigint; exact: boolean }>()
  for (const row of rows) {
    const period = periodOfDay(dayOfNumber(row.day), kind)
    const sum = sums.get(period) ?? { rows: 0, crc: 0n, reversed: 0n, exact: true }
    const count = Number(row.row_count)
    sums.set(period, {
      rows: sum.rows + count,
      crc: sum.crc + BigInt(row.row_crc_sum ?? 0),
      reversed: sum.reversed + BigInt(row.row_crc_reversed_sum ?? 0),
      exact: sum.exact && count <= MOST_EXACT_DAY_ROWS,
    })
  }
  return new Map([...sums].map(([period, sum]) => [period, sum.exact ? `${sum.rows}:${sum.crc}:${sum.reversed}` : `${sum.rows}:unknown:${unique()}`]))
}
