// The tokens of changes/ (API.md, "GET changes/"): what a client keeps
// between two syncs, and what it sends for the next page of one. Pure.
//
// A token names the filters it was made with, what the answers were made of
// besides the bookings (the site's zone, the services' slugs, customer data
// shown or not: `context`), the service's version, the source, and where the
// client stands: a place in the database's log, or a digest per period (days
// or a month: server/domain/change-days.ts). It is base64url of JSON, the
// periods' digests packed beside it (13 characters a period: base64url twice
// over would make them 17), and a check: `body.periods.check`. The service
// reads only tokens it made. It holds no secret and grants nothing: every
// answer is made for its caller.
import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { LogPosition } from '../../db/change-log.ts'

/** Where a client stands after a sync, and where a page of a sync or delta goes on. */
export type ChangeCursor =
  /** A sync's pages: bookings by id after `afterId`. */
  | { kind: 'sync'; afterId: number }
  /** A log delta's pages: the ids changed in (from, to], from the `offset`th on. */
  | { kind: 'log-delta'; from: LogPosition; offset: number }
  /**
   * The digest source's pages, of a delta (replaces) or of a sync (`sync`,
   * upserts): the periods still to send (change-days.ts's numbers), the first
   * after `day` (a sync's: after the booking `afterId` of that day), its rows
   * sent so far digested in `sums` ("rows:sum:sum").
   */
  | { kind: 'digest-delta'; periods: number[]; day?: string; afterId?: number; sums?: string; sync?: true }

export interface ChangeToken {
  source: 'log' | 'digest'
  /** The filters, normalised (changeFilterKey). */
  filters: string
  /** The zone, slugs and customer mode the records were made with (a hash). */
  context: string
  version: string
  /** log: the database server the position is in (its server_id and log's name). */
  server?: string
  /** log: where the state the token stands for was read; a page's `to`. */
  position?: LogPosition
  /** digest: each period's digest (its number → hash), the state the token stands for; a delta's target on its pages. */
  periods?: Map<number, string>
  /** Absent: a sync token, kept between syncs. */
  cursor?: ChangeCursor
  /**
   * digest: the rows sent may differ from `periods` (a period changed while
   * its rows were read): the next delta replaces every period, whole.
   */
  unverified?: true
  /** digest: the periods the client was sent a booking of an odd day in (change-days.ts, isOddDay): their replaces cover every day text. */
  oddPeriods?: number[]
}

/** 3: periods of a day too, numbered by 32 a month, packed beside the body (2 had 16 a month, inside it; 1 had months). */
const TOKEN_FORMAT = 3
/** The largest period number (9999-12's last): it fits the five characters of a packed period, 30 bits. */
const MAX_PERIOD = (9999 * 100 + 12) * 32 + 31
/** How many periods a token or a cursor may name: a feed of four years of four days has about 400. */
const MOST_PERIODS = 100_000

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/)
const logPosition = z.object({ file: z.string().max(512), position: z.number().int().min(0) }).strict()
const cursorShape = z.union([
  z.object({ kind: z.literal('sync'), afterId: z.number().int().min(0) }).strict(),
  z.object({ kind: z.literal('log-delta'), from: logPosition, offset: z.number().int().min(0) }).strict(),
  // The periods left, packed (packNumbers): a delta of every period of a long feed keeps its tokens short.
  z.object({
    // Read by unpackNumbers, which refuses any character that is not one of its digits.
    kind: z.literal('digest-delta'), periods: z.string().max(6 * MOST_PERIODS), day: day.optional(), afterId: z.number().int().min(0).optional(),
    sums: z.string().regex(/^\d{1,12}:\d{1,30}:\d{1,30}$/).optional(), sync: z.literal(true).optional(),
  }).strict(),
])
const tokenParts = z.tuple([
  z.literal(TOKEN_FORMAT), z.enum(['log', 'digest']), z.string(), z.string(), z.string(), z.string().nullable(),
  z.tuple([z.string().max(512), z.number().int().min(0)]).nullable(),
  // The number of periods packed beside the body; null: none (a token of the log source).
  z.number().int().min(0).max(MOST_PERIODS).nullable(), cursorShape.nullable(), z.literal(true).nullable(),
  z.string().max(6 * MOST_PERIODS).nullable(),
])

/** Why a token is refused: `invalid` (not ours, damaged, other filters) is 400; `expired` is 410. */
export type TokenVerdict = { ok: true; token: ChangeToken } | { ok: false; kind: 'invalid' | 'expired'; reason: string }

