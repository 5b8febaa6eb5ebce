// Which index on {prefix}booking_calendar_bookings begins with (booking_date,
// time_from), like bc_api_date, and which with (service_id, booking_date,
// time_from), like bc_api_service_date: db/index-hints.ts names them where
// MariaDB would scan and sort (decision 0019, docs/performance.md "Indexes").
// The plugin ships neither and an operator may add or drop one at any time,
// so the service looks, and names an index only while it is there.
import { sql } from 'kysely'
import type { Db } from './database.ts'

/** How often the index list is read again: an index an operator adds is used from then on. */
export const INDEX_REFRESH_MS = 5 * 60_000

interface IndexState {
  /** The index's name, or undefined while none is known. */
  bookingDate: string | undefined
  /** The same for an index in service order: (service_id, booking_date, time_from). */
  serviceDate: string | undefined
  timer: NodeJS.Timeout | undefined
}

const states = new WeakMap<Db, IndexState>()

/** An index whose first columns are booking_date and time_from; one that also holds status is preferred (it filters statuses in the index). */
export function pickBookingDateIndex(columnsByIndex: Map<string, string[]>): string | undefined {
  let best: string | undefined
  for (const [name, columns] of columnsByIndex) {
    if (columns[0]?.toLowerCase() !== 'booking_date' || columns[1]?.toLowerCase() !== 'time_from') continue
    const hasStatus = columns.some((column) => column.toLowerCase() === 'status')
    if (best === undefined || (hasStatus && !columnsByIndex.get(best)!.some((column) => column.toLowerCase() === 'status'))) best = name
  }
  return best
}

/**
 * An index whose first columns are service_id, booking_date and time_from: it
 * holds the bookings in a grouped answer's order (InnoDB ends every index with
 * the primary key, id, the order's last column).
 */
export function pickServiceDateIndex(columnsByIndex: Map<string, string[]>): string | undefined {
  for (const [name, columns] of columnsByIndex) {
    const [first, second, third] = columns.map((column) => column.toLowerCase())
    if (first === 'service_id' && second === 'booking_date' && third === 'time_from') return name
  }
  return undefined
}

/** Reads the table's indexes now; a failure leaves what was known (the queries then run as they would without a hint). */
export async function readBookingIndexes(db: Db, table: string): Promise<void> {
  const state = stateOf(db)
  try {
    const { rows } = await sql<{ INDEX_NAME: string; COLUMN_NAME: string }>`
      SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${table}
      ORDER BY INDEX_NAME, SEQ_IN_INDEX`.execute(db)
    const columnsByIndex = new Map<string, string[]>()
    for (const row of rows) columnsByIndex.set(row.INDEX_NAME, [...(columnsByIndex.get(row.INDEX_NAME) ?? []), row.COLUMN_NAME])
    state.bookingDate = pickBookingDateIndex(columnsByIndex)
    state.serviceDate = pickServiceDateIndex(columnsByIndex)
  } catch {
    // The service answers without the hint: slower on long ranges, never wrong.
  }
}

/** Reads the indexes now and every INDEX_REFRESH_MS until stopBookingIndexes. */
export function watchBookingIndexes(db: Db, table: string): Promise<void> {
  const state = stateOf(db)
  if (!state.timer) {
    state.timer = setInterval(() => void readBookingIndexes(db, table), INDEX_REFRESH_MS)
    state.timer.unref()
  }
  return readBookingIndexes(db, table)
}

export function stopBookingIndexes(db: Db): void {
  const state = states.get(db)
  if (state?.timer) clearInterval(state.timer)
  if (state) state.timer = undefined
}

/** The index to read booking-date ranges through, if the table has one. */
export function bookingDateIndex(db: Db): string | undefined {
  return states.get(db)?.bookingDate
}

/** The index to read the whole table through in service order, if the table has one. */
export function serviceDateIndex(db: Db): string | undefined {
  return states.get(db)?.serviceDate
}

/** MariaDB said a hinted index is gone (ER_KEY_DOES_NOT_EXITS): no hint at all until the next read finds them. */
export function forgetHintedIndexes(db: Db, error: unknown): boolean {
  if ((error as { errno?: unknown } | null)?.errno !== ER_KEY_DOES_NOT_EXITS) return false
  const state = stateOf(db)
  state.bookingDate = undefined
  state.serviceDate = undefined
  return true
}

const ER_KEY_DOES_NOT_EXITS = 1176

function stateOf(db: Db): IndexState {
  let state = states.get(db)
  if (!state) {
    state = { bookingDate: undefined, serviceDate: undefined, timer: undefined }
    states.set(db, state)
  }
  return state
}
