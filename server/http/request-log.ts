// One JSON log line per request, with a request id (an incoming X-Request-Id is
// honoured), the route that answered, the status, the duration and the rows
// sent. The query string is left out: nothing a client sends is logged but
// the path, so no credential or customer data can reach the log this way.
import { randomUUID } from 'node:crypto'
import type { Request, RequestHandler } from 'express'
import type { Logger } from 'pino'
import { routeOf, statusSent } from './response-locals.ts'
import type { Admission } from '../../db/stream-gate.ts'

/** Requests seen by requestLog whose line is not yet written, and who waits for none to be left. */
let linesToWrite = 0
let onAllWritten: (() => void)[] = []

/**
 * Resolves once every request in flight has written its line, or after `ms`.
 * A stop waits for it before its own last line (server/shutdown.ts): under
 * load, a request it cut was once logged after the worker's 'stopped'.
 */
export function requestLinesWritten(ms: number): Promise<void> {
  if (linesToWrite === 0) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    onAllWritten.push(() => { clearTimeout(timer); resolve() })
  })
}

export function requestLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    linesToWrite += 1
    const incoming = req.get('x-request-id')
    const requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID()
    res.setHeader('X-Request-Id', requestId)
    req.requestId = requestId
    req.baseLog = log
    const started = process.hrtime.bigint()
    let logged = false
    const done = () => {
      if (logged) return
      logged = true
      try {
        writeLine()
      } finally {
        linesToWrite -= 1
        if (linesToWrite === 0 && onAllWritten.length > 0) {
          const waiting = onAllWritten
          onAllWritten = []
          for (const resolve of waiting) resolve()
        }
      }
    }
    const writeLine = () => {
      // Tested before the line's fields are gathered: at LOG_LEVEL=warn no request line is written.
      if (!log.isLevelEnabled('info')) return
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6
      requestLogger(req).info({
        method: req.method, path: req.originalUrl.split('?')[0], route: routeOf(res), status: statusSent(res),
        durationMs: Math.round(durationMs * 10) / 10, rowsSent: res.locals.rowsSent ?? 0, completed: res.writableFinished,
        // How long a streamed answer waited in line for a database permit (http/admission.ts); absent for others.
        queueWaitMs: (res.locals.admission as Admission | undefined)?.waitedMs,
        // Answered by the database's log (http/log-answers.ts): a 304 with no row read, or another request's answer shared.
        answeredByLog: res.locals.answeredByLog as string | undefined,
      }, 'request')
    }
    res.on('finish', done)
    res.on('close', done)
    next()
  }
}

/**
 * The request's logger: every line it writes carries the request id. Made on
 * first use, as most requests never log but their one line (and none at
 * LOG_LEVEL=warn); a pino child per request cost a few µs of each small answer
 * (docs/performance.md). `fallback` serves a request that
 * requestLog never saw.
 */
export function requestLogger(req: Request, fallback?: Logger): Logger {
  if (req.log) return req.log
  const base = req.baseLog ?? fallback
  if (!base) throw new Error('requestLogger: no logger for this request')
  return (req.log = req.requestId === undefined ? base : base.child({ requestId: req.requestId }))
}
