// GET disabled-time/ (API.md, "GET disabled-time/"): its parameter schema and a thin handler.
import type { RequestHandler } from 'express'
import { z } from 'zod'
import { dateParam, enumParam, nameListParam, parseParams, serviceParam } from '../http/params.ts'
import { negotiateFormat, addVary } from '../http/negotiate.ts'
import { sendDisabledTimeFeed } from './feeds.ts'
import { answerDisabledTime } from '../domain/disabled-time.ts'
import { pickFields } from '../domain/pick-fields.ts'
import { periodFields, type ExpandedPeriod } from '../domain/rules.ts'
import { addRowsSent } from '../http/response-locals.ts'
import { jsonListChunks } from '../http/text-chunks.ts'
import { sendAsMade } from '../http/stream-body.ts'
import type { Deps } from '../deps.ts'
import { sendNotModifiedIfHeld, setTagHeaders } from '../http/conditional.ts'
import { weakTag } from '../http/entity-tag.ts'

export const disabledTimeParams = z.object({
  service: serviceParam('Only the rules of this service (its ID or slug) and the site-wide ones.'),
  start: dateParam('start', 'The first day, inclusive (default: today in the site\'s time zone).'),
  end: dateParam('end', 'The last day, inclusive (default: start plus three calendar months).'),
  _fields: nameListParam('Keep only these fields of each period, comma-separated.'),
  format: enumParam('format', ['json', 'ics'] as const, 'json', 'json, or ics for a calendar app (Accept: text/calendar too).', true),
})

export type DisabledTimeParams = z.output<typeof disabledTimeParams>

export const disabledTimeHandler = (deps: Deps): RequestHandler => async (req, res) => {
  const params = parseParams(disabledTimeParams, req.query)
  if (negotiateFormat(req, params.format, ['json', 'ics']) === 'ics') return sendDisabledTimeFeed(deps, req, res, params)
  addVary(res, 'Accept')
  const answer = await answerDisabledTime(deps.db, params, {
    zone: deps.siteTimezone.known() ?? await deps.siteTimezone(), now: deps.now(), maxRangeDays: deps.config.maxRangeDays, problems: deps.ruleProblems,
  })
  // The periods are computed whole from the rules, services and zone read now: the tag names them (docs/conditional-requests.md).
  const tag = weakTag(['disabled-time', 'json', params._fields ?? null, answer])
  if (sendNotModifiedIfHeld(req, res, tag)) return
  setTagHeaders(res, tag)
  addRowsSent(res, answer.disabled_times.length)
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  const periods = jsonListChunks(answer, 'disabled_times', (period: ExpandedPeriod) => pickFields(periodFields(period), params._fields))
  await sendAsMade(res, periods, deps.config.sendTimeoutMs)
}
