// WordPress's error shape (API.md, "Errors"): { code, message, data: { status, ... } }.
import type { ErrorRequestHandler, Response } from 'express'
import type { Logger } from 'pino'
import { markCut } from './http/cut-answer.ts'
import { requestLogger } from './http/request-log.ts'
import { WORDPRESS_AUTH_CODES } from './wordpress-check.ts'
// MariaDB's 1969 and MySQL's 3024 (the server's time limit), and 1317 (a statement killed).
import { TIMEOUT_ERRNOS } from '../db/server-dialect.ts'

// WordPress's own 401 codes, passed on as WordPress gave them (server/wordpress-check.ts).
export { WORDPRESS_AUTH_CODES }

/** Every code we send, spelt as WordPress spells them; a misspelt code fails to compile. */
export type RestErrorCode =
  | (typeof WORDPRESS_AUTH_CODES)[number]
  | 'rest_invalid_param'
  | 'rest_invalid_page_number'
  | 'rest_not_logged_in'
  | 'rest_forbidden'
  | 'rest_no_route'
  | 'rest_service_not_found'
  | 'rest_database_unavailable'
  | 'rest_auth_unavailable'
  | 'rest_query_timeout'
  | 'rest_internal_error'
  // changes/: a token the service can no longer serve; the client starts a new sync (API.md, "GET changes/").
  | 'rest_changes_token_expired'
  // Node's HTTP parser refused the request (server/http/server-setup.ts).
  | 'rest_bad_request'
  | 'rest_headers_too_large'
  | 'rest_uri_too_long'
  | 'rest_request_timeout'
  // /metrics under WORKERS > 1: the primary did not gather the workers' metrics in time (server/metrics.ts).
  | 'rest_metrics_unavailable'
  // A request still unanswered when SHUTDOWN_GRACE_MS ran out (server/shutdown.ts).
  | 'rest_service_stopping'

export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly code: RestErrorCode,
    message: string,
    readonly extra: { params?: Record<string, string>; retryAfterSeconds?: number; allow?: string } = {},
  ) {
    super(message)
  }
}

/** 400 rest_invalid_param with one sentence per bad parameter, as WP_REST_Request::has_valid_params does. */
export function invalidParams(params: Record<string, string>): RestError {
  return new RestError(400, 'rest_invalid_param', `Invalid parameter(s): ${Object.keys(params).join(', ')}`, { params })
}

export const noRoute = () =>
  new RestError(404, 'rest_no_route', 'No route was found matching the URL and request method.')

/** 405 for any method but GET, HEAD and OPTIONS (`allow`), on a route or a CONNECT's bare socket (http/server-setup.ts). */
export const methodNotAllowed = (allow: string) =>
  new RestError(405, 'rest_no_route', 'Method not allowed: this API only reads. Use GET.', { allow })

// MariaDB's error numbers and mysql2's error codes that mean "the database cannot be reached".
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_CON_COUNT_ERROR', 'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_ACCESS_DENIED_ERROR', 'ER_SERVER_SHUTDOWN', 'ER_BAD_DB_ERROR', 'POOL_CLOSED',
])
const CONNECTION_ERRNOS = new Set([1040, 1045, 1049, 1053, 1203, 2002, 2003, 2006, 2013])

const QUERY_TIMEOUT_MESSAGE = 'The database did not answer in time; the query was cancelled. Try again in a moment; if a large report keeps failing, narrow its date range or ask for fewer bookings.'

/** Driver errors mapped in one place: connection failures to 503, query time-outs to 504. */
export function toRestError(error: unknown): RestError | undefined {
  if (error instanceof RestError) return error
  if (!error || typeof error !== 'object') return undefined
  const { code, errno, fatal } = error as { code?: unknown; errno?: unknown; fatal?: unknown }
  if ((typeof errno === 'number' && TIMEOUT_ERRNOS.has(errno)) || code === 'BC_DB_TIMEOUT') {
    return new RestError(504, 'rest_query_timeout', QUERY_TIMEOUT_MESSAGE, { retryAfterSeconds: 5 })
  }
  // db/stream-gate.ts: the line for a stream permit is full, or the wait ran past DB_QUEUE_TIMEOUT_MS.
  if (code === 'BC_DB_QUEUE_REFUSED') {
    const refused = error as { message: string; retryAfterSeconds: number }
    return new RestError(503, 'rest_database_unavailable', refused.message, { retryAfterSeconds: refused.retryAfterSeconds })
  }
  // db/bounded-pool.ts: every connection busy past DB_ACQUIRE_TIMEOUT_MS. Busy, not down: retry soon.
  if (code === 'BC_DB_UNAVAILABLE') {
    return new RestError(503, 'rest_database_unavailable', 'All database connections are busy. Try again in a moment.', { retryAfterSeconds: 2 })
  }
  if ((typeof code === 'string' && CONNECTION_CODES.has(code)) || (typeof errno === 'number' && CONNECTION_ERRNOS.has(errno)) || fatal === true) {
    return new RestError(503, 'rest_database_unavailable', 'The database cannot be reached. Try again shortly.', { retryAfterSeconds: 5 })
  }
  return undefined
}

