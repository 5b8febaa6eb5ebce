// createApp builds the Express app without listening, so tests and main.ts build it the same way.
import express, { type Express, type Request, type RequestHandler } from 'express'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from 'pino'
import type { Db, DbPools } from '../db/connect.ts'
import { checkTablesRead, setupProblem } from '../db/options.ts'
import { effectiveSslMode } from '../db/connection-options.ts'
import type { Config } from './config.ts'
import { errorFields, errorMiddleware, methodNotAllowed, noRoute, toRestError, sendRestError, RestError } from './errors.ts'
import { requestLog, requestLogger } from './http/request-log.ts'
import { ALLOW, mountApi, NAMESPACE, PREFIXES } from './routes/index.ts'
import { createSiteIndex } from './site-index.ts'
import { createSiteTimezone, type SiteTimezone } from './site-timezone.ts'
import { RuleProblemLog } from './domain/disabled-time.ts'
import { createAccess, type Access } from './access.ts'
import { createMetrics } from './metrics.ts'
import { AnswerHolding } from './http/held-answer.ts'
import type { Deps } from './deps.ts'
import { buildOpenApiDocument, withSiteAddress } from './openapi.ts'
import { publicBaseUrl, setPublicUrl } from './http/public-url.ts'
import { addVary } from './http/negotiate.ts'
import { SECURITY_HEADERS } from './http/security-headers.ts'
import { asksForEnvelope, envelopeAnswer } from './http/envelope.ts'
import { decodedPairName } from './http/params.ts'
import { apiRootLink, ROOT_INDEX_PATHS } from './http/api-root-link.ts'
import { rootIndexHandler } from './routes/root-index.ts'
import type { ReportNiceness } from './niceness.ts'
import { closeQueuedWithConnection } from './http/cut-answer.ts'
import { digestFeed, type ChangesFeed } from './change-source.ts'

export interface AppOptions {
  db: Db
  pool: DbPools
  config: Config
  log: Logger
  siteTimezone?: SiteTimezone
  now?: () => number
  /** The access guard; by default built from config (tests pass one with a counting HTTP client). */
  access?: Access
  /** The process's niceness while reports run (server/niceness.ts); none in tests, or where it is taken for good at start. */
  reportNiceness?: ReportNiceness
  /** The process's held answers, HOLD_DIR probed at its start (startHolding); by default one from config, not probed (tests). */
  holding?: AnswerHolding
  /** changes/'s source, chosen at start (server/change-source.ts); by default digests per period (tests). */
  changes?: ChangesFeed
}

/**
 * WordPress's form for sites without pretty permalinks: `/?rest_route=/booking-calendar/v1/slots`
 * is served as `/booking-calendar/v1/slots`, with the other parameters kept.
 */