export function encodeChangeToken(token: ChangeToken): string {
  const cursor = token.cursor?.kind === 'digest-delta' ? { ...token.cursor, periods: packNumbers(token.cursor.periods) } : token.cursor
  const body = Buffer.from(JSON.stringify([TOKEN_FORMAT, token.source, token.filters, token.context, token.version, token.server ?? null,
    token.position ? [token.position.file, token.position.position] : null, token.periods ? token.periods.size : null, cursor ?? null, token.unverified ?? null,
    token.oddPeriods?.length ? packNumbers(token.oddPeriods) : null])).toString('base64url')
  const signed = `${body}.${token.periods ? packPeriods(token.periods) : ''}`
  return `${signed}.${checkOf(signed)}`
}

/**
 * The token a client sent, checked: made by this service, for these filters,
 * by this version, in this context (a changed zone, slug or customer mode
 * changes every record: the client starts again, 410).
 */
export function decodeChangeToken(text: string, expected: { filters: string; context: string; version: string }): TokenVerdict {
  const read = readChangeToken(text)
  return read.ok ? checkChangeToken(read.token, expected) : read
}

/** A token the service did not make, or not in the shape it writes: 400. */
const NOT_OURS: TokenVerdict = { ok: false, kind: 'invalid', reason: 'since is not a token this service made: give the next of an earlier answer, or leave since out to start a new sync.' }
/** A token of this service made by another version of it: 410, start again. */
const UPGRADED: TokenVerdict = { ok: false, kind: 'expired', reason: 'the service was upgraded since this token was made' }

/** A token read as the service wrote it (its check, its format, its shape), not yet held against the request (checkChangeToken). */
export function readChangeToken(text: string): TokenVerdict {
  const dot = text.lastIndexOf('.')
  // Stryker disable next-line ConditionalExpression,EqualityOperator: an empty body (dot 0) is no JSON below, and no dot (-1) leaves a text that would have to be its own check: NOT_OURS either way
  if (dot <= 0 || checkOf(text.slice(0, dot)) !== text.slice(dot + 1)) return NOT_OURS
  // body.periods (this format), or body alone (format 2 and earlier: read for its number, then 410).
  const [body, packed, ...rest] = text.slice(0, dot).split('.')
  if (rest.length > 0) return NOT_OURS
  let parts: unknown
  // Stryker disable BlockStatement: parts left undefined by an empty catch is refused just below, with the same verdict
  try {
    parts = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'))
  } catch {
    return NOT_OURS
  }
  // Stryker restore BlockStatement
  // Made here (the check holds) by a version that wrote another format: as any upgrade, 410.
  if (!Array.isArray(parts) || parts[0] !== TOKEN_FORMAT) {
    return Array.isArray(parts) && Number.isInteger(parts[0]) ? UPGRADED : NOT_OURS
  }
  // The check is no secret: a token made by hand to pass it is still read only in the shape the service writes.
  const shaped = tokenParts.safeParse(parts)
  if (!shaped.success || packed === undefined) return NOT_OURS
  const [, source, filters, context, version, server, position, periodCount, cursor, unverified, odd] = shaped.data
  const periods = periodCount === null ? (packed === '' ? undefined : null) : unpackPeriods(packed, periodCount)
  const cursorPeriods = cursor?.kind === 'digest-delta' ? unpackNumbers(cursor.periods) : undefined
  const oddPeriods = odd === null ? undefined : unpackNumbers(odd)
  if (periods === null || cursorPeriods === null || oddPeriods === null) return NOT_OURS
  return {
    ok: true,
    token: {
      source, filters, context, version,
      ...(server === null ? {} : { server }),
      ...(position === null ? {} : { position: { file: position[0], position: position[1] } }),
      ...(periods === undefined ? {} : { periods }),
      ...(cursor === null ? {} : { cursor: cursor.kind === 'digest-delta' ? { ...cursor, periods: cursorPeriods! } : cursor }),
      ...(unverified === null ? {} : { unverified }),
      ...(oddPeriods === undefined || oddPeriods.length === 0 ? {} : { oddPeriods }),
    },
  }
}

/**
 * What of checkChangeToken needs no context (the services' slugs, read per request): the
 * filters (else 400) and the service's version (else 410). A token refused here is refused
 * whatever the context.
 */
export function checkChangeTokenRequest(token: ChangeToken, expected: { filters: string; version: string }): TokenVerdict {
  if (token.filters !== expected.filters) return { ok: false, kind: 'invalid', reason: 'since was made with other filters (service, status, start, end): ask with the filters it was made with, or leave since out to start a new sync.' }
  if (token.version !== expected.version) return UPGRADED
  return { ok: true, token }
}

/** A token read (readChangeToken) held against the request: checkChangeTokenRequest, then the context (else 410). */
export function checkChangeToken(token: ChangeToken, expected: { filters: string; context: string; version: string }): TokenVerdict {
  const request = checkChangeTokenRequest(token, expected)
  if (!request.ok) return request
  if (token.context !== expected.context) return { ok: false, kind: 'expired', reason: 'the site\'s time zone, a service\'s slug or what this caller may see changed since this token was made' }
  return { ok: true, token }
}

