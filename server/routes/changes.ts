// GET changes/ (API.md, "GET changes/"): its parameter schema and a thin handler.
import type { RequestHandler } from 'express'
import { z } from 'zod'
import { dateParam, enumListParam, integerParam, parseParams, serviceParam, startNotAfterEnd, textParam, whenValid } from '../http/params.ts'
import { answerChanges } from '../domain/changes.ts'
import { bookingMapping } from '../domain/slots.ts'
import { resolveService } from '../domain/services.ts'
import { changeContextOf } from '../domain/change-token.ts'
import { serviceNamesDigest } from '../../db/row-digest.ts'
import { findAllServices } from '../../db/services.ts'
import { zoneLabel } from '../domain/zone-offsets.ts'
import { SERVICE_VERSION } from '../http/service-version.ts'
import { invalidParams } from '../errors.ts'
import { BOOKING_STATUSES } from './slots.ts'
import type { Deps } from '../deps.ts'

export const changesParams = z.object({
  since: textParam('since', 'The next of an earlier answer: the page after it, or, from a last page, what changed since. Omitted: a new sync, every matching booking.'),
  status: enumListParam('status', BOOKING_STATUSES, 'Only bookings in these statuses, comma-separated. A booking leaving them comes as a delete.'),
  service: serviceParam('Only the bookings of this service: its ID or slug.'),
  start: dateParam('start', 'The first booking_date, inclusive.'),
  end: dateParam('end', 'The last booking_date, inclusive.'),
  per_page: integerParam('per_page', 1, 1000, 'Operations (bookings) per page; default 100.'),
}).superRefine(startNotAfterEnd, whenValid('start', 'end'))

/** slots/'s parameters that have no meaning here: refused, not ignored, so a client copying a slots/ URL learns it (API.md). */
const NOT_HERE: Record<string, string> = {
  page: 'page does not apply to changes/: follow next while more is true.',
  flat: 'flat does not apply to changes/: its bookings are always a flat list of operations.',
  format: 'format does not apply to changes/: it answers JSON only.',
  filter_by: 'filter_by does not apply to changes/: start and end are on booking_date.',
}

export const changesHandler = (deps: Deps): RequestHandler => async (req, res) => {
  const refused = Object.keys(NOT_HERE).filter((name) => Object.hasOwn(req.query, name))
  if (refused.length > 0) throw invalidParams(Object.fromEntries(refused.map((name) => [name, NOT_HERE[name]!])))
  const params = parseParams(changesParams, req.query)
  const exposeCustomer = deps.exposeCustomer(req)
  // Asked side by side: a small delta is mostly these round trips. The services' slugs are
  // awaited only where the token is checked, so the log's place is asked beside them.
  const services = findAllServices(deps.db)
  services.catch(() => {})
  const [source, zone, service] = await Promise.all([
    deps.changes.source(),
    deps.siteTimezone.known() ?? deps.siteTimezone(),
    params.service === undefined ? undefined : resolveService(deps.db, params.service),
  ])
  const serviceId = service?.ID
  // What a record is made of besides its row: a change of any makes the client start again (410).
  const context = services.then((all) => changeContextOf([zoneLabel(zone), serviceNamesDigest(new Map(all.map((each) => [each.ID, each.post_name]))), exposeCustomer]))
  const answer = await answerChanges(deps.db, source, {
    since: params.since, serviceId, status: params.status, start: params.start, end: params.end, per_page: params.per_page ?? 100,
  }, { mapping: bookingMapping(zone, exposeCustomer), context, version: SERVICE_VERSION, logWaitMs: deps.config.changesLogWaitMs, server: deps.pool.server() })
  // A token in every answer: never kept by a cache between client and service.
  res.setHeader('Cache-Control', 'no-store')
  res.json(answer)
}
