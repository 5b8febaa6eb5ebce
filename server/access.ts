// Who may call (API.md, "Access"). AUTH_MODE none: anyone, customer data hidden
// unless EXPOSE_CUSTOMER_DATA. token: a bearer token from API_TOKENS. wordpress:
// the caller's Authorization header is checked by the site itself. Never an open
// door: when WordPress cannot answer, the answer is 503. In token mode only,
// a calendar feed or a CSV export may carry its token in the query string (queryToken).
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Request, RequestHandler } from 'express'
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import { RestError } from './errors.ts'
import { createWordPressCheck, sameOrigin, WordPressUnavailableError, type CheckCredentials, type WordPressCheckOptions } from './wordpress-check.ts'
import { PREFIXES } from './http/api-paths.ts'

export interface Access {
  /** Guards everything under the API prefixes; OPTIONS passes without credentials. */
  guard: RequestHandler
  /** Whether this request's bookings carry `customer`. */
  exposeCustomer: (req: Request) => boolean
  /** How often a verdict came from the cache, and how often WordPress was asked. */
  stats: { cacheHits: number; wordpressCalls: number }
}

const authenticated = new WeakSet<Request>()

const notLoggedIn = () => new RestError(401, 'rest_not_logged_in', 'You are not currently logged in.')
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
 * The routes that take `access_token`, at their whole address under either
 * prefix, as the router matches them (any case, trailing slash), by the format
 * they take it for. The guard runs at the app's level or under a prefix
 * (routes/index.ts, mountApi): req.baseUrl + req.path is the whole path either way.
 */
const QUERY_TOKEN_PATHS = {
  // Calendar apps subscribe to a URL (API.md, "Calendar feeds").
  ics: new RegExp(`^(?:${PREFIXES.join('|')})/(?:slots|disabled-time)/?$`, 'i'),
  // Spreadsheets that import a URL (Google Sheets' IMPORTDATA; API.md, "Spreadsheets and BI tools").
  csv: new RegExp(`^(?:${PREFIXES.join('|')})/(?:slots|summary|availability)/?$`, 'i'),
} as const

/**
 * AUTH_MODE token: calendar apps and spreadsheets that import a URL cannot send
 * headers, so a feed (`format=ics` of slots/ or disabled-time/) or a CSV export
 * (`format=csv` of slots/, summary/ or availability/), GET or HEAD, may carry its
 * token as `access_token` (RFC 6750, 2.3; API.md, "Access"). Only the explicit
 * `format` parameter opens it, never the Accept header: the URL itself says that
 * it is an export, so a token copied from it can never read JSON. On any other
 * request the parameter opens nothing: 401, saying where the token goes.
 * Undefined when there is no `access_token`.
 */
export function queryToken(req: Request): string | undefined {
  const given = queryValues(req.query, 'access_token')
  if (given.length === 0) return undefined
  const format = queryValues(req.query, 'format')
  const asked = format.length === 1 ? format[0]!.toLowerCase() : undefined
  const path = req.baseUrl + req.path
  const opens = (req.method === 'GET' || req.method === 'HEAD') && (asked === 'ics' || asked === 'csv') && QUERY_TOKEN_PATHS[asked].test(path)
  if (!opens) {
    throw new RestError(401, 'rest_not_logged_in',
      'access_token is accepted only on calendar feeds (format=ics of slots/ or disabled-time/) and CSV exports (format=csv of slots/, summary/ or availability/); send the token as Authorization: Bearer instead.')
  }
  if (given.length > 1) throw new RestError(401, 'rest_not_logged_in', 'access_token must be given only once.')
  return given[0]
}

/** Every string value of a query parameter, `name[]` forms included. */
function queryValues(query: Record<string, unknown>, name: string): string[] {
  return Object.entries(query)
    .filter(([key]) => key === name || key.startsWith(`${name}[`))
    .flatMap(([, value]): unknown[] => (Array.isArray(value) ? value as unknown[] : [value]))
    .filter((value): value is string => typeof value === 'string')
}

export interface AccessOptions extends WordPressCheckOptions {
  /** Where verdicts come from: the primary's check under WORKERS > 1 (server/shared-verdicts.ts); by default one in this process. */
  check?: CheckCredentials
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
      // queryToken first: access_token anywhere but on a feed or a CSV export is refused even
      // beside a good Authorization header, so a paged JSON answer cannot copy it into its Link header.
      const fromQuery = queryToken(req)
      const token = bearerToken(req.get('authorization')) ?? fromQuery
      if (token === undefined) throw notLoggedIn()
      if (!tokenIsOneOf(token, digests)) throw new RestError(401, 'rest_not_logged_in', 'The bearer token is not valid.')
      res.removeHeader('WWW-Authenticate')
      pass(req)
      next()
    }
    return { guard, exposeCustomer, stats }
  }

  const check = options.check ?? createWordPressCheck(
    { wordpressUrl: config.wordpressUrl!, authCapability: config.authCapability, authCacheSeconds: config.authCacheSeconds }, log, options)

  const guard: RequestHandler = async (req, _res, next) => {
    if (req.method === 'OPTIONS') return next()
    const authorization = req.get('authorization')
    if (!authorization) throw notLoggedIn()
    let answer
    try {
      answer = await check(authorization)
    } catch (error) {
      if (error instanceof WordPressUnavailableError) throw authUnavailable()
      throw error
    }
    if (answer.source === 'cache') stats.cacheHits++
    else if (answer.source === 'wordpress') stats.wordpressCalls++
    const { verdict } = answer
    if (!verdict.allowed) throw new RestError(verdict.status, verdict.code, verdict.message)
    pass(req)
    next()
  }
  return { guard, exposeCustomer, stats }
}

export { sameOrigin }
