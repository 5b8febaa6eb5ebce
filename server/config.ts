// One schema over process.env, parsed once at start-up (API.md, "Configuration").
// A wrong value stops the process with one line naming the variable and what it accepts.
import express from 'express'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { z } from 'zod'
import { parseZoneSetting } from './domain/zone-offsets.ts'
import type { DbSettings } from '../db/connect.ts'
import { SSL_MODES, type DatabaseSettings, type SslMode, type TlsSettings } from '../db/connection-options.ts'
import { DEFAULT_QUEUE_LENGTH, DEFAULT_QUEUE_TIMEOUT_MS, DEFAULT_STREAM_CONNECTIONS } from '../db/stream-gate.ts'
import { parseBooleanWord, parseWholeNumber } from './parse-text.ts'

/**
 * V8 heap flags for each cluster worker: a sizing choice (docs/operations.md, "Sizing and indexes").
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

/**
 * The niceness the service's processes run at (SERVICE_NICENESS): a sidecar
 * steps back for the site it serves beside when the cores are short. What it
 * gains the site and costs the service, measured: decision 0032.
 */
export const DEFAULT_SERVICE_NICENESS = 10

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
  DB_SSL_MODE: z.string().optional(),
  DB_SSL_CA: z.string().optional(),
  DB_SSL_CERT: z.string().optional(),
  DB_SSL_KEY: z.string().optional(),
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
  // The fast paths (docs/architecture.md, "The fast paths, and their switches"); each off only to rule it out when an answer looks wrong.
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
  AVAILABILITY_MAX_ITEMS: integer('AVAILABILITY_MAX_ITEMS', 1, 100_000_000, 100_000),
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
  // changes/ (API.md, "GET changes/"): the database's binary log when every requirement holds, else digests per period.
  CHANGES_SOURCE: z.string().optional().transform((value, ctx) => {
    const source = (value ?? '').trim().toLowerCase() || 'auto'
    const sources = ['auto', 'log', 'digest'] as const
    const found = sources.find((name) => name === source)
    if (found) return found
    ctx.addIssue({ code: 'custom', message: 'CHANGES_SOURCE must be auto, log or digest.' })
    return z.NEVER
  }),
  // Unique among every replica and reader of the site's database server (MariaDB and MySQL refuse a second reader with one id).
  BINLOG_SERVER_ID: integer('BINLOG_SERVER_ID', 1, 4_294_967_295, 0),
  CHANGES_LOG_WAIT_MS: integer('CHANGES_LOG_WAIT_MS', 100, 600_000, 5_000),
  SERVICE_NICENESS: integer('SERVICE_NICENESS', 0, 19, DEFAULT_SERVICE_NICENESS),
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

/** Every variable the schema reads: docs/configuration.md documents each (the docs check, scripts/check-docs.ts). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape)

/** The options DATABASE_URL takes after `?`, as MySQL's own clients name them. */
const URL_OPTIONS = ['ssl-mode', 'ssl-ca', 'ssl-cert', 'ssl-key', 'socket'] as const
type UrlOption = typeof URL_OPTIONS[number]

/** Each URL option's variable, for the one line that says it was given twice. */
const OPTION_VARIABLES: Record<Exclude<UrlOption, 'socket'>, string> = {
  'ssl-mode': 'DB_SSL_MODE', 'ssl-ca': 'DB_SSL_CA', 'ssl-cert': 'DB_SSL_CERT', 'ssl-key': 'DB_SSL_KEY',
}

/** `?ssl-mode=…&socket=…` of DATABASE_URL, each at most once; any other name refused, named (a name is no secret). */
function urlOptions(url: URL): Partial<Record<UrlOption, string>> {
  const options: Partial<Record<UrlOption, string>> = {}
  for (const [name, value] of url.searchParams) {
    const option = URL_OPTIONS.find((known) => known === name.toLowerCase())
    if (option === undefined) {
      const shown = /^[\w.-]{1,40}$/.test(name) ? name : 'one'
      throw new ConfigError(`DATABASE_URL has an option this service does not know: ${shown}. It takes ${URL_OPTIONS.join(', ')}.`)
    }
    if (option in options) throw new ConfigError(`DATABASE_URL gives ${option} twice.`)
    options[option] = value
  }
  return options
}

