// GET summary/ (API.md, "GET summary/"): its parameter schema and a thin handler.
import type { RequestHandler } from 'express'
import { z } from 'zod'
import { bomParam, dateParam, enumListParam, enumParam, nameListParam, parseParams, serviceParam, startNotAfterEnd, type ParamMeta } from '../http/params.ts'
import { negotiateFormat, addVary } from '../http/negotiate.ts'
import { summaryColumns, summaryCsvLines } from '../http/summary-body.ts'
import { jsonListChunks, lineChunks } from '../http/text-chunks.ts'
import { sendAsMade } from '../http/stream-body.ts'
import { answerSummary } from '../domain/summary.ts'
import { GROUP_NAMES, groupByNames, parseGroupBy } from '../domain/summary-params.ts'
import { DEFAULT_BLOCKING } from '../domain/availability.ts'
import type { SummaryGroup } from '../domain/summary-sums.ts'
import { pickFields } from '../domain/pick-fields.ts'
import { addRowsSent } from '../http/response-locals.ts'
import { BOOKING_STATUSES } from './slots.ts'
import type { Deps } from '../deps.ts'
import { invalidParams } from '../errors.ts'
import { sendNotModifiedIfHeld, setTagHeaders } from '../http/conditional.ts'
import { weakTag } from '../http/entity-tag.ts'
import { stepBackWhileReporting } from '../http/admission.ts'
import { answerSizeOfDays } from '../domain/slots.ts'
import { daysInclusive } from '../domain/day-arithmetic.ts'

/** group_by: comma-separated (or repeated, or group_by[]), any order and letter case; see parseGroupBy. */
const groupByParam = z.array(z.string()).optional().transform((list, ctx) => {
  const parsed = parseGroupBy(list?.flatMap((value) => value.split(',')))
  if ('problem' in parsed) {
    ctx.addIssue({ code: 'custom', message: parsed.problem })
    return z.NEVER
  }
  return parsed
}).meta({
  type: 'array', items: { type: 'string', enum: GROUP_NAMES }, default: ['month'],
  description: 'Group by any of service and status, and at most one period of day, week, month, year; comma-separated, any order. Default: month.',
} satisfies ParamMeta)

export const summaryParams = z.object({
  status: enumListParam('status', BOOKING_STATUSES,
    'Only bookings in these statuses, comma-separated. Omitted: every status, legacy values included.'),
  service: serviceParam('Only the bookings of this service: its ID or slug.'),
  start: dateParam('start', 'The first day, inclusive (default: the first day of the current month, or of end\'s month).'),
  end: dateParam('end', 'The last day, inclusive (default: the last day of start\'s month).'),
  filter_by: enumParam('filter_by', ['booking_date', 'created_date'] as const, 'booking_date',
    'Which date start, end and the periods apply to: the booked day or the day the booking was made.'),
  group_by: groupByParam,
  blocking: enumListParam('blocking', BOOKING_STATUSES,
    `The statuses whose bookings take time, counted in blocked_minutes and occupancy, comma-separated (default: ${DEFAULT_BLOCKING.join(',')}, as availability/'s).`),
  _fields: nameListParam('Keep only these fields of each group and of the totals, comma-separated.'),
  format: enumParam('format', ['json', 'csv'] as const, 'json', 'json, or csv for a spreadsheet (Accept: text/csv too).', true),
  bom: bomParam(),
}).superRefine(startNotAfterEnd)

export type SummaryParams = z.output<typeof summaryParams>

export const summaryHandler = (deps: Deps): RequestHandler => async (req, res) => {
  const params = parseParams(summaryParams, req.query)
  const csv = negotiateFormat(req, params.format, ['json', 'csv']) === 'csv'
  // As slots/: JSON keeps WordPress's empty records for unknown _fields; a CSV without a column is no file.
  if (csv && summaryColumns(groupByNames(params.group_by), params._fields).length === 0) {
    const columns = summaryColumns(groupByNames(params.group_by), undefined)
    throw invalidParams({ _fields: `_fields names no column of this CSV export; use one or more of ${columns.join(', ')}.` })
  }
  // Over more than a quarter it is a report, though it takes no stream permit: its process steps back (SERVICE_NICENESS).
  if (deps.reportNiceness && params.start !== undefined && params.end !== undefined) {
    stepBackWhileReporting(res, answerSizeOfDays(daysInclusive(params.start, params.end)), deps.reportNiceness)
  }
  const answer = await answerSummary(deps.db, deps.pool.short, params, {
    zone: deps.siteTimezone.known() ?? await deps.siteTimezone(), now: deps.now(), maxRangeDays: deps.config.maxRangeDays, problems: deps.ruleProblems,
  })
  // The groups are counted whole, from the rows, rules, services and options read now: the tag names them (docs/conditional-requests.md).
  const tag = weakTag(['summary', csv ? 'csv' : 'json', params._fields ?? null, csv && params.bom, answer])
  if (sendNotModifiedIfHeld(req, res, tag)) return
  setTagHeaders(res, tag)
  addRowsSent(res, answer.groups.length)
  addVary(res, 'Accept')
  if (csv) {
    res.setHeader('Content-Type', 'text/csv; charset=utf-8')
    res.setHeader('Content-Disposition', 'attachment; filename="summary.csv"')
    await sendAsMade(res, lineChunks(summaryCsvLines(answer, params._fields, params.bom)), deps.config.sendTimeoutMs)
  } else {
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    const body = { ...answer, totals: pickFields(answer.totals, params._fields) }
    await sendAsMade(res, jsonListChunks(body, 'groups', (group: SummaryGroup) => pickFields(group, params._fields)), deps.config.sendTimeoutMs)
  }
}
