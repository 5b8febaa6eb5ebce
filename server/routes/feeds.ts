// The iCalendar answers of `slots/` and `disabled-time/` (API.md, "Calendar
// feeds: format=ics"), called by those routes once the format is negotiated.
import { addVary } from '../http/negotiate.ts'
import type { Request, Response } from 'express'
import { admitRequest } from '../http/admission.ts'
import type { Deps } from '../deps.ts'
import { answerSlots, bookingMapping, type SlotsQuery } from '../domain/slots.ts'
import { answerDisabledTime, type DisabledTimeQuery } from '../domain/disabled-time.ts'
import { resolveFeedRange } from '../domain/feed-range.ts'
import { resolveService } from '../domain/services.ts'
import { decodeSlug } from '../domain/slugs.ts'
import { todayInZone, type SiteZone } from '../domain/zone-offsets.ts'
import { invalidParams } from '../errors.ts'
import { disabledTimeIcsLines, IcsBody, publicHost, slotsIcsChunks, utcDateTime, type EventContext } from '../http/ics.ts'
import { sendAsMade } from '../http/stream-body.ts'
import { addRowsSent, countRowsSent } from '../http/response-locals.ts'
import { lineChunks } from '../http/text-chunks.ts'
import { sendStreamedAnswer, slotsTag } from '../http/slots-response.ts'
import { sendNotModifiedIfHeld, setTagHeaders } from '../http/conditional.ts'
import { weakTag } from '../http/entity-tag.ts'

const CONTENT_TYPE = 'text/calendar; charset=utf-8'

function feedHeaders(res: Response, filename: string): void {
  addVary(res, 'Accept')
  res.setHeader('Content-Type', CONTENT_TYPE)
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`)
}

function eventContext(req: Request, deps: Deps): EventContext {
  return { host: publicHost(req), stamp: utcDateTime(deps.now()) }
}

/** X-WR-TIMEZONE is only written for an IANA zone: calendar apps know no other name. */
function calendarZone(zone: SiteZone): string | undefined {
  return zone.kind === 'iana' ? zone.name : undefined
}

/** `slots/?format=ics`: never paged, a default range, streamed. */
export async function sendSlotsFeed(deps: Deps, req: Request, res: Response, params: SlotsQuery): Promise<void> {
  const paged = params.per_page !== undefined ? 'per_page' : params.page !== undefined ? 'page' : undefined
  if (paged) {
    throw invalidParams({ [paged]: `A calendar feed is never paged: leave out page and per_page with format=ics (or Accept: text/calendar).` })
  }
  const zone = deps.siteTimezone.known() ?? await deps.siteTimezone()
  const range = resolveFeedRange(params.start, params.end, todayInZone(zone, deps.now()), deps.config.maxRangeDays)
  // The feed's name carries the slug; the ID found here is what the answer filters by.
  const service = params.service === undefined ? undefined : await resolveService(deps.db, params.service)
  const feedParams: SlotsQuery = { ...params, ...range, service: service === undefined ? undefined : String(service.ID) }
  const calendar = { name: service ? `Bookings: ${decodeSlug(service.post_name)}` : 'Bookings', timezone: calendarZone(zone) }
  const context = eventContext(req, deps)
  const exposeCustomer = deps.exposeCustomer(req)
  // The feed's data besides its events: its name, zone and the host in every UID; DTSTAMP is the time of the answer, not data.
  const tagContext = ['slots', 'ics', exposeCustomer, zone, calendar, context.host]
  const mapping = bookingMapping(zone, exposeCustomer)
  const options = {
    mapping, grouped: false, queryTimeoutMs: deps.config.queryTimeoutMs, admission: admitRequest(req, res, deps.reportNiceness),
    newBody: () => new IcsBody(calendar, context, mapping), tagged: true, maxTaggedRows: deps.config.etagMaxRows, holds: deps.holding.enabled,
  }
  await answerSlots(deps.db, deps.pool, feedParams, options, async (answer, body) => {
    const setHeaders = async () => {
      res.setHeader('X-WP-Total', String(answer.total ?? await answer.count()))
      feedHeaders(res, 'bookings.ics')
    }
    // Streamed, as slots/'s own (sendStreamedAnswer; decisions 0028, 0034 and 0035): a conditional
    // request or HEAD is decided by the database's digest, sending no row; a 200 reads its rows
    // once, hashed as its events are made, held whole and sent with its tag.
    if (answer.rowsInto) {
      return await sendStreamedAnswer(req, res, answer, {
        body, context: tagContext, sendTimeoutMs: deps.config.sendTimeoutMs, holding: deps.holding, othersWaiting: deps.pool.gate.othersWaiting, setHeaders,
      })
    }
    // Read whole in one statement (a narrow answer), tagged by its records: DTSTAMP, the time of the answer, is no data.
    const tag = slotsTag(tagContext, answer, undefined)
    if (tag !== undefined && sendNotModifiedIfHeld(req, res, tag)) return
    if (tag !== undefined) setTagHeaders(res, tag)
    await setHeaders()
    if (req.method === 'HEAD') {
      res.end()
      return
    }
    await sendAsMade(res, slotsIcsChunks({ batches: countRowsSent(res, answer.batches) }, calendar, context), deps.config.sendTimeoutMs, deps.holding)
  })
}

/** `disabled-time/?format=ics`: the same periods as its JSON. */
export async function sendDisabledTimeFeed(deps: Deps, req: Request, res: Response, params: DisabledTimeQuery): Promise<void> {
  const zone = deps.siteTimezone.known() ?? await deps.siteTimezone()
  const answer = await answerDisabledTime(deps.db, params, {
    zone, now: deps.now(), maxRangeDays: deps.config.maxRangeDays, problems: deps.ruleProblems,
  })
  const calendar = { name: 'Disabled times', timezone: calendarZone(zone) }
  const context = eventContext(req, deps)
  // The periods are computed whole from the rules, services and zone read now: the tag names them (docs/conditional-requests.md).
  const tag = weakTag(['disabled-time', 'ics', calendar, context.host, answer])
  if (sendNotModifiedIfHeld(req, res, tag)) return
  setTagHeaders(res, tag)
  addRowsSent(res, answer.disabled_times.length)
  feedHeaders(res, 'disabled-times.ics')
  const feed = disabledTimeIcsLines(answer.disabled_times, calendar, context)
  await sendAsMade(res, lineChunks(feed), deps.config.sendTimeoutMs)
}
