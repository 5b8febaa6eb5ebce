// The CSV body of `GET summary/` (API.md, "GET summary/", CSV): one row per
// group, its keys then the measures, no totals row; cells as slots/ writes them.
import { csvCell } from './booking-text.ts'
import { BYTE_ORDER_MARK } from './text-chunks.ts'
import type { SummaryAnswer } from '../domain/summary.ts'

const KEY_COLUMNS = {
  period: ['period_start', 'period_end'],
  service: ['service_id', 'service_slug'],
  status: ['status'],
} as const
const MEASURE_COLUMNS = ['bookings', 'all_day_bookings', 'booked_minutes', 'blocked_minutes', 'open_minutes', 'occupancy'] as const

/** The columns of an answer: the keys of its dimensions, then the measures; `_fields` keeps only those it names. */
export function summaryColumns(groupBy: SummaryAnswer['group_by'], fields: readonly string[] | undefined): string[] {
  const columns = [
    ...(groupBy.some((name) => name !== 'service' && name !== 'status') ? KEY_COLUMNS.period : []),
    ...(groupBy.includes('service') ? KEY_COLUMNS.service : []),
    ...(groupBy.includes('status') ? KEY_COLUMNS.status : []),
    ...MEASURE_COLUMNS,
  ]
  return fields ? columns.filter((column) => fields.includes(column)) : columns
}

/** The CSV's lines, each with its CRLF: the header, then a row per group (sent by lineChunks, http/text-chunks.ts). */
export function* summaryCsvLines(answer: SummaryAnswer, fields: readonly string[] | undefined, bom = false): Generator<string> {
  const columns = summaryColumns(answer.group_by, fields)
  yield `${bom ? BYTE_ORDER_MARK : ''}${columns.join(',')}\r\n`
  for (const group of answer.groups) {
    yield `${columns.map((column) => csvCell(group[column as keyof typeof group])).join(',')}\r\n`
  }
}