/** A certificate or key file's contents, read once at start; `label` names where its path was given. */
function readPem(label: string, path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    throw new ConfigError(`${label} names a file that cannot be read: ${path}`)
  }
}

/**
 * TLS from the URL's options and the DB_SSL_* variables (one or the other for
 * each). A CA given without a mode is checked (VERIFY_CA): a CA that nobody
 * checks would read as protection and be none.
 */
function tlsSettings(env: z.infer<typeof envSchema>, options: Partial<Record<UrlOption, string>>): TlsSettings {
  const given = (option: Exclude<UrlOption, 'socket'>): { label: string; value: string } | undefined => {
    const variable = OPTION_VARIABLES[option]
    const fromEnv = env[variable as 'DB_SSL_MODE']?.trim() || undefined
    const fromUrl = options[option]?.trim() || undefined
    if (fromEnv !== undefined && fromUrl !== undefined) throw new ConfigError(`${option} is given both in DATABASE_URL and as ${variable}: give it once.`)
    if (fromUrl !== undefined) return { label: `${option} in DATABASE_URL`, value: fromUrl }
    return fromEnv === undefined ? undefined : { label: variable, value: fromEnv }
  }
  const modeGiven = given('ssl-mode')
  let mode: SslMode | undefined
  if (modeGiven !== undefined) {
    const word = modeGiven.value.toUpperCase().replace(/-/g, '_')
    mode = SSL_MODES.find((known) => known === word)
    if (mode === undefined) throw new ConfigError(`${modeGiven.label} must be one of ${SSL_MODES.join(', ')}.`)
  }
  const [ca, cert, key] = (['ssl-ca', 'ssl-cert', 'ssl-key'] as const).map((option) => {
    const file = given(option)
    return file === undefined ? undefined : readPem(file.label, file.value)
  })
  if ((cert === undefined) !== (key === undefined)) throw new ConfigError('ssl-cert and ssl-key (DB_SSL_CERT, DB_SSL_KEY) go together: a client certificate needs its key.')
  if (mode === 'DISABLED' && (ca !== undefined || cert !== undefined)) throw new ConfigError('ssl-mode is DISABLED, yet ssl-ca or ssl-cert is given: say which one is meant.')
  return {
    mode: mode ?? (ca !== undefined ? 'VERIFY_CA' : 'PREFERRED'),
    ...(ca !== undefined && { ca }), ...(cert !== undefined && { cert }), ...(key !== undefined && { key }),
  }
}

/**
 * WordPress's DB_HOST as wpdb::parse_db_host reads it: `db`, `db:3306`,
 * `[::1]:3306` or `::1`, `localhost:/run/mysqld/mysqld.sock`, `:/path/sock`;
 * a bare `/path/sock` too. A socket wins over the host. `localhost` is TCP to
 * localhost here, where PHP would take its default socket: give the socket's path to use one.
 */
export function parseWordPressDbHost(text: string): { host: string; port: number; socketPath?: string } | undefined {
  let rest = text.trim()
  let socketPath: string | undefined
  const socketAt = rest.startsWith('/') ? -1 : rest.indexOf(':/')
  if (rest.startsWith('/')) [socketPath, rest] = [rest, '']
  else if (socketAt >= 0) [socketPath, rest] = [rest.slice(socketAt + 1), rest.slice(0, socketAt)]
  // An IPv6 address has two colons or more, bracketed when a port follows.
  const match = (rest.split(':').length > 2
    ? /^(?:\[([0-9a-fA-F:.]+)\](?::(\d+))?|([0-9a-fA-F:.]+))$/.exec(rest)?.filter((_, i) => i > 0)
    : /^([^:/[\]\s]*)(?::(\d+))?$/.exec(rest)?.slice(1))
  if (!match) return undefined
  const host = match[0] ?? match[2] ?? ''
  if (host.includes(':') && isIP(host) !== 6) return undefined
  const port = match[1] !== undefined ? Number(match[1]) : 3306
  if (port < 1 || port > 65535) return undefined
  if (socketPath === undefined && host === '') return undefined
  return { host: host || 'localhost', port, ...(socketPath !== undefined && { socketPath }) }
}

