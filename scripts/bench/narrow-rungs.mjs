// The rungs between node:http running (a)'s statement and the service answering
// (a): each rung is one process that does what the one below does and one
// thing more, with the service's own built code (dist/). narrow-ladder.ts
// times them side by side. RUNG is one of:
//   dropped  node:http; the route's statement through answerSlots (pool, lease,
//            row packets), each row packet dropped; then BENCH_BODY_FILE sent whole
//   written  the same, its rows written by SlotsBody into the body, sent by sendWhole
//   parsed   the same, the query string parsed by the route's zod schema on each request
//            (the rungs below parse it once, on the first request)
//   express  `parsed` as an Express 5 route (createAppServer), without any middleware
// Configured as the service is (DATABASE_URL, PORT, ...). Customer data is hidden.
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import { parse as parseQuery } from 'node:querystring'
import express from 'express'

const dist = new URL('../../dist/', import.meta.url).href
const { loadConfig, dbSettings } = await import(`${dist}server/config.js`)
const { createLogger } = await import(`${dist}server/log.js`)
const { createDb } = await import(`${dist}db/connect.js`)
const { createSiteTimezone } = await import(`${dist}server/site-timezone.js`)
const { slotsParams } = await import(`${dist}server/routes/slots.js`)
const { parseParams } = await import(`${dist}server/http/params.js`)
const { answerSlots, bookingMapping } = await import(`${dist}server/domain/slots.js`)
const { SlotsBody } = await import(`${dist}server/http/slots-body.js`)
const { sendWhole } = await import(`${dist}server/http/stream-body.js`)
const { createAppServer } = await import(`${dist}server/http/app-server.js`)

const rung = process.env.RUNG
if (!['dropped', 'written', 'parsed', 'express'].includes(rung)) throw new Error('RUNG: dropped, written, parsed or express')
const config = loadConfig()
const log = createLogger('warn')
const { db, pool } = createDb(dbSettings(config))
const siteTimezone = createSiteTimezone({ db, override: config.siteTimezone, log })
const fixedBody = rung === 'dropped' ? readFileSync(process.env.BENCH_BODY_FILE) : undefined
let parsedOnce

/** Takes every row packet, as the body's sink does, and drops it. */
const DROP_ROWS = {
  accepts: () => true, row() {}, serviceNames() {}, parsedRow() {}, heldBytes: 0, dropRows() {},
}

/** The query string as Express's simple parser (node:querystring) gives it. */
function queryOf(url) {
  const at = url.indexOf('?')
  return parseQuery(at < 0 ? '' : url.slice(at + 1))
}

async function answer(query, res) {
  const params = rung === 'parsed' || rung === 'express' ? parseParams(slotsParams, query) : (parsedOnce ??= parseParams(slotsParams, query))
  const zone = siteTimezone.known() ?? await siteTimezone()
  const mapping = bookingMapping(zone, false)
  // No body for `dropped`: one it never sent would keep its chunk from the
  // pool, and the pool would then allocate a chunk per request.
  const body = fixedBody === undefined ? new SlotsBody('json', params._fields, !params.flat, mapping) : undefined
  const sink = body === undefined ? DROP_ROWS : body.sink
  await answerSlots(db, pool, params, { mapping, grouped: !params.flat, queryTimeoutMs: config.queryTimeoutMs, sink }, async (slots) => {
    res.setHeader('X-WP-Total', String(slots.total))
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    if (fixedBody !== undefined) {
      sendWhole(res, [fixedBody])
      return
    }
    const whole = body?.whole(slots)
    if (whole === undefined) throw new Error('not a narrow answer')
    sendWhole(res, whole)
  })
}

const failed = (res) => (error) => {
  log.error({ err: error }, 'rung failed')
  res.statusCode = 500
  res.end()
}

if (rung === 'express') {
  const app = express()
  app.set('query parser', 'simple')
  app.get('/wp-json/booking-calendar/v1/slots', (req, res) => answer(req.query, res).catch(failed(res)))
  createAppServer(app, { headersTimeoutMs: config.headersTimeoutMs }).listen(config.port, '127.0.0.1')
} else {
  createServer((req, res) => { answer(queryOf(req.url), res).catch(failed(res)) }).listen(config.port, '127.0.0.1')
}