const restRouteForm: RequestHandler = (req, _res, next) => {
  collapseSlashes(req)
  // The path first: Express 5 parses the whole query string again on each read of req.query.
  if (!['/', '/index.php'].includes(req.path)) return next()
  const given = req.query.rest_route
  if (given === undefined) return next()
  // Given twice, the last one, as PHP's $_GET keeps it.
  const route = Array.isArray(given) ? given.at(-1) : given
  // `rest_route=/` is the REST API's root index (routes/root-index.ts), served at /wp-json/.
  const isRootIndex = route === '/'
  // A `?` in the route (`rest_route=/booking-calendar/v1/slots?per_page=1`, or `%3F`) matches no route of WordPress's either.
  if (!isRootIndex && (typeof route !== 'string' || !route.toLowerCase().startsWith(`/${NAMESPACE}`) || /[?#]/.test(route))) throw noRoute()
  const rest = (req.url.split('?')[1] ?? '').split('&')
    .filter((pair) => pair !== '' && decodedPairName(pair) !== 'rest_route')
  req.url = (isRootIndex ? '/wp-json/' : route) + (rest.length > 0 ? `?${rest.join('&')}` : '')
  next()
}

/**
 * A run of slashes in the path is one, as WordPress's routes read it:
 * `/wp-json//booking-calendar/v1/slots` (a client's base URL ending in `/`
 * joined to a route starting with one) is `/wp-json/booking-calendar/v1/slots`.
 */
function collapseSlashes(req: Request): void {
  const url = req.url
  const doubled = url.indexOf('//')
  if (doubled < 0) return
  const queryAt = url.indexOf('?')
  if (queryAt >= 0 && doubled > queryAt) return
  const path = queryAt < 0 ? url : url.slice(0, queryAt)
  req.url = path.replace(/\/{2,}/g, '/') + (queryAt < 0 ? '' : url.slice(queryAt))
}

/** Where a request target that names no path of this server is sent: it matches no route, so every such request is a 404 rest_no_route. */
export const UNUSABLE_TARGET = '/.unusable-request-target'

/**
 * A request target in absolute form (`GET http://host/path?query`, which
 * RFC 9112 says a server must take) read as its path and query, its host as
 * the Host (the RFC's rule): a user name and password in it reach neither the
 * log nor a Link header, which repeat the request's URL. Any other target not
 * in origin form (`*`, `ftp://…`, `http://[::1/…`) becomes UNUSABLE_TARGET.
 * Done before Express's router reads the URL (createApp): a target the router
 * cannot parse never reached a middleware, and got Express's own HTML 404,
 * with no request id, log line or security headers.
 */
export function readInOriginForm(req: IncomingMessage): void {
  const url = req.url ?? ''
  if (url.charCodeAt(0) === 0x2f) return // '/': the usual form
  let target: URL | undefined
  try {
    target = new URL(url)
  } catch {
    target = undefined
  }
  if (target !== undefined && (target.protocol === 'http:' || target.protocol === 'https:')) {
    req.url = target.pathname + target.search
    req.headers.host = target.host
  } else {
    req.url = UNUSABLE_TARGET
  }
}

/** Headers fit for a JSON API: nothing to sniff, frame or refer (http/security-headers.ts). */
const securityHeaders: RequestHandler = (_req, res, next) => {
  for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value)
  next()
}

/**
 * HTTP/1.1 requires a Host header. Node would answer its lack with an empty
 * 400; configureServer (http/server-setup.ts) lets such a request through so
 * that it is refused here, in WordPress's shape.
 */
const requireHost: RequestHandler = (req, _res, next) => {
  if (req.headers.host === undefined && req.httpVersion === '1.1') {
    throw new RestError(400, 'rest_bad_request', 'The request has no Host header, which HTTP/1.1 requires: send the host name of the site.')
  }
  next()
}

/**
 * CORS for the origins in CORS_ORIGINS only; none by default. With what
 * WordPress's rest_send_cors_headers sends, so a browser client written for the
 * site works unchanged: credentials allowed (wp.apiFetch and others send
 * `credentials: 'include'`; no cookie gives a caller anything here, only
 * Authorization does), and X-WP-Nonce among the headers a request may carry (it is ignored).
 * Beyond WordPress: the tag is exposed and If-None-Match allowed, so a client of
 * another origin can revalidate (API.md, "Conditional requests") as a same-origin one does.
 */
function cors(origins: string[]): RequestHandler {
  return (req, res, next) => {
    const origin = req.get('origin')
    if (origin && origins.includes(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin)
      res.setHeader('Access-Control-Allow-Credentials', 'true')
      res.setHeader('Access-Control-Expose-Headers', 'ETag, X-WP-Total, X-WP-TotalPages, Link, X-Request-Id')
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', ALLOW)
        res.setHeader('Access-Control-Allow-Headers', 'Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type, If-None-Match, X-Request-Id')
        res.setHeader('Access-Control-Max-Age', '600')
      }
    }
    addVary(res, 'Origin')
    next()
  }
}

export function createApp(options: AppOptions): Express {
  const { db, config, log } = options
  const now = options.now ?? Date.now
  const access = options.access ?? createAccess(config, log)
  const deps: Deps = {
    db,
    pool: options.pool,
    config,
    log,
    siteTimezone: options.siteTimezone ?? createSiteTimezone({ db, override: config.siteTimezone, log, now }),
    siteIndex: createSiteIndex({ db, log, now }),
    now,
    exposeCustomer: access.exposeCustomer,
    ruleProblems: new RuleProblemLog(log),
    holding: options.holding ?? new AnswerHolding(config.hold, { log }),
    reportNiceness: options.reportNiceness,
    changes: options.changes ?? digestFeed('this app was built without a choice of source (tests)'),
  }

  const app = express()
  // Every server of the app (createAppServer, app.listen, supertest) calls app.handle first.
  const routed = app as unknown as { handle(req: IncomingMessage, res: ServerResponse, done?: unknown): void }
  const handle = routed.handle.bind(app)
  routed.handle = (req, res, done) => {
    readInOriginForm(req)
    closeQueuedWithConnection(req, res)
    handle(req, res, done)
  }
  app.disable('x-powered-by')
  app.disable('etag')
  app.set('query parser', 'simple')
  app.set('trust proxy', config.trustProxy)
  setPublicUrl(app, config.publicUrl)
  const metrics = createMetrics({ pool: options.pool, access, token: config.metricsToken, holding: deps.holding, changes: deps.changes })
  app.use(requestLog(log))
  app.use(metrics.observe)
  app.use(securityHeaders)
  app.use(requireHost)
  // WordPress's `_envelope` (http/envelope.ts): before any answer, refusals included, is written.
  app.use((req, res, next) => {
    if (asksForEnvelope(req.url)) envelopeAnswer(res)
    next()
  })

  // Open in every access mode (METRICS_TOKEN guards /metrics); /healthz makes no database call.
  app.get('/healthz', (_req, res) => {
    res.locals.route = 'healthz'
    res.json({ status: 'ok' })
  })
  app.get('/metrics', metrics.serve)
  // The document describes the API, not its data: open like /healthz.
  const openApi = buildOpenApiDocument()
  app.get('/openapi.json', (req, res) => {
    res.locals.route = 'openapi'
    res.json(withSiteAddress(openApi, publicBaseUrl(req)))
  })
  app.get('/readyz', async (req, res) => {
    res.locals.route = 'readyz'
    try {
      await withTimeout(checkTablesRead(db), 1000)
      res.json({ status: 'ok', changes: changesStatusOf(deps.changes) })
    } catch (error) {
      const problem = setupProblem(error, effectiveSslMode(config.database))
      // The cause for the operator; the client (this route is open) learns no table or account name.
      requestLogger(req, log).warn({ err: errorFields(error), problem }, 'not ready')
      const known = toRestError(error)
      sendRestError(res, problem !== undefined
        ? new RestError(503, 'rest_database_unavailable', 'The database cannot serve this service as it is set up; the cause is in the service\'s log.', { retryAfterSeconds: 30 })
        : known?.status === 503 ? known
        : new RestError(503, 'rest_database_unavailable', 'The database did not answer within one second.', { retryAfterSeconds: 5 }))
    }
  })

  app.use(cors(config.corsOrigins))
  app.use(restRouteForm)
  app.use(apiRootLink)
  // Open in every access mode, as WordPress's root index is (routes/root-index.ts).
  const rootIndex = rootIndexHandler(deps)
  for (const path of ROOT_INDEX_PATHS) {
    app.route(path)
      .all((_req, res, next) => {
        res.locals.route = 'root-index'
        next()
      })
      .get(rootIndex)
      .options((_req, res) => { res.setHeader('Allow', ALLOW).status(204).end() })
      .all(() => {
        throw methodNotAllowed(ALLOW)
      })
  }
  // API.md lists openapi.json under each prefix too, guarded like the rest: behind
  // the README's proxy snippets only the prefixes reach this service.
  for (const prefix of PREFIXES) {
    app.route(`${prefix}/openapi.json`)
      .all((_req, res, next) => {
        res.locals.route = 'openapi'
        next()
      })
      .get(access.guard, (req, res) => { res.json(withSiteAddress(openApi, publicBaseUrl(req))) })
      .options((_req, res) => { res.setHeader('Allow', ALLOW).status(204).end() })
      .all(() => {
        throw methodNotAllowed(ALLOW)
      })
  }
  // Everything under the prefixes is guarded, the namespace index included.
  mountApi(app, deps, access.guard)
  app.use(() => { throw noRoute() })
  app.use(errorMiddleware(log))
  return app
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timed out')), ms) }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** What /readyz says of changes/: the source, why not the log, and the log reader's position (no account or host). */
function changesStatusOf(feed: ChangesFeed) {
  const status = feed.status()
  return {
    source: status.source,
    ...(status.reason === undefined ? {} : { reason: status.reason }),
    ...(status.reader === undefined ? {} : {
      reader: { connected: status.reader.connected, ...(status.reader.position ? { position: status.reader.position } : {}), ...(status.reader.problem ? { problem: status.reader.problem } : {}) },
    }),
  }
}
