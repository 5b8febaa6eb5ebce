// One JSON log line per request, with a request id (an incoming X-Request-Id is
// honoured), the route that answered, the status, the duration and the rows
// sent. The query string is left out: nothing a client sends is logged but
// the path, so no credential or customer data can reach the log this way.
import { randomUUID } from 'node:crypto'
import type { RequestHandler } from 'express'
import type { Logger } from 'pino'
import { routeOf } from './response-locals.ts'

export function requestLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id')
    const requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID()
    res.setHeader('X-Request-Id', requestId)
    req.log = log.child({ requestId })
    const started = process.hrtime.bigint()
    let logged = false
    const done = () => {
      if (logged) return
      logged = true
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6
      req.log!.info({
        method: req.method, path: req.originalUrl.split('?')[0], route: routeOf(res), status: res.statusCode,
        durationMs: Math.round(durationMs * 10) / 10, rowsSent: res.locals.rowsSent ?? 0, completed: res.writableFinished,
      }, 'request')
    }
    res.on('finish', done)
    res.on('close', done)
    next()
  }
}
