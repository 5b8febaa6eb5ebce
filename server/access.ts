// Who may call (API.md, "Access"). AUTH_MODE none: anyone, customer data hidden
// unless EXPOSE_CUSTOMER_DATA. token: a bearer token from API_TOKENS. wordpress:
// the caller's Authorization header is checked by the site itself. Never an open
// door: when WordPress cannot answer, the answer is 503. In token mode only,
// a calendar feed may carry its token in the query string (feedToken).
import { createHash, timingSafeEqual } from 'node:crypto'
import type { AxiosInstance } from 'axios'
import type { Request, RequestHandler } from 'express'
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import { RestError, WORDPRESS_AUTH_CODES } from './errors.ts'
import { PREFIXES } from './routes/index.ts'

export interface Access {
  /** Guards everything under the API prefixes; OPTIONS passes without credentials. */
  guard: RequestHandler
  /** Whether this request's bookings carry `customer`. */
  exposeCustomer(req: Request): boolean
  /** How often a verdict came from the cache, and how often WordPress was asked. */
  stats: { cacheHits: number; wordpressCalls: number }
}

const authenticated = new WeakSet<Request>()

const notLoggedIn = () => new RestError(401, 'rest_not_logged_in', 'You are not currently logged in.')
const forbidden = () => new RestError(403, 'rest_forbidden', 'Sorry, you are not allowed to do that.')
const authUnavailable = () =>
  new RestError(503, 'rest_auth_unavailable', 'The site cannot check credentials right now. Try again shortly.', { retryAfterSeconds: 5 })

/** The token of an `Authorization: Bearer <token>` header; undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1]
}

/**
 * Whether a token is one of these (given as sha256 digests). Digests of equal
 * length, each compared in full whatever the others gave, so the time taken
 * says nothing about how close a guess was.
 */
export function tokenIsOneOf(token: string, digests: readonly Buffer[]): boolean {
  const given = sha256(token)
  let valid = false
  for (const digest of digests) valid = timingSafeEqual(digest, given) || valid
  return valid
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/**
 * The feeds that take `access_token`, at their whole address under either
 * prefix, as the router matches them (any case, trailing slash). The guard runs
 * at the app's level or under a prefix (routes/index.ts, mountApi): req.baseUrl
 * + req.path is the whole path either way.
 */
const FEED_PATH = new RegExp(`^(?:${PREFIXES.join('|')})/(?:slots|disabled-time)/?$`, 'i')

/**
 * AUTH_MODE token: calendar apps cannot send headers, so a feed request
 * (`format=ics` in the query, GET or HEAD of slots/ or disabled-time/) may carry
 * its token as `access_token` (RFC 6750, 2.3; API.md, "Calendar feeds"). On any
 * other request the parameter opens nothing: 401, saying where the token goes.
 * Undefined when there is no `access_token`.
 */
export function feedToken(req: Request): string | undefined {
  const given = queryValues(req.query, 'access_token')
  if (given.length === 0) return undefined
  const format = queryValues(req.query, 'format')
  const isFeed = (req.method === 'GET' || req.method === 'HEAD') && FEED_PATH.test(req.baseUrl + req.path) &&
    format.length === 1 && format[0]!.toLowerCase() === 'ics'
  if (!isFeed) {
    throw new RestError(401, 'rest_not_logged_in',
      'access_token is accepted only on calendar feeds (format=ics of slots/ or disabled-time/); send the token as Authorization: Bearer instead.')
  }
  if (given.length > 1) throw new RestError(401, 'rest_not_logged_in', 'access_token must be given only once.')
  return given[0]
}

/** Every string value of a query parameter, `name[]` forms included. */
function queryValues(query: Record<string, unknown>, name: string): string[] {
  return Object.entries(query)
    .filter(([key]) => key === name || key.startsWith(`${name}[`))
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]))
    .filter((value): value is string => typeof value === 'string')
}

/** A verdict WordPress gave: allowed, or the refusal to send (401 or 403). */
type Verdict = { allowed: true } | { allowed: false; error: RestError }

export interface AccessOptions {
  /** The HTTP client for WordPress; tests pass one to count calls. */
  http?: AxiosInstance
  now?: () => number
  /** Cached verdicts at most; the oldest go first. */
  cacheSize?: number
  timeoutMs?: number
}