/**
 * rest_invalid_param's `details`, as WordPress 5.5 and later send it beside
 * `params`: per bad parameter, its sentence as an error of its own. WordPress
 * names its check there (rest_invalid_type, rest_out_of_bounds, ...); ours are all rest_invalid_param.
 */
function detailsOf(params: Record<string, string>): Record<string, { code: string; message: string; data: null }> {
  const details: Record<string, { code: string; message: string; data: null }> = {}
  for (const [name, message] of Object.entries(params)) details[name] = { code: 'rest_invalid_param', message, data: null }
  return details
}

export function sendRestError(res: Response, error: RestError): void {
  if (error.extra.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.extra.retryAfterSeconds))
  if (error.extra.allow) res.setHeader('Allow', error.extra.allow)
  const data: Record<string, unknown> = { status: error.status }
  if (error.extra.params) {
    data.params = error.extra.params
    data.details = detailsOf(error.extra.params)
  }
  res.status(error.status).json({ code: error.code, message: error.message, data })
}

/**
 * The one error middleware. Known errors keep their message; anything else is
 * logged and answered with a fixed sentence, so no SQL, stack trace or secret
 * ever reaches a client.
 */
export function errorMiddleware(log: Logger): ErrorRequestHandler {
  // Four parameters: that is how Express knows an error middleware.
  return (error, req, res, _next) => {
    // The stop answered this request when its grace ran out (shutdown.ts): whatever its handler met afterwards changes nothing.
    if (res.locals.answeredByStop === true) return
    const known = toRestError(error)
    const code = (error as { code?: unknown })?.code
    if (code === 'BC_CLIENT_GONE' || ((res.headersSent || req.socket?.destroyed) && code === 'ERR_STREAM_PREMATURE_CLOSE')) {
      // The client hung up (or the send timeout cut it, logged where it did):
      // a normal event, which the request's log line shows as completed: false.
      res.destroy()
      return
    }
    if (res.writableFinished) {
      // The whole answer was handed to the socket before this failed (the
      // transaction's COMMIT, say, on a database that hung right then): nothing
      // was cut, and the request's line already says completed: true.
      requestLogger(req, log).warn({ err: errorFields(error) }, 'failed after the answer was sent')
      return
    }
    if (res.headersSent && known) {
      // The database failed mid-stream: the status is gone, so the answer is cut
      // (no last chunk) and can never look complete to the client.
      const reason = known.code === 'rest_query_timeout' ? 'database_timeout' : 'database_lost'
      markCut(res, reason)
      requestLogger(req, log).warn({ err: errorFields(error), cutReason: reason }, 'answer cut: the database failed mid-stream')
      res.destroy()
      return
    }
    if (known && known.status < 500) {
      if (log.isLevelEnabled('debug')) requestLogger(req, log).debug({ code: known.code }, 'request refused')
    } else if (known) {
      // 503 and 504: a database that is busy, hung or down. Expected under load
      // or an outage, and answered as designed: worth a warning, not an error.
      requestLogger(req, log).warn({ err: errorFields(error), answered: known.code }, 'request failed')
    } else {
      // An error we did not foresee: its type and stack too, which an operator needs to find its cause (never sent to the client).
      // (pino's serializer writes err.type as the object's own, so the error's type goes beside it.)
      const { type, stack } = stackFields(error)
      requestLogger(req, log).error({ err: { ...errorFields(error), stack }, errorType: type, answered: 'rest_internal_error' }, 'request failed')
    }
    if (res.headersSent) {
      // Mid-stream: the status is gone; cutting the connection tells the client the body is incomplete.
      res.destroy()
      return
    }
    if (known) return sendRestError(res, known)
    // Express marks malformed requests (a bad percent-escape in the path, say) with a 4xx status.
    const status = (error as { status?: unknown })?.status
    if (typeof status === 'number' && status >= 400 && status < 500) return sendRestError(res, noRoute())
    sendRestError(res, new RestError(500, 'rest_internal_error', 'The server could not answer this request. The error has been logged.'))
  }
}

/** The fields of an expected error fit for the log: no stack, and no SQL beyond the driver's message. */
export function errorFields(error: unknown): { message?: string; code?: unknown; errno?: unknown } {
  const { message, code, errno } = (error ?? {}) as { message?: string; code?: unknown; errno?: unknown }
  return { message, code, errno }
}

/** An unforeseen error's type and stack (its frames: file names and lines, no values), for the log only. */
function stackFields(error: unknown): { type?: string; stack?: string } {
  if (!(error instanceof Error)) return { type: typeof error }
  return { type: error.name, stack: error.stack }
}

declare module 'express-serve-static-core' {
  interface Request {
    /** Made by requestLogger(req) on first use; read it through that. */
    log?: Logger
    /** Set by requestLog: this request's id and the logger its lines go to. */
    requestId?: string
    baseLog?: Logger
  }
}
