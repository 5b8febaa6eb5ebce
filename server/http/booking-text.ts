// The text of one booking record: a JSON object, or a CSV line (API.md, "GET slots/").
import { BOOKING_FIELDS, type BookingRecord } from '../domain/booking-record.ts'

/**
 * JSON.stringify of a whole record, written field by field: the shape is
 * fixed, so nothing is looked up or walked, and most strings are copied as
 * they are. Its output is JSON.stringify's, byte for byte (tests/unit/booking-text.test.ts).
 */
export function bookingJson(record: BookingRecord): string {
  const customer = record.customer
  return `{"id":${record.id},"service_id":${record.service_id},"service_slug":${jsonText(record.service_slug)}` +
    `,"status":${jsonText(record.status)},"booking_date":${jsonText(record.booking_date)}` +
    `,"start":${isoJson(record.start)},"end":${isoJson(record.end)},"all_day":${record.all_day}` +
    `,"created_date":${isoJson(record.created_date)},"customer":${customer === null ? 'null'
      : `{"name":${jsonText(customer.name)},"email":${jsonText(customer.email)},"phone":${jsonText(customer.phone)}}`}` +
    `,"note":${jsonText(record.note)}}`
}

/**
 * JSON.stringify of a string or null. A string with none of what it escapes (a
 * quote, a backslash, a control character, a surrogate, which it escapes when
 * unpaired) is quoted as it is: a loop over its characters, measured at half
 * the cost of a regular expression's test on such short strings.
 */
export function jsonText(value: string | null): string {
  if (value === null) return 'null'
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(value)
  }
  return `"${value}"`
}

/** An ISO 8601 time of domain/wall-clock.ts (digits, `-`, `T`, `:`, `+`), which JSON needs only to quote. */
function isoJson(value: string | null): string {
  return value === null ? 'null' : `"${value}"`
}

export type CsvColumn = { name: string; field: (typeof BOOKING_FIELDS)[number]; value: (record: BookingRecord) => unknown }

/** API.md's columns: the record's fields in order, `customer` split into three. */
export const CSV_COLUMNS: CsvColumn[] = BOOKING_FIELDS.flatMap((field): CsvColumn[] =>
  field === 'customer'
    ? (['name', 'email', 'phone'] as const).map((part) => ({
      name: `customer_${part}`, field, value: (record: BookingRecord) => record.customer?.[part] ?? null,
    }))
    : [{ name: field, field, value: (record: BookingRecord) => record[field] }])

/** One CSV cell: null empty, booleans as words, RFC 4180 quoting, and the formula-injection guard. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  // Cells are strings, numbers and booleans (BookingRecord's fields).
  let text = typeof value === 'string' ? value : `${value as number | boolean}`
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

/** One CSV line of a record, the chosen columns only (csvLine: a lone empty cell is `""`). */
export function csvRow(columns: CsvColumn[], record: BookingRecord): string {
  return csvLine(columns.map((column) => csvCell(column.value(record))))
}

/**
 * csvRow with every column (the usual export: no _fields). Our ISO times
 * and booleans need no rule of csvCell; numbers go through numberCell and
 * stored text through csvText.
 */
export function bookingCsvRow(record: BookingRecord): string {
  const customer = record.customer
  return `${numberCell(record.id)},${numberCell(record.service_id)},${csvText(record.service_slug)},${csvText(record.status)}` +
    `,${csvText(record.booking_date)},${record.start ?? ''},${record.end ?? ''},${record.all_day}` +
    `,${record.created_date ?? ''},${customer === null ? ',,' : `${csvText(customer.name)},${csvText(customer.email)},${csvText(customer.phone)}`}` +
    `,${csvText(record.note)}\r\n`
}

/** csvCell of a number: only a negative one needs a rule (the formula guard). */
function numberCell(value: number): string {
  return value >= 0 ? String(value) : csvCell(value)
}

/**
 * csvCell of a text or null, with a look at its characters first: text that
 * none of csvCell's rules touch (no leading = + - @ tab CR, no quote, comma,
 * CR or LF) is the cell as it is. tests/unit/booking-text.test.ts holds it to csvCell.
 */
export function csvText(text: string | null): string {
  if (text === null || text.length === 0) return csvCell(text)
  const first = text.charCodeAt(0)
  if (first === 0x3d || first === 0x2b || first === 0x2d || first === 0x40 || first === 0x09 || first === 0x0d) return csvCell(text)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 || c === 0x2c || c === 0x0d || c === 0x0a) return csvCell(text)
  }
  return text
}
