// One schema over process.env, parsed once at start-up (API.md, "Configuration").
// A wrong value stops the process with one line naming the variable and what it accepts.
import express from 'express'
import { availableParallelism, tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { z } from 'zod'
import { parseZoneSetting } from './domain/zone-offsets.ts'
import type { DatabaseSettings, DbSettings } from '../db/connect.ts'
import { DEFAULT_QUEUE_LENGTH, DEFAULT_QUEUE_TIMEOUT_MS, DEFAULT_STREAM_CONNECTIONS } from '../db/stream-gate.ts'
import { parseBooleanWord, parseWholeNumber } from './parse-text.ts'

/**
 * V8 heap flags for each cluster worker: a sizing choice (README, "Sizing").
 * A worker's live heap under eight concurrent exports is about 28 MB; the rest
 * of its peak RSS was heap V8 let grow before collecting (up to four times the
 * live size) and a young generation of up to 48 MB. Old space grown by 1.5×
 * instead, and semi-spaces of 8 MB, took eight concurrent exports' peak from
 * 186 to 144 MB (docs/performance.md). Once rows were written from
 * their bytes, exports made little garbage, and the bench's peak moved to ten
 * clients of disabled-time/ at 1,500 requests a second: semi-spaces of 4 MB
 * took that from 149-153 to 138-143 MB, with as many requests served
 * (docs/performance.md).
 */
export const DEFAULT_WORKER_V8_FLAGS: readonly string[] = ['--heap-growing-percent=50', '--max-semi-space-size=4']

export class ConfigError extends Error {}

const integer = (name: string, min: number, max: number, fallback: number) =>
  z.string().optional().transform((value, ctx) => {
    if (value === undefined || value.trim() === '') return fallback
    const n = parseWholeNumber(value.trim(), min, max)
    if (n === undefined) {
      ctx.addIssue({ code: 'custom', message: `${name} must be a whole number from ${min} to ${max}.` })
      return z.NEVER
    }
    return n
  })

const booleanFlag = (name: string) =>
  z.string().optional().transform((value, ctx) => {
    const flag = parseBooleanWord((value ?? '').trim(), { true: ['true', '1', 'yes', 'on'], false: ['', 'false', '0', 'no', 'off'] })
    if (flag === undefined) {
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false.` })
      return z.NEVER
    }
    return flag
  })

const list = z.string().optional().transform((value) =>
  (value ?? '').split(',').map((item) => item.trim()).filter((item) => item !== ''))

/** `text` as an http or https URL; undefined when it is none. */
function httpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text.trim())
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined
  } catch {
    return undefined
  }
}

const hasCredentials = (url: URL) => url.username !== '' || url.password !== ''

/** A site's address (PUBLIC_URL, WORDPRESS_URL): http(s), no user, password, query or fragment; without its trailing slashes. */
function siteAddress(text: string): string | undefined {
  const url = httpUrl(text)
  return url && !hasCredentials(url) && !url.search && !url.hash ? url.toString().replace(/\/+$/, '') : undefined
}

/** `https://Reports.example.com/` as a browser's Origin header has it (`https://reports.example.com`); undefined for anything but an origin. */
function originOf(text: string): string | undefined {
  const url = httpUrl(text)
  const bare = url && !hasCredentials(url) && url.pathname === '/' && !url.search && !url.hash
  return bare && /^https?:\/\/[^/?#]+\/?$/i.test(text) ? url.origin : undefined
}

/** A fast path's switch: on unless set to a false word. */
function switchFlag(name: string) {
  return z.string().optional().transform((value, ctx) => {
    const text = (value ?? '').trim()
    if (text === '') return true
    const flag = parseBooleanWord(text, { true: ['true', '1', 'yes', 'on'], false: ['false', '0', 'no', 'off'] })
    if (flag === undefined) {
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false.` })
      return z.NEVER
    }
    return flag
  })
}

const envSchema = z.object({
  PORT: integer('PORT', 1, 65535, 8080),
  DATABASE_URL: z.string().optional(),
  WORDPRESS_DB_HOST: z.string().optional(),
  WORDPRESS_DB_USER: z.string().optional(),
  WORDPRESS_DB_PASSWORD: z.string().optional(),
  WORDPRESS_DB_NAME: z.string().optional(),
  WORDPRESS_TABLE_PREFIX: z.string().optional(),
  TABLE_PREFIX: z.string().optional(),
  SITE_TIMEZONE: z.string().optional().transform((value, ctx) => {
    if (value === undefined || value.trim() === '') return undefined
    const zone = parseZoneSetting(value)
    if (!zone) {
      ctx.addIssue({ code: 'custom', message: 'SITE_TIMEZONE must be an IANA time zone such as Europe/Berlin, UTC, or an offset such as +05:45.' })
      return z.NEVER
    }
    return zone
  }),
  AUTH_MODE: z.string().optional().transform((value, ctx) => {
    const mode = (value ?? '').trim().toLowerCase() || 'none'
    if (mode === 'none' || mode === 'wordpress' || mode === 'token') return mode
    ctx.addIssue({ code: 'custom', message: 'AUTH_MODE must be none, wordpress or token.' })
    return z.NEVER
  }),
  WORDPRESS_URL: z.string().optional().transform((value, ctx) => {
    if (value === undefined || value.trim() === '') return undefined
    const url = httpUrl(value)
    if (url && hasCredentials(url)) {
      // axios would send these instead of each caller's own Authorization: every caller would be checked as this user.
      ctx.addIssue({ code: 'custom', message: 'WORDPRESS_URL must not hold a user name or password: each caller\'s own credentials are checked. Give the site\'s address, such as https://example.com.' })
      return z.NEVER
    }
    const address = siteAddress(value)
    if (address !== undefined) return address
    ctx.addIssue({ code: 'custom', message: 'WORDPRESS_URL must be the site\'s address, such as https://example.com.' })
    return z.NEVER
  }),
  AUTH_CAPABILITY: z.string().optional().transform((value) => value?.trim() || 'manage_options'),
  AUTH_CACHE_SECONDS: integer('AUTH_CACHE_SECONDS', 0, 86_400, 60),
  API_TOKENS: list.transform((tokens, ctx) => {
    if (tokens.some((token) => /\s/.test(token))) {
      ctx.addIssue({ code: 'custom', message: 'API_TOKENS must be tokens without spaces, comma-separated.' })
      return z.NEVER
    }
    return tokens
  }),
  EXPOSE_CUSTOMER_DATA: booleanFlag('EXPOSE_CUSTOMER_DATA'),
  DB_POOL_SIZE: integer('DB_POOL_SIZE', 1, 200, 10),
  // The fast paths (docs/architecture.md, "The fast paths"); each off only to rule it out when an answer looks wrong.
  ROWS_AS_BYTES: switchFlag('ROWS_AS_BYTES'),
  SQL_SHAPE_CACHE: switchFlag('SQL_SHAPE_CACHE'),
  HTTP_PROTOTYPE_REUSE: switchFlag('HTTP_PROTOTYPE_REUSE'),
  DB_STREAM_CONNECTIONS: integer('DB_STREAM_CONNECTIONS', 1, 200, DEFAULT_STREAM_CONNECTIONS),
  DB_QUEUE_TIMEOUT_MS: integer('DB_QUEUE_TIMEOUT_MS', 0, 3_600_000, DEFAULT_QUEUE_TIMEOUT_MS),
  DB_QUEUE_LENGTH: integer('DB_QUEUE_LENGTH', 0, 100_000, DEFAULT_QUEUE_LENGTH),
  DB_ACQUIRE_TIMEOUT_MS: integer('DB_ACQUIRE_TIMEOUT_MS', 1, 60_000, 1_000),
  QUERY_TIMEOUT_MS: integer('QUERY_TIMEOUT_MS', 1, 3_600_000, 10_000),
  SEND_TIMEOUT_MS: integer('SEND_TIMEOUT_MS', 1_000, 3_600_000, 30_000),
  HEADERS_TIMEOUT_MS: integer('HEADERS_TIMEOUT_MS', 1_000, 300_000, 10_000),
  MAX_RANGE_DAYS: integer('MAX_RANGE_DAYS', 1, 36_600, 731),
  ETAG_MAX_ROWS: integer('ETAG_MAX_ROWS', 0, 100_000_000, 250_000),
  // Held answers (server/http/held-answer.ts): per process; both 0 switch holding off.
  HOLD_MEMORY_BYTES: integer('HOLD_MEMORY_BYTES', 0, 64 * 1024 ** 3, 32 * 1024 ** 2),
  HOLD_DISK_BYTES: integer('HOLD_DISK_BYTES', 0, 1024 ** 4, 1024 ** 3),
  HOLD_DIR: z.string().optional().transform((value, ctx) => {
    const dir = value?.trim() || join(tmpdir(), 'booking-calendar-api')
    if (isAbsolute(dir)) return dir
    ctx.addIssue({ code: 'custom', message: 'HOLD_DIR must be an absolute path, such as /var/tmp/booking-calendar-api.' })
    return z.NEVER
  }),
  // Compared with a browser's Origin header as it sends it: scheme, host and port, no slash after.
  CORS_ORIGINS: list.transform((origins, ctx) => {
    const normal = origins.map(originOf)
    if (normal.some((origin) => origin === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'CORS_ORIGINS must list origins such as https://reports.example.com (scheme, host and port, no path), comma-separated; * is not taken: name each origin.' })
      return z.NEVER
    }
    return normal as string[]
  }),
  METRICS_TOKEN: z.string().optional().transform((value, ctx) => {
    const token = value?.trim() || undefined
    if (token !== undefined && /\s/.test(token)) {
      // A bearer token is one word: one with a space could never match (the value is not echoed).
      ctx.addIssue({ code: 'custom', message: 'METRICS_TOKEN must be one token without spaces.' })
      return z.NEVER
    }
    return token
  }),
  SHUTDOWN_GRACE_MS: integer('SHUTDOWN_GRACE_MS', 0, 3_600_000, 8_000),
  PUBLIC_URL: z.string().optional().transform((value, ctx) => {
    if (value === undefined || value.trim() === '') return undefined
    const address = siteAddress(value)
    if (address !== undefined) return address
    ctx.addIssue({ code: 'custom', message: 'PUBLIC_URL must be the site\'s public address, such as https://shop.example.com.' })
    return z.NEVER
  }),
  // Express's `trust proxy` syntax; the default trusts loopback and private networks,
  // where a reverse proxy in front of this service usually is.
  TRUST_PROXY: z.string().optional().transform((value, ctx): boolean | number | string[] => {
    const text = (value ?? '').trim()
    if (text === '') return ['loopback', 'uniquelocal']
    if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true'
    if (/^\d+$/.test(text)) return Number(text)
    const list = text.split(',').map((item) => item.trim()).filter((item) => item !== '')
    try {
      // Express compiles the list itself (proxy-addr) and throws on a bad address.
      express().set('trust proxy', list)
      return list
    } catch {
      ctx.addIssue({ code: 'custom', message: 'TRUST_PROXY must be true, false, a number of hops, or addresses and subnets (loopback, uniquelocal, 10.0.0.0/8), comma-separated.' })
      return z.NEVER
    }
  }),
  WORKERS: integer('WORKERS', 1, 256, availableParallelism()),
  WORKER_V8_FLAGS: z.string().optional().transform((value, ctx) => {
    if (value === undefined) return DEFAULT_WORKER_V8_FLAGS
    const flags = value.split(/\s+/).filter(Boolean)
    if (flags.every((flag) => /^--[a-z][a-z0-9_-]*(=[A-Za-z0-9._-]+)?$/.test(flag))) return flags
    ctx.addIssue({ code: 'custom', message: 'WORKER_V8_FLAGS must be V8 flags separated by spaces, such as --max-semi-space-size=8, or empty for V8\'s defaults.' })
    return z.NEVER
  }),
  LOG_LEVEL: z.string().optional().transform((value, ctx) => {
    const level = (value ?? '').trim().toLowerCase() || 'info'
    const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
    const found = levels.find((l) => l === level)
    if (found) return found
    ctx.addIssue({ code: 'custom', message: `LOG_LEVEL must be one of ${levels.join(', ')}.` })
    return z.NEVER
  }),
})

/** The database handle's settings (db/connect.ts) from the configuration. */
export function dbSettings(config: Config): DbSettings {
  return {
    ...config.database, tablePrefix: config.tablePrefix, poolSize: config.dbPoolSize, streamConnections: config.dbStreamConnections,
    queryTimeoutMs: config.queryTimeoutMs, acquireTimeoutMs: config.dbAcquireTimeoutMs,
    queueTimeoutMs: config.dbQueueTimeoutMs, queueLength: config.dbQueueLength, rowsAsBytes: config.rowsAsBytes, sqlShapeCache: config.sqlShapeCache,
  }
}

/** mysql://user:password@host:3306/name, or the official WordPress image's WORDPRESS_DB_* names. */
function databaseSettings(env: z.infer<typeof envSchema>): DatabaseSettings {
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL.trim() !== '') {
    let url: URL
    let parts: { user: string; password: string; database: string }
    try {
      url = new URL(env.DATABASE_URL.trim())
      parts = { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password), database: decodeURIComponent(url.pathname.replace(/^\//, '')) }
    } catch {
      // Not a URL, or a bad percent-escape (`%zz`). The value is never echoed: it may hold a password.
      throw new ConfigError('DATABASE_URL must look like mysql://user:password@host:3306/name, with a port from 1 to 65535 if any, and any %, @, : or / in the user, password or name percent-encoded (% as %25).')
    }
    if (!['mysql:', 'mariadb:'].includes(url.protocol) || !url.hostname || !parts.user || !parts.database || parts.database.includes('/') || url.port === '0') {
      throw new ConfigError('DATABASE_URL must look like mysql://user:password@host:3306/name.')
    }
    if (url.search || url.hash) {
      // Nothing after `?` is read (TLS settings, say): taking the URL would silently connect without them.
      throw new ConfigError('DATABASE_URL must look like mysql://user:password@host:3306/name, with nothing after the name: options such as ?ssl= are not read.')
    }
    return {
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port ? Number(url.port) : 3306,
      ...parts,
    }
  }
  if (env.WORDPRESS_DB_HOST || env.WORDPRESS_DB_USER) {
    // The official image accepts "host", "host:port" (and a socket path, which we do not serve: no `/`).
    const hostPort = (env.WORDPRESS_DB_HOST ?? 'mysql').trim()
    const m = /^(\[[^\]]+\]|[^:/]+)(?::(\d+))?$/.exec(hostPort)
    if (!m || (m[2] !== undefined && (Number(m[2]) < 1 || Number(m[2]) > 65535))) {
      throw new ConfigError('WORDPRESS_DB_HOST must be a host name, optionally with a port: db or db:3306.')
    }
    if (!env.WORDPRESS_DB_USER?.trim()) throw new ConfigError('WORDPRESS_DB_USER must name the database account (a read-only one).')
    return {
      host: m[1]!.replace(/^\[(.*)\]$/, '$1'),
      port: m[2] ? Number(m[2]) : 3306,
      user: env.WORDPRESS_DB_USER,
      password: env.WORDPRESS_DB_PASSWORD ?? '',
      database: env.WORDPRESS_DB_NAME?.trim() || 'wordpress',
    }
  }
  throw new ConfigError('DATABASE_URL must be set (mysql://user:password@host:3306/name), or WORDPRESS_DB_HOST and WORDPRESS_DB_USER, with WORDPRESS_DB_PASSWORD (WORDPRESS_DB_NAME defaults to wordpress).')
}

/**
 * The service's configuration: the environment as envSchema reads it, named
 * for the code. Its type is what this makes of the schema's output, so the two
 * cannot drift apart.
 */
export type Config = ReturnType<typeof configFromEnv>

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(source)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const name = String(issue.path[0] ?? '')
    throw new ConfigError(issue.code === 'custom' ? issue.message : `${name} is not valid.`)
  }
  return configFromEnv(parsed.data)
}

function configFromEnv(env: z.output<typeof envSchema>) {
  const database = databaseSettings(env)
  // TABLE_PREFIX wins; WORDPRESS_TABLE_PREFIX is what an operator of the official image already has.
  const prefixVariable = env.TABLE_PREFIX !== undefined && env.TABLE_PREFIX !== '' ? 'TABLE_PREFIX' : 'WORDPRESS_TABLE_PREFIX'
  const tablePrefix = (prefixVariable === 'TABLE_PREFIX' ? env.TABLE_PREFIX : env.WORDPRESS_TABLE_PREFIX) || 'wp_'
  if (!/^[A-Za-z0-9_]{1,40}$/.test(tablePrefix)) {
    throw new ConfigError(`${prefixVariable} must be letters, digits and underscores, such as wp_ or shop_.`)
  }
  if (env.AUTH_MODE === 'wordpress' && !env.WORDPRESS_URL) {
    throw new ConfigError('WORDPRESS_URL must be set when AUTH_MODE is wordpress: the site\'s address, such as https://example.com.')
  }
  if (env.AUTH_MODE === 'token' && env.API_TOKENS.length === 0) {
    throw new ConfigError('API_TOKENS must hold at least one token (comma-separated) when AUTH_MODE is token.')
  }
  return {
    port: env.PORT,
    database,
    tablePrefix,
    siteTimezone: env.SITE_TIMEZONE,
    authMode: env.AUTH_MODE,
    wordpressUrl: env.WORDPRESS_URL,
    authCapability: env.AUTH_CAPABILITY,
    authCacheSeconds: env.AUTH_CACHE_SECONDS,
    apiTokens: env.API_TOKENS,
    exposeCustomerData: env.EXPOSE_CUSTOMER_DATA,
    dbPoolSize: env.DB_POOL_SIZE,
    /** Answers written from the rows' bytes (the fast path); false: every row the record's way. */
    rowsAsBytes: env.ROWS_AS_BYTES,
    /** Each query's SQL compiled once per shape (db/compiled-shapes.ts); false: built afresh every time. */
    sqlShapeCache: env.SQL_SHAPE_CACHE,
    /** Requests made with Express's prototypes from the start (server/http/app-server.ts); false: node:http's own. */
    httpPrototypeReuse: env.HTTP_PROTOTYPE_REUSE,
    /** Streamed answers running at once on the database, for the whole service whatever WORKERS is. */
    dbStreamConnections: env.DB_STREAM_CONNECTIONS,
    /** How long a streamed answer waits in line for one of them before 503. */
    dbQueueTimeoutMs: env.DB_QUEUE_TIMEOUT_MS,
    /** How many may wait in line; one more is refused at once with 503. */
    dbQueueLength: env.DB_QUEUE_LENGTH,
    /** How long a request waits for a free database connection before 503. */
    dbAcquireTimeoutMs: env.DB_ACQUIRE_TIMEOUT_MS,
    queryTimeoutMs: env.QUERY_TIMEOUT_MS,
    /** A streamed answer whose client reads nothing for this long is cut. */
    sendTimeoutMs: env.SEND_TIMEOUT_MS,
    /** A request whose line and headers have not all arrived this long after its first byte (a silent new connection: after it opened) gets 408. */
    headersTimeoutMs: env.HEADERS_TIMEOUT_MS,
    maxRangeDays: env.MAX_RANGE_DAYS,
    /** A streamed slots/ answer of more bookings goes without an ETag, streamed as read; one of at most this many is held whole for its tag. */
    etagMaxRows: env.ETAG_MAX_ROWS,
    /** What the process's answers hold for clients that have not read them: memory, then temporary files in a directory per process under `dir`. */
    hold: { memoryBytes: env.HOLD_MEMORY_BYTES, diskBytes: env.HOLD_DISK_BYTES, dir: env.HOLD_DIR },
    corsOrigins: env.CORS_ORIGINS,
    logLevel: env.LOG_LEVEL,
    /** Guards GET /metrics when set; open otherwise. */
    metricsToken: env.METRICS_TOKEN,
    /** How long requests in flight may take to finish after SIGTERM. */
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    /** The site's public address for absolute URLs (`https://shop.example.com`), without a trailing slash. */
    publicUrl: env.PUBLIC_URL,
    /** Express's `trust proxy`: which peers' X-Forwarded-Proto / X-Forwarded-Host count. */
    trustProxy: env.TRUST_PROXY,
    /** Processes that serve (node:cluster); 1 serves in this process, with no primary. */
    workers: env.WORKERS,
    /** Node/V8 flags the primary gives each worker it forks (WORKER_V8_FLAGS). */
    workerV8Flags: env.WORKER_V8_FLAGS,
  }
}