/** The filters of changes/ in one normalised string: equal filters, equal strings. */
export function changeFilterKey(filters: { serviceId?: number; statuses?: readonly string[]; start?: string; end?: string }): string {
  return JSON.stringify([filters.serviceId ?? null, filters.statuses ? [...new Set(filters.statuses)].sort() : null, filters.start ?? null, filters.end ?? null])
}

/** A short hash of what a record is made of besides its row. */
export function changeContextOf(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16)
}

/** A period's digest as a token keeps it: 12 base64url characters (72 bits) of the digest the database gave. */
export function periodDigestKey(digest: string): string {
  return createHash('sha256').update(digest).digest('base64url').slice(0, 12)
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
/** In packNumbers: the next number in five digits, not as a step from the one before. */
const WHOLE_NUMBER = 'A'
/** A period's hash in a packed token: 12 characters (periodDigestKey). */
const HASH_CHARS = 12

/**
 * A number of an ascending list as packNumbers writes it: the step from the
 * one before in one base64url digit (1 to 63: a period of days is mostly 1
 * after the last), or WHOLE_NUMBER and five digits (the first, and after a
 * larger step).
 */
function packNumber(n: number, previous: number | undefined): string {
  // Stryker disable next-line ConditionalExpression: the first number's step, n - undefined, is NaN, out of 1 to 63 as 0 is
  const step = previous === undefined ? 0 : n - previous
  return step >= 1 && step <= 63 ? BASE64URL[step]! : `${WHOLE_NUMBER}${[24, 18, 12, 6, 0].map((shift) => BASE64URL[Math.floor(n / 2 ** shift) & 63]).join('')}`
}

/** Numbers in ascending order, one after the other (packNumber). */
function packNumbers(numbers: readonly number[]): string {
  return numbers.map((n, index) => packNumber(n, numbers[index - 1])).join('')
}

/** The number of a packed list at `at`, after `previous`, and where the next begins; undefined when it is not one the service writes. */
function readPackedNumber(packed: string, at: number, previous: number | undefined): { n: number; next: number } | undefined {
  // Past the end, '': no digit, as any character that is not one (step -1, or 0).
  const digit = packed.charAt(at)
  if (digit !== WHOLE_NUMBER) {
    const step = BASE64URL.indexOf(digit)
    return previous === undefined || step < 1 ? undefined : { n: previous + step, next: at + 1 }
  }
  const digits = [...packed.slice(at + 1, at + 6)].map((each) => BASE64URL.indexOf(each))
  if (digits.length < 5 || digits.includes(-1)) return undefined
  const n = digits.reduce((sum, each) => sum * 64 + each, 0)
  return n <= (previous ?? -1) ? undefined : { n, next: at + 6 }
}

/** packNumbers' list, or null when `packed` is not one (or names a period past the last). */
function unpackNumbers(packed: string): number[] | null {
  const numbers: number[] = []
  for (let at = 0; at < packed.length;) {
    const read = readPackedNumber(packed, at, numbers.at(-1))
    if (read === undefined || read.n > MAX_PERIOD) return null
    numbers.push(read.n)
    at = read.next
  }
  return numbers
}

/** Number → hash, as one string: each period's number (packNumber), then its hash. */
function packPeriods(periods: ReadonlyMap<number, string>): string {
  const numbers = [...periods.keys()].sort((a, b) => a - b)
  return numbers.map((period, index) => `${packNumber(period, numbers[index - 1])}${periods.get(period)}`).join('')
}

/** packPeriods' map of `count` periods, or null when `packed` is not one. */
function unpackPeriods(packed: string, count: number): Map<number, string> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(packed)) return null
  const periods = new Map<number, string>()
  let previous: number | undefined
  for (let at = 0; at < packed.length;) {
    const read = readPackedNumber(packed, at, previous)
    if (read === undefined || read.n > MAX_PERIOD || read.next + HASH_CHARS > packed.length) return null
    periods.set(read.n, packed.slice(read.next, read.next + HASH_CHARS))
    previous = read.n
    at = read.next + HASH_CHARS
  }
  return periods.size === count ? periods : null
}

// Not a secret: a check that a token came from this service and was not cut or changed on the way.
function checkOf(body: string): string {
  return createHash('sha256').update(`booking-calendar-api changes token\n${body}`).digest('base64url').slice(0, 16)
}

/** The periods whose digests differ between two states (added, changed or gone), in order. */
export function changedPeriods(before: ReadonlyMap<number, string>, after: ReadonlyMap<number, string>): number[] {
  const periods = new Set([...before.keys(), ...after.keys()])
  return [...periods].filter((period) => before.get(period) !== after.get(period)).sort((a, b) => a - b)
}
