// AUTH_MODE=wordpress: the site itself says whether credentials may read
// (API.md, "Access"), by GET {WORDPRESS_URL}/wp-json/wp/v2/users/me?context=edit.
// Verdicts are cached for AUTH_CACHE_SECONDS, keyed by a hash of the
// credentials; calls under way are shared. Under WORKERS > 1 this runs in the
// primary alone, for every worker (server/shared-verdicts.ts), so WordPress is
// asked once per credential, not once per worker. Light on purpose: the
// primary loads it, and nothing of the app or the database driver.
import { createHash } from 'node:crypto'
import type { AxiosInstance } from 'axios'
import type { Logger } from 'pino'

/** WordPress's own 401 codes (wp_authenticate(), application passwords), passed on as WordPress gave them. */
export const WORDPRESS_AUTH_CODES = [
  'incorrect_password', 'invalid_username', 'invalid_email', 'empty_username', 'empty_password',
  'application_passwords_disabled', 'application_passwords_disabled_for_user', 'rest_not_logged_in',
] as const

export type WordPressAuthCode = (typeof WORDPRESS_AUTH_CODES)[number]

/** What WordPress said: allowed, or the refusal to send (plain data, so it crosses the cluster's IPC). */
export type Verdict =
  | { allowed: true }
  | { allowed: false; status: 401; code: WordPressAuthCode; message: string }
  | { allowed: false; status: 403; code: 'rest_forbidden'; message: string }

/** A verdict and where it came from; `ttlMs` is how much longer it may be reused (0: not at all). */
export interface VerdictAnswer {
  verdict: Verdict
  ttlMs: number
  /** 'wordpress' for the one request whose call reached WordPress, 'shared' for those that waited on it. */
  source: 'cache' | 'wordpress' | 'shared'
}

/** WordPress could not answer (down, slow, or strange): 503 rest_auth_unavailable, never an open door. */
export class WordPressUnavailableError extends Error {}

export type CheckCredentials = (authorization: string) => Promise<VerdictAnswer>

export interface WordPressCheckOptions {
  /** The HTTP client for WordPress; tests pass one to count calls. */
  http?: AxiosInstance
  now?: () => number
  /** Cached verdicts at most; the oldest go first. */
  cacheSize?: number
  timeoutMs?: number
}

export interface WordPressCheckSettings {
  wordpressUrl: string
  authCapability: string
  authCacheSeconds: number
}

/** The most of WordPress's answer to the credentials check that is read (users/me is a few KB). */
const MAX_WORDPRESS_ANSWER_BYTES = 1_000_000

const FORBIDDEN: Verdict = { allowed: false, status: 403, code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.' }

export function credentialKey(authorization: string): string {
  return createHash('sha256').update(authorization, 'utf8').digest('hex')
}

export function createWordPressCheck(settings: WordPressCheckSettings, log: Logger, options: WordPressCheckOptions = {}): CheckCredentials {
  const wordpressUrl = new URL(settings.wordpressUrl)
  // axios is loaded only here, where WordPress is asked: with what it imports, it held 5 MB of
  // heap. Loaded as the service starts, so no request waits for it.
  const http: Promise<AxiosInstance> = options.http ? Promise.resolve(options.http) : import('axios').then((module) => module.default.create())
  http.catch(() => { /* the first credentials check reports it, as a 503 */ })
  const now = options.now ?? Date.now
  const cacheSize = options.cacheSize ?? 10_000
  const ttlMs = settings.authCacheSeconds * 1000
  /** Verdicts by SHA-256 of the Authorization header, never the header itself. */
  const cache = new Map<string, { verdict: Verdict; expires: number }>()
  /** Calls under way, so concurrent requests with the same credentials share one. */
  const inFlight = new Map<string, Promise<Verdict>>()

  async function askWordPress(authorization: string): Promise<Verdict> {
    let response
    const timeoutMs = options.timeoutMs ?? 5_000
    try {
      response = await (await http).get(`${settings.wordpressUrl}/wp-json/wp/v2/users/me`, {
        params: { context: 'edit' },
        headers: { Authorization: authorization, Accept: 'application/json' },
        timeout: timeoutMs,
        // The whole call, body included: axios's timeout stops at the headers.
        signal: AbortSignal.timeout(timeoutMs),
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
      throw new WordPressUnavailableError('WordPress did not answer')
    }
    const body = response.data as { code?: unknown; message?: unknown; capabilities?: Record<string, unknown> } | undefined
    if (response.status === 200 && body && typeof body === 'object' && body.capabilities && typeof body.capabilities === 'object') {
      return body.capabilities[settings.authCapability] === true ? { allowed: true } : FORBIDDEN
    }
    if (response.status === 401) {
      // WordPress's own code passes through: incorrect_password, invalid_username, rest_not_logged_in…
      const code = WORDPRESS_AUTH_CODES.find((known) => known === body?.code) ?? 'rest_not_logged_in'
      const message = typeof body?.message === 'string' ? body.message.replace(/<[^>]*>/g, '').slice(0, 300) : 'You are not currently logged in.'
      return { allowed: false, status: 401, code, message }
    }
    if (response.status === 403) return FORBIDDEN
    log.warn({ status: response.status }, 'WordPress gave an unexpected answer to the credentials check')
    throw new WordPressUnavailableError('WordPress gave an unexpected answer')
  }

  return async (authorization) => {
    const key = credentialKey(authorization)
    const cached = cache.get(key)
    if (cached && cached.expires > now()) return { verdict: cached.verdict, ttlMs: cached.expires - now(), source: 'cache' }
    cache.delete(key)
    const shared = inFlight.get(key)
    if (shared) return { verdict: await shared, ttlMs: cache.get(key) ? ttlMs : 0, source: 'shared' }
    const call = askWordPress(authorization)
      .then((verdict) => {
        if (ttlMs > 0) {
          if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
          cache.set(key, { verdict, expires: now() + ttlMs })
        }
        return verdict
      })
      .finally(() => inFlight.delete(key))
    inFlight.set(key, call)
    return { verdict: await call, ttlMs, source: 'wordpress' }
  }
}

/** Whether a redirect (follow-redirects' options for the next request) stays on `site`'s scheme, host and port. */
export function sameOrigin(redirect: { protocol?: string; hostname?: string; host?: string; port?: string | number }, site: URL): boolean {
  const defaultPort = (protocol: string | undefined) => (protocol === 'https:' ? '443' : '80')
  const port = redirect.port === undefined || redirect.port === '' ? defaultPort(redirect.protocol) : String(redirect.port)
  return redirect.protocol === site.protocol &&
    (redirect.hostname ?? redirect.host) === site.hostname.replace(/^\[(.*)\]$/, '$1') &&
    port === (site.port || defaultPort(site.protocol))
}