/** mysql://user:password@host:3306/name[?options], or the official WordPress image's WORDPRESS_DB_* names. */
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
    if (url.hash) throw new ConfigError('DATABASE_URL must look like mysql://user:password@host:3306/name?ssl-mode=REQUIRED, with nothing after the options.')
    const options = urlOptions(url)
    const socketPath = options.socket?.trim()
    if (socketPath !== undefined && !socketPath.startsWith('/')) throw new ConfigError('socket in DATABASE_URL must be the socket\'s path, such as /run/mysqld/mysqld.sock.')
    return {
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port ? Number(url.port) : 3306,
      ...(socketPath !== undefined && { socketPath }),
      ...parts,
      tls: tlsSettings(env, options),
    }
  }
  if (env.WORDPRESS_DB_HOST || env.WORDPRESS_DB_USER) {
    const where = parseWordPressDbHost(env.WORDPRESS_DB_HOST ?? 'mysql')
    if (!where) {
      throw new ConfigError('WORDPRESS_DB_HOST must be a host name, optionally with a port or a socket, as WordPress\'s DB_HOST: db, db:3306, [::1]:3306, localhost:/run/mysqld/mysqld.sock.')
    }
    if (!env.WORDPRESS_DB_USER?.trim()) throw new ConfigError('WORDPRESS_DB_USER must name the database account (a read-only one).')
    return {
      ...where,
      user: env.WORDPRESS_DB_USER,
      password: env.WORDPRESS_DB_PASSWORD ?? '',
      database: env.WORDPRESS_DB_NAME?.trim() || 'wordpress',
      tls: tlsSettings(env, {}),
    }
  }
  throw new ConfigError('DATABASE_URL must be set (mysql://user:password@host:3306/name), or WORDPRESS_DB_HOST and WORDPRESS_DB_USER, with WORDPRESS_DB_PASSWORD (WORDPRESS_DB_NAME defaults to wordpress).')
}

/**
 * The variables that may come from a file as `X_FILE` (Docker and Kubernetes
 * secrets), as the official WordPress image reads them: every one that holds
 * a password, a token or a URL with a password in it, and the image's other
 * WORDPRESS_DB_* names, which it reads the same way.
 */
export const FILE_VARIABLES = [
  'DATABASE_URL', 'WORDPRESS_DB_HOST', 'WORDPRESS_DB_USER', 'WORDPRESS_DB_PASSWORD', 'WORDPRESS_DB_NAME', 'API_TOKENS', 'METRICS_TOKEN',
] as const

/**
 * `source` with each `X_FILE` read into X: the file's text without its
 * trailing newlines (the image's rtrim). X and X_FILE both set is refused, as
 * the image's entrypoint does; nothing of a value is ever shown, only the names and the path.
 */
export function withSecretFiles(source: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...source }
  for (const name of FILE_VARIABLES) {
    const path = source[`${name}_FILE`]?.trim()
    if (!path) continue
    if (source[name] !== undefined && source[name] !== '') throw new ConfigError(`${name} and ${name}_FILE are both set: give one.`)
    try {
      env[name] = readFileSync(path, 'utf8').replace(/[\r\n]+$/, '')
    } catch {
      throw new ConfigError(`${name}_FILE names a file that cannot be read: ${path}`)
    }
  }
  return env
}

/**
 * The service's configuration: the environment as envSchema reads it, named
 * for the code. Its type is what this makes of the schema's output, so the two
 * cannot drift apart.
 */
export type Config = ReturnType<typeof configFromEnv>

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(withSecretFiles(source))
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
    /** An availability/ answer that would list more items is 400 before its first byte: its CPU is bounded, like its memory. */
    availabilityMaxItems: env.AVAILABILITY_MAX_ITEMS,
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
    /** The niceness the service's processes take at start, when they run at less (workers inherit the primary's). */
    serviceNiceness: env.SERVICE_NICENESS,
    /** Where changes/ reads what changed: the binary log, digests per period, or the log when it can (auto). */
    changesSource: env.CHANGES_SOURCE,
    /** The log reader's replica id; 0: one derived from the host name and port (defaultBinlogServerId). */
    binlogServerId: env.BINLOG_SERVER_ID,
    /** How long a delta or a revalidation waits for the log's reader to read to the server's position. */
    changesLogWaitMs: env.CHANGES_LOG_WAIT_MS,
  }
}