export function createAccess(config: Config, log: Logger, options: AccessOptions = {}): Access {
  const stats = { cacheHits: 0, wordpressCalls: 0 }
  const pass = (req: Request) => { authenticated.add(req) }
  const exposeCustomer = (req: Request) => (config.authMode === 'none' ? config.exposeCustomerData : authenticated.has(req))

  if (config.authMode === 'none') {
    return { guard: (_req, _res, next) => next(), exposeCustomer, stats }
  }

  if (config.authMode === 'token') {
    const digests = config.apiTokens.map(sha256)
    const guard: RequestHandler = (req, res, next) => {
      if (req.method === 'OPTIONS') return next()
      res.setHeader('WWW-Authenticate', 'Bearer realm="booking-calendar-api"')
      // feedToken first: access_token anywhere but on a feed is refused even beside a
      // good Authorization header, so a paged answer cannot copy it into its Link header.
      const fromQuery = feedToken(req)
      const token = bearerToken(req.get('authorization')) ?? fromQuery
      if (token === undefined) throw notLoggedIn()
      if (!tokenIsOneOf(token, digests)) throw new RestError(401, 'rest_not_logged_in', 'The bearer token is not valid.')
      res.removeHeader('WWW-Authenticate')
      pass(req)
      next()
    }
    return { guard, exposeCustomer, stats }
  }

  const wordpressUrl = new URL(config.wordpressUrl!)
  // axios is loaded only here, where WordPress is asked: with what it imports, it held 5 MB of
  // heap, and an idle worker's RSS was 4 to 5 MB larger, in every mode (scripts/bench/README.md,
  // sixteenth pass). Loaded as the service starts, so no request waits for it.
  const http: Promise<AxiosInstance> = options.http ? Promise.resolve(options.http) : import('axios').then((module) => module.default.create())
  http.catch(() => { /* the first credentials check reports it, as a 503 */ })
  const now = options.now ?? Date.now
  const cacheSize = options.cacheSize ?? 10_000
  const ttlMs = config.authCacheSeconds * 1000
  /** Verdicts by SHA-256 of the Authorization header, never the header itself. */
  const cache = new Map<string, { verdict: Verdict; expires: number }>()
  /** Calls under way, so concurrent requests with the same credentials share one. */
  const inFlight = new Map<string, Promise<Verdict>>()

  async function askWordPress(authorization: string): Promise<Verdict> {
    stats.wordpressCalls++
    let response
    const timeoutMs = options.timeoutMs ?? 5_000
    try {
      response = await (await http).get(`${config.wordpressUrl}/wp-json/wp/v2/users/me`, {
        params: { context: 'edit' },
        headers: { Authorization: authorization, Accept: 'application/json' },
        timeout: timeoutMs,
        // The whole call, body included: axios's timeout (follow-redirects') stops at the
        // headers, and a body that trickles in held the request for as long as it lasted.
        signal: AbortSignal.timeout(timeoutMs),
        // users/me is a few KB; a larger answer is no WordPress's, and is not held in memory.
        maxContentLength: MAX_WORDPRESS_ANSWER_BYTES,
        validateStatus: () => true,
        maxRedirects: 3,
        // Credentials never follow a redirect to another origin: another scheme, host or port is another site.
        beforeRedirect: (redirect: { protocol?: string; hostname?: string; host?: string; port?: string | number }) => {
          if (!sameOrigin(redirect, wordpressUrl)) throw new Error('redirect to another origin refused')
        },
        responseType: 'json',
      })
    } catch (error) {
      log.warn({ err: { message: (error as Error).message, code: (error as { code?: string }).code } }, 'WordPress did not answer the credentials check')
      throw authUnavailable()
    }
    const body = response.data as { code?: unknown; message?: unknown; capabilities?: Record<string, unknown> } | undefined
    if (response.status === 200 && body && typeof body === 'object' && body.capabilities && typeof body.capabilities === 'object') {
      return body.capabilities[config.authCapability] === true ? { allowed: true } : { allowed: false, error: forbidden() }
    }
    if (response.status === 401) {
      // WordPress's own code passes through: incorrect_password, invalid_username, rest_not_logged_in…
      const code = WORDPRESS_AUTH_CODES.find((known) => known === body?.code) ?? 'rest_not_logged_in'
      const message = typeof body?.message === 'string' ? body.message.replace(/<[^>]*>/g, '').slice(0, 300) : 'You are not currently logged in.'
      return { allowed: false, error: new RestError(401, code, message) }
    }
    if (response.status === 403) return { allowed: false, error: forbidden() }
    log.warn({ status: response.status }, 'WordPress gave an unexpected answer to the credentials check')
    throw authUnavailable()
  }

  async function verdictFor(authorization: string): Promise<Verdict> {
    const key = sha256(authorization).toString('hex')
    const cached = cache.get(key)
    if (cached && cached.expires > now()) {
      stats.cacheHits++
      return cached.verdict
    }
    cache.delete(key)
    let call = inFlight.get(key)
    if (!call) {
      call = askWordPress(authorization)
        .then((verdict) => {
          if (ttlMs > 0) {
            if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
            cache.set(key, { verdict, expires: now() + ttlMs })
          }
          return verdict
        })
        .finally(() => inFlight.delete(key))
      inFlight.set(key, call)
    }
    return call
  }

  const guard: RequestHandler = async (req, _res, next) => {
    if (req.method === 'OPTIONS') return next()
    const authorization = req.get('authorization')
    if (!authorization) throw notLoggedIn()
    const verdict = await verdictFor(authorization)
    if (!verdict.allowed) throw verdict.error
    pass(req)
    next()
  }
  return { guard, exposeCustomer, stats }
}

/** The most of WordPress's answer to the credentials check that is read (users/me is a few KB). */
const MAX_WORDPRESS_ANSWER_BYTES = 1_000_000

/** Whether a redirect (follow-redirects' options for the next request) stays on `site`'s scheme, host and port. */
export function sameOrigin(redirect: { protocol?: string; hostname?: string; host?: string; port?: string | number }, site: URL): boolean {
  const defaultPort = (protocol: string | undefined) => (protocol === 'https:' ? '443' : '80')
  const port = redirect.port === undefined || redirect.port === '' ? defaultPort(redirect.protocol) : String(redirect.port)
  return redirect.protocol === site.protocol &&
    (redirect.hostname ?? redirect.host) === site.hostname.replace(/^\[(.*)\]$/, '$1') &&
    port === (site.port || defaultPort(site.protocol))
}
