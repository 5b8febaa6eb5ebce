// GET availability/ (API.md, "GET availability/"; docs/availability.md): its
// parameter schema and a thin handler. The answer is written as it is made.
import type { RequestHandler } from 'express'
import { z } from 'zod'
import { bomParam, dateParam, enumListParam, enumParam, integerParam, nameListParam, parseParams, serviceParam, startNotAfterEnd, whenValid } from '../http/params.ts'
import { addVary, negotiateFormat } from '../http/negotiate.ts'
import { admitRequest } from '../http/admission.ts'
import { answerAvailability, DEFAULT_BLOCKING, type FreeItem } from '../domain/availability.ts'
import { pickFields } from '../domain/pick-fields.ts'
import { csvCell } from '../http/booking-text.ts'
import { invalidParams } from '../errors.ts'
import { addRowsSent } from '../http/response-locals.ts'
import { BYTE_ORDER_MARK, jsonListChunks, lineChunks } from '../http/text-chunks.ts'
import { sendAsMade } from '../http/stream-body.ts'
import { BOOKING_STATUSES } from './slots.ts'
import type { Deps } from '../deps.ts'
import { sendNotModifiedIfHeld, setTagHeaders } from '../http/conditional.ts'
import { weakTag } from '../http/entity-tag.ts'

export const availabilityParams = z.object({
  service: serviceParam('Only this service (its ID or slug). Omitted: every published service.'),
  start: dateParam('start', 'The first day, inclusive (default: today in the site\'s time zone).'),
  end: dateParam('end', 'The last day, inclusive (default: start plus 6 days).'),
  blocking: enumListParam('blocking', BOOKING_STATUSES,
    `The statuses whose bookings take time, comma-separated (default: ${DEFAULT_BLOCKING.join(',')}).`),
  duration: integerParam('duration', 1, 1440, 'Minutes: list the bookable start times of a booking this long instead of the free windows.'),
  step: integerParam('step', 1, 1440, 'Minutes between start times, from each day\'s 00:00 (default: duration); needs duration.'),
  limit: integerParam('limit', 1, 10000, 'At most this many items per service, the earliest; limit=1 with duration is each service\'s next bookable time.'),
  _fields: nameListParam('Keep only these fields of each item, comma-separated.'),
  format: enumParam('format', ['json', 'csv'] as const, 'json', 'json, or csv for a spreadsheet (Accept: text/csv too).', true),
  bom: bomParam(),
}).superRefine(startNotAfterEnd, whenValid('start', 'end')).superRefine((params, ctx) => {
  if (params.step !== undefined && params.duration === undefined) {
    ctx.addIssue({ code: 'custom', path: ['step'], message: 'step needs duration: give duration (1 to 1440 minutes) to list start times every step minutes.' })
  }
}, whenValid('step', 'duration'))

export type AvailabilityParams = z.output<typeof availabilityParams>

const WINDOW_COLUMNS = ['service_id', 'service_slug', 'start', 'end', 'minutes'] as const
const START_COLUMNS = ['service_id', 'service_slug', 'start', 'end'] as const

export const availabilityHandler = (deps: Deps): RequestHandler => async (req, res) => {
  const params = parseParams(availabilityParams, req.query)
  const csv = negotiateFormat(req, params.format, ['json', 'csv']) === 'csv'
  const every = params.duration === undefined ? WINDOW_COLUMNS : START_COLUMNS
  const columns = params._fields ? every.filter((column) => params._fields!.includes(column)) : [...every]
  if (csv && columns.length === 0) throw invalidParams({ _fields: `_fields names no column of this CSV export; use one or more of ${every.join(', ')}.` })
  const answer = await answerAvailability(deps.db, deps.pool, params, {
    zone: deps.siteTimezone.known() ?? await deps.siteTimezone(), now: deps.now(), maxRangeDays: deps.config.maxRangeDays, maxItems: deps.config.availabilityMaxItems,
    problems: deps.ruleProblems, queryTimeoutMs: deps.config.queryTimeoutMs, admission: admitRequest(req, res, deps.reportNiceness),
  })
  // The items are made from what was read for this request, and the tag names it all (docs/conditional-requests.md).
  const tag = weakTag(['availability', csv ? 'csv' : 'json', columns, params._fields ?? null, csv && params.bom, ...answer.tagParts])
  if (sendNotModifiedIfHeld(req, res, tag)) return
  setTagHeaders(res, tag)
  addVary(res, 'Accept')
  const counted = countItems(answer.free, () => addRowsSent(res, 1))
  if (csv) {
    res.setHeader('Content-Type', 'text/csv; charset=utf-8')
    res.setHeader('Content-Disposition', 'attachment; filename="availability.csv"')
    if (req.method === 'HEAD') return void res.end()
    const lines = csvLines(columns, counted, params.bom)
    return sendAsMade(res, lineChunks(lines), deps.config.sendTimeoutMs)
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  if (req.method === 'HEAD') return void res.end()
  const { tagParts: _, ...shown } = answer
  const body = jsonListChunks({ ...shown, free: counted }, 'free', (item: FreeItem) => pickFields(item, params._fields))
  await sendAsMade(res, body, deps.config.sendTimeoutMs)
}

function* countItems(items: Iterable<FreeItem>, onItem: () => void): Generator<FreeItem> {
  for (const item of items) {
    onItem()
    yield item
  }
}

/** One header line, then a line per item; CRLF line ends, cells quoted as slots/' CSV quotes them. */
function* csvLines(columns: readonly string[], items: Iterable<FreeItem>, bom: boolean): Generator<string> {
  yield `${bom ? BYTE_ORDER_MARK : ''}${columns.join(',')}\r\n`
  for (const item of items) yield `${columns.map((column) => csvCell(item[column as keyof FreeItem])).join(',')}\r\n`
}
