// The body of `GET slots/` as JSON (grouped or flat) and as CSV (API.md, "CSV").
import { BOOKING_FIELDS, pickFields, type BookingRecord } from '../domain/records.ts'
import type { SlotsAnswer } from '../domain/slots.ts'
import { Utf8Chunks } from './stream-body.ts'

/**
 * `{"booked_slots": {...} | [...], "total": N}`. Grouped records arrive
 * ordered by service ID, so each group is written as it is reached; keys are
 * the IDs as strings, in ascending numeric order.
 */
export async function* slotsJsonChunks(answer: SlotsAnswer, fields: readonly string[] | undefined): AsyncGenerator<Buffer> {
  const toJson = fields ? (record: BookingRecord) => JSON.stringify(pickFields(record, fields)) : bookingJson
  const body = new Utf8Chunks()
  body.write(answer.grouped ? '{"booked_slots":{' : '{"booked_slots":[')
  let group: number | undefined
  let first = true
  for await (const batch of answer.batches) {
    for (const record of batch) {
      if (answer.grouped && record.service_id !== group) {
        body.write(`${group === undefined ? '' : '],'}"${record.service_id}":[`)
        group = record.service_id
        first = true
      }
      body.write(first ? toJson(record) : `,${toJson(record)}`)
      first = false
    }
    yield* body.full()
  }
  body.write(`${answer.grouped ? (group === undefined ? '}' : ']}') : ']'},"total":${answer.total}}`)
  yield* body.end()
}

/**
 * JSON.stringify of a whole record, written field by field: the shape is
 * fixed, so nothing is looked up or walked, and most strings are copied as
 * they are. Its output is JSON.stringify's, byte for byte (tests/unit/csv.test.ts).
 */
export function bookingJson(record: BookingRecord): string {
  const customer = record.customer
  return `{"id":${record.id},"service_id":${record.service_id},"service_slug":${jsonText(record.service_slug)}` +
    `,"status":${jsonText(record.status)},"booking_date":${jsonText(record.booking_date)}` +
    `,"start":${jsonText(record.start)},"end":${jsonText(record.end)},"all_day":${record.all_day}` +
    `,"created_date":${jsonText(record.created_date)},"customer":${customer === null ? 'null'
      : `{"name":${jsonText(customer.name)},"email":${jsonText(customer.email)},"phone":${jsonText(customer.phone)}}`}` +
    `,"note":${jsonText(record.note)}}`
}

/** What JSON.stringify escapes: a quote, a backslash, control characters, and surrogates when unpaired (all of them sent to JSON.stringify). */
const JSON_ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/

/** JSON.stringify of a string or null; a string with nothing to escape is quoted as it is. */
export function jsonText(value: string | null): string {
  if (value === null) return 'null'
  return JSON_ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`
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
function csvColumns(fields: readonly string[] | undefined): CsvColumn[] {
  if (!fields) return CSV_COLUMNS
  return CSV_COLUMNS.filter((column) =>
    fields.includes(column.field) || fields.includes(column.name.replace(/^customer_/, 'customer.')) || fields.includes(column.name))
}

/** One CSV line of a record, the chosen columns only. */
function csvRow(columns: CsvColumn[], record: BookingRecord): string {
  let line = ''
  for (let i = 0; i < columns.length; i++) line += (i === 0 ? '' : ',') + csvCell(columns[i]!.value(record))
  return `${line}\r\n`
}

/** csvRow with every column, written cell by cell (the usual export: no _fields). */
export function bookingCsvRow(record: BookingRecord): string {
  const customer = record.customer
  return `${csvCell(record.id)},${csvCell(record.service_id)},${csvCell(record.service_slug)},${csvCell(record.status)}` +
    `,${csvCell(record.booking_date)},${csvCell(record.start)},${csvCell(record.end)},${record.all_day}` +
    `,${csvCell(record.created_date)},${customer === null ? ',,' : `${csvCell(customer.name)},${csvCell(customer.email)},${csvCell(customer.phone)}`}` +
    `,${csvCell(record.note)}\r\n`
}

export async function* slotsCsvChunks(answer: SlotsAnswer, fields: readonly string[] | undefined): AsyncGenerator<Buffer> {
  const columns = csvColumns(fields)
  const toCsv = columns === CSV_COLUMNS ? bookingCsvRow : (record: BookingRecord) => csvRow(columns, record)
  const body = new Utf8Chunks()
  body.write(`${columns.map((column) => column.name).join(',')}\r\n`)
  for await (const batch of answer.batches) {
    for (const record of batch) body.write(toCsv(record))
    yield* body.full()
  }
  yield* body.end()
}
