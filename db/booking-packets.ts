// Bookings read as MariaDB's row packets, handed to a sink as they arrive
// (db/row-packets.ts; decision 0023).
import type { Snapshot } from './snapshot.ts'
import type { Db } from './connect.ts'
import { readCells, ROW_TAKEN, type RowPacketSink } from './row-packets.ts'
import type { BoundedPool } from './bounded-pool.ts'
import type { BookingFilter, BookingOrder } from './booking-filter.ts'
import { BOOKING_ROW_COLUMNS, compileBookings, readServiceNames, type BookingColumns, type BookingRow } from './booking-queries.ts'
import { readWithoutLostIndex, withoutLostIndex } from './lost-index.ts'

/** Takes the rows of streamBookingPackets: as bytes where it can (db/row-packets.ts), else as BookingRows. */
export interface BookingRowSink extends RowPacketSink<BookingRow> {
  /** The post_name of every service by ID, before the first row: a row's service_post_name cell is always NULL. */
  serviceNames(names: ReadonlyMap<number, string>): void
  /** A row of a result the sink did not accept, its service_post_name filled in. */
  parsedRow(row: BookingRow): void
}

/**
 * streamBookings, with every row handed to `sink` as it arrives; yields how
 * many rows each batch had. The rows of the batch are written by then.
 */
export async function* streamBookingPackets(
  db: Db, snapshot: Snapshot, filter: BookingFilter, order: BookingOrder, rowTimeoutMs: number, columns: BookingColumns, sink: BookingRowSink,
): AsyncGenerator<number> {
  const names = await readServiceNames(db, snapshot, rowTimeoutMs)
  sink.serviceNames(names)
  const read = () => snapshot.batches(compileBookings(db, filter, order, columns, undefined, false), { rowTimeoutMs, sink })
  for await (const batch of withoutLostIndex(db, read)) {
    for (const row of batch as Array<BookingRow | typeof ROW_TAKEN>) {
      if (row === ROW_TAKEN) continue
      row.service_post_name = names.get(row.service_id) ?? null
      sink.parsedRow(row)
    }
    yield batch.length
  }
}

/**
 * findFirstBookings with the rows handed to `sink` as they arrive, as bytes
 * where it takes them (db/row-packets.ts): how many there were, and whether
 * the first came joined to its bc_service post. A row's service_post_name
 * cell is its post's here, as in findFirstBookings: the sink is told no names.
 */
export async function findFirstBookingPackets(
  db: Db, pool: BoundedPool, filter: BookingFilter, order: BookingOrder, limit: number, columns: BookingColumns, sink: BookingRowSink,
): Promise<{ rows: number; firstHasService: boolean }> {
  let firstHasService: boolean | undefined
  const watched: RowPacketSink<BookingRow> = {
    accepts: (result) => sink.accepts(result),
    row(bytes, start, end, row) {
      // A first row whose cells cannot be read here (over 16 MiB) counts as without a post: the ID is then looked up.
      firstHasService ??= readCells(bytes, start, end, BOOKING_ROW_COLUMNS.length, FIRST_ROW_CELLS.start, FIRST_ROW_CELLS.length) &&
        FIRST_ROW_CELLS.length[SERVICE_POST_NAME_CELL]! >= 0
      sink.row(bytes, start, end, row)
    },
  }
  // One statement of its own, which reads one snapshot by itself.
  const lease = await pool.acquire()
  try {
    const rows = await readWithoutLostIndex(db, () => {
      const compiled = compileBookings(db, filter, order, columns, limit)
      return lease.query<BookingRow | typeof ROW_TAKEN>(compiled.sql, compiled.parameters, undefined, watched)
    })
    for (const row of rows) {
      if (row === ROW_TAKEN) continue
      firstHasService ??= row.service_post_name !== null
      sink.parsedRow(row)
    }
    return { rows: rows.length, firstHasService: firstHasService ?? false }
  } finally {
    lease.release()
  }
}

const SERVICE_POST_NAME_CELL = BOOKING_ROW_COLUMNS.indexOf('service_post_name')
const FIRST_ROW_CELLS = { start: new Int32Array(BOOKING_ROW_COLUMNS.length), length: new Int32Array(BOOKING_ROW_COLUMNS.length) }
