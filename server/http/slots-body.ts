// The body of `GET slots/` as JSON (grouped or flat) and as CSV (API.md, "CSV").
import { BOOKING_FIELDS, pickFields, type BookingRecord } from '../domain/records.ts'
import type { SlotsAnswer } from '../domain/slots.ts'
import { CHUNK_CHARS } from './stream-body.ts'

/**
 * `{"booked_slots": {...} | [...], "total": N}`. Grouped records arrive
 * ordered by service ID, so each group is written as it is reached; keys are
 * the IDs as strings, in ascending numeric order.
 */
export async function* slotsJsonChunks(answer: SlotsAnswer, fields: readonly string[] | undefined): AsyncGenerator<string> {
  let out = answer.grouped ? '{"booked_slots":{' : '{"booked_slots":['
  let group: number | undefined
  let first = true
  for await (const batch of answer.batches) {
    for (const record of batch) {
      if (answer.grouped && record.service_id !== group) {
        out += `${group === undefined ? '' : '],'}"${record.service_id}":[`
        group = record.service_id
        first = true
      }
      out += (first ? '' : ',') + JSON.stringify(pickFields(record, fields))
      first = false
    }
    if (out.length >= CHUNK_CHARS) {
      yield out
      out = ''
    }
  }
  if (answer.grouped) out += group === undefined ? '}' : ']}'
  else out += ']'
  yield `${out},"total":${answer.total}}`
}

type CsvColumn = { name: string; field: (typeof BOOKING_FIELDS)[number]; value: (record: BookingRecord) => unknown }

/** API.md's columns: the record's fields in order, `customer` split into three. */
const CSV_COLUMNS: CsvColumn[] = BOOKING_FIELDS.flatMap((field): CsvColumn[] =>
  field === 'customer'
    ? (['name', 'email', 'phone'] as const).map((part) => ({
        name: `customer_${part}`, field, value: (record: BookingRecord) => record.customer?.[part] ?? null,
      }))
    : [{ name: field, field, value: (record: BookingRecord) => record[field] }])

/** One CSV cell: null empty, booleans as words, RFC 4180 quoting, and the formula-injection guard. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  let text = typeof value === 'string' ? value : String(value)
  // A spreadsheet runs a cell starting with these as a formula; a leading ' makes it text.
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** The `_fields` of a CSV export: `customer` keeps all three columns, `customer.email` one. */
export function csvColumns(fields: readonly string[] | undefined): CsvColumn[] {
  if (!fields) return CSV_COLUMNS
  return CSV_COLUMNS.filter((column) =>
    fields.includes(column.field) || fields.includes(column.name.replace(/^customer_/, 'customer.')) || fields.includes(column.name))
}

/** The names `_fields` can give a CSV export. */
export const CSV_FIELD_NAMES = [...BOOKING_FIELDS, 'customer.name', 'customer.email', 'customer.phone']

/**
 * One line of cells. A line whose only cell is empty is written as `""`: an
 * empty line is no row to pandas and other readers that skip blank lines.
 */
export function csvLine(cells: string[]): string {
  return `${cells.length === 1 && cells[0] === '' ? '""' : cells.join(',')}\r\n`
}

export async function* slotsCsvChunks(answer: SlotsAnswer, fields: readonly string[] | undefined): AsyncGenerator<string> {
  const columns = csvColumns(fields)
  let out = csvLine(columns.map((column) => column.name))
  for await (const batch of answer.batches) {
    for (const record of batch) out += csvLine(columns.map((column) => csvCell(column.value(record))))
    if (out.length >= CHUNK_CHARS) {
      yield out
      out = ''
    }
  }
  yield out
}
