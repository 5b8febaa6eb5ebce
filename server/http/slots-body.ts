// The body of `GET slots/` as JSON (grouped or flat) and as CSV (API.md, "CSV").
import type { BookingRecord } from '../domain/booking-record.ts'
import { pickFields } from '../domain/pick-fields.ts'
import type { SlotsAnswer } from '../domain/slots.ts'
import { BookingList } from './booking-list.ts'
import { CSV_COLUMNS, csvColumns, csvLine, csvRow } from './booking-text.ts'
import { Utf8Chunks } from './stream-body.ts'

/**
 * `{"booked_slots": {...} | [...], "total": N}`. Grouped records arrive
 * ordered by service ID, so each group is written as it is reached; keys are
 * the IDs as strings, in ascending numeric order.
 */
export async function* slotsJsonChunks(answer: SlotsAnswer, fields: readonly string[] | undefined, onRows: (rows: number) => void): AsyncGenerator<Buffer> {
  const body = new Utf8Chunks()
  const list = new BookingList(body, {
    format: 'json', head: answer.grouped ? '{"booked_slots":{' : '{"booked_slots":[', grouped: answer.grouped, mapping: answer.mapping,
    recordText: fields && ((record: BookingRecord) => JSON.stringify(pickFields(record, fields))),
  })
  yield* writeBookings(answer, list, body, onRows)
  body.write(`${list.jsonEnd()},"total":${answer.total}}`)
  yield* body.end()
}

export async function* slotsCsvChunks(answer: SlotsAnswer, fields: readonly string[] | undefined, onRows: (rows: number) => void): AsyncGenerator<Buffer> {
  const columns = csvColumns(fields)
  const body = new Utf8Chunks()
  const list = new BookingList(body, {
    format: 'csv', head: csvLine(columns.map((column) => column.name)), grouped: false, mapping: answer.mapping,
    recordText: columns === CSV_COLUMNS ? undefined : (record: BookingRecord) => csvRow(columns, record),
  })
  yield* writeBookings(answer, list, body, onRows)
  yield* body.end()
}

/** The answer's bookings into `list`: from the database's bytes when the answer streams and the list takes them, else as records. */
async function* writeBookings(answer: SlotsAnswer, list: BookingList, body: Utf8Chunks, onRows: (rows: number) => void): AsyncGenerator<Buffer> {
  if (answer.rowsInto && list.takesBytes) {
    for await (const rows of answer.rowsInto(list)) {
      onRows(rows)
      yield* body.full()
    }
    return
  }
  for await (const batch of answer.batches) {
    for (const record of batch) list.record(record)
    onRows(batch.length)
    yield* body.full()
  }
}
