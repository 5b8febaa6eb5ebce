// GET slots/ (API.md, "GET slots/"): its parameter schema and a thin handler.
import type { RequestHandler } from 'express'
import { z } from 'zod'
import {
  bomParam, booleanParam, dateParam, enumListParam, enumParam, integerParam, nameListParam, parseParams, serviceParam, startNotAfterEnd, whenValid,
} from '../http/params.ts'
import { answerSlots, bookingMapping } from '../domain/slots.ts'
import { SlotsBody } from '../http/slots-body.ts'
import { sendSlotsAnswer } from '../http/slots-response.ts'
import { CSV_FIELD_NAMES, csvColumns } from '../http/booking-text.ts'
import { invalidParams } from '../errors.ts'
import { acceptedFormat } from '../http/negotiate.ts'
import { sendSlotsFeed } from './feeds.ts'
import { admitRequest } from '../http/admission.ts'
import type { Deps } from '../deps.ts'

export const BOOKING_STATUSES = ['pending', 'booked', 'reject', 'completed', 'expired'] as const

export const slotsParams = z.object({
  status: enumListParam('status', BOOKING_STATUSES,
    'Only bookings in these statuses, comma-separated. Omitted: every status, legacy values included.'),
  service: serviceParam('Only the bookings of this service: its ID or slug.'),
  start: dateParam('start', 'The first day, inclusive: DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.'),
  end: dateParam('end', 'The last day, inclusive: DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.'),
  filter_by: enumParam('filter_by', ['booking_date', 'created_date'] as const, 'booking_date',
    'Which date start and end apply to: the booked day or the day the booking was made.'),
  flat: booleanParam('flat', 'A plain list of bookings instead of groups by service ID.'),
  bom: bomParam(),
  page: integerParam('page', 1, Number.MAX_SAFE_INTEGER, 'The page to show; needs per_page.'),
  per_page: integerParam('per_page', 1, 1000, 'Bookings per page. Omitted: every matching booking at once.'),
  _fields: nameListParam('Keep only these fields of each booking, comma-separated.'),
  format: enumParam('format', ['json', 'csv', 'ics'] as const, 'json',
    'json, csv for a spreadsheet (Accept: text/csv too), or ics for a calendar app (Accept: text/calendar too).', true),
}).superRefine(startNotAfterEnd, whenValid('start', 'end')).superRefine((params, ctx) => {
  // A feed takes neither (routes/feeds.ts says so): asking it for per_page would send the client the wrong way.
  if (params.page !== undefined && params.per_page === undefined && params.format !== 'ics') {
    ctx.addIssue({ code: 'custom', path: ['page'], message: 'page needs per_page: give per_page (1 to 1000) to page through the bookings.' })
  }
}, whenValid('page', 'per_page'))

export type SlotsParams = z.output<typeof slotsParams>

export const slotsHandler = (deps: Deps): RequestHandler => async (req, res) => {
  const accepted = acceptedFormat(req, ['json', 'csv', 'ics'] as const)
  // A feed chosen by Accept is checked as a feed (format=ics): "page needs per_page" would send its client the wrong way.
  const params = parseParams(slotsParams, accepted === 'ics' ? { ...req.query, format: 'ics' } : req.query)
  const format = accepted ?? params.format
  if (format === 'ics') return sendSlotsFeed(deps, req, res, params)
  const csv = format === 'csv'
  // JSON keeps WordPress's empty records for unknown _fields; a CSV without a column is no file.
  if (csv && csvColumns(params._fields).length === 0) {
    throw invalidParams({ _fields: `_fields names no column of the CSV export; use one or more of ${CSV_FIELD_NAMES.join(', ')}.` })
  }
  const zone = deps.siteTimezone.known() ?? await deps.siteTimezone()
  // CSV is always the flat list (API.md, "GET slots/").
  const grouped = !params.flat && !csv
  const exposeCustomer = deps.exposeCustomer(req)
  // Everything besides the bookings that shapes the body (API.md, "Conditional requests").
  const context = ['slots', csv ? 'csv' : 'json', grouped, params._fields ?? null, exposeCustomer, zone, csv && params.bom]
  const mapping = bookingMapping(zone, exposeCustomer)
  const newBody = () => new SlotsBody(csv ? 'csv' : 'json', params._fields, grouped, mapping, csv && params.bom)
  const options = {
    mapping, grouped, queryTimeoutMs: deps.config.queryTimeoutMs, admission: admitRequest(req, res, deps.reportNiceness), newBody,
    tagged: true, maxTaggedRows: deps.config.etagMaxRows, holds: deps.holding.enabled,
  }
  const response = { csv, context, sendTimeoutMs: deps.config.sendTimeoutMs, holding: deps.holding, othersWaiting: deps.pool.gate.othersWaiting }
  await answerSlots(deps.db, deps.pool, params, options, (answer, body) => sendSlotsAnswer(req, res, answer, { ...response, body }))
}
