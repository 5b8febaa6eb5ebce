// The tokens of changes/ (API.md, "GET changes/"): what a client keeps
// between two syncs, and what it sends for the next page of one. Pure.
//
// A token names the filters it was made with, what the answers were made of
// besides the bookings (the site's zone, the services' slugs, customer data
// shown or not: `context`), the service's version, the source, and where the
// client stands: a place in the database's log, or a digest per period (days
// or a month: server/domain/change-days.ts). It is
// base64url of JSON with a check: the service reads only tokens it made. It
// holds no secret and grants nothing: every answer is made for its caller.
import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { LogPosition } from '../../db/change-log.ts'

/** Where a client stands after a sync, and where a page of a sync or delta goes on. */
export type ChangeCursor =
  /** A sync's pages: bookings by id after `afterId`. */
  | { kind: 'sync'; afterId: number }
  /** A log delta's pages: the ids changed in (from, to], from the `offset`th on. */
  | { kind: 'log-delta'; from: LogPosition; offset: number }
  /** A digest delta's pages: the periods still to replace (change-days.ts's numbers), the first after `day`. */
  | { kind: 'digest-delta'; periods: number[]; day?: string }

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
}

/** 2: digests per period of days or of a month (1 had them per month, numbered otherwise). */
const TOKEN_FORMAT = 2
/** The largest period number (9999-12's last): it fits the four characters of a packed period, 24 bits. */
const MAX_PERIOD = (9999 * 100 + 12) * 16 + 15

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/)
const logPosition = z.object({ file: z.string().max(512), position: z.number().int().min(0) }).strict()
const cursorShape = z.union([
  z.object({ kind: z.literal('sync'), afterId: z.number().int().min(0) }).strict(),
  z.object({ kind: z.literal('log-delta'), from: logPosition, offset: z.number().int().min(0) }).strict(),
  z.object({ kind: z.literal('digest-delta'), periods: z.array(z.number().int().min(0).max(MAX_PERIOD)).max(100_000), day: day.optional() }).strict(),
])
const tokenParts = z.tuple([
  z.literal(TOKEN_FORMAT), z.enum(['log', 'digest']), z.string(), z.string(), z.string(), z.string().nullable(),
  z.tuple([z.string().max(512), z.number().int().min(0)]).nullable(), z.string().regex(/^([A-Za-z0-9_-]{16})*$/).nullable(), cursorShape.nullable(),
])

/** Why a token is refused: `invalid` (not ours, damaged, other filters) is 400; `expired` is 410. */
export type TokenVerdict = { ok: true; token: ChangeToken } | { ok: false; kind: 'invalid' | 'expired'; reason: string }

export function encodeChangeToken(token: ChangeToken): string {
  const body = Buffer.from(JSON.stringify([TOKEN_FORMAT, token.source, token.filters, token.context, token.version, token.server ?? null,
    token.position ? [token.position.file, token.position.position] : null, token.periods ? packPeriods(token.periods) : null, token.cursor ?? null])).toString('base64url')
  return `${body}.${checkOf(body)}`
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
  if (dot <= 0 || checkOf(text.slice(0, dot)) !== text.slice(dot + 1)) return NOT_OURS
  let parts: unknown
  try {
    parts = JSON.parse(Buffer.from(text.slice(0, dot), 'base64url').toString('utf8'))
  } catch {
    return NOT_OURS
  }
  // Made here (the check holds) by a version that wrote another format: as any upgrade, 410.
  if (!Array.isArray(parts) || parts[0] !== TOKEN_FORMAT) {
    return Array.isArray(parts) && Number.isInteger(parts[0]) ? UPGRADED : NOT_OURS
  }
  // The check is no secret: a token made by hand to pass it is still read only in the shape the service writes.
  const shaped = tokenParts.safeParse(parts)
  if (!shaped.success) return NOT_OURS
  const [, source, filters, context, version, server, position, periods, cursor] = shaped.data
  return {
    ok: true,
    token: {
      source, filters, context, version,
      ...(server === null ? {} : { server }),
      ...(position === null ? {} : { position: { file: position[0], position: position[1] } }),
      ...(periods === null ? {} : { periods: unpackPeriods(periods) }),
      ...(cursor === null ? {} : { cursor }),
    },
  }
}

/** A token read (readChangeToken) held against the request: its filters (else 400), then the service's version and the context (else 410). */
export function checkChangeToken(token: ChangeToken, expected: { filters: string; context: string; version: string }): TokenVerdict {
  if (token.filters !== expected.filters) return { ok: false, kind: 'invalid', reason: 'since was made with other filters (service, status, start, end): ask with the filters it was made with, or leave since out to start a new sync.' }
  if (token.version !== expected.version) return UPGRADED
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

/** Number → hash, as one string of 16 characters a period: its number in 4 base64url digits, then its hash (a year of two-day periods is about 4 KB of token). */
function packPeriods(periods: ReadonlyMap<number, string>): string {
  const number = (n: number) => [18, 12, 6, 0].map((shift) => BASE64URL[(n >> shift) & 63]).join('')
  return [...periods.keys()].sort((a, b) => a - b).map((period) => `${number(period)}${periods.get(period)}`).join('')
}

function unpackPeriods(packed: string): Map<number, string> {
  const periods = new Map<number, string>()
  for (let at = 0; at + 16 <= packed.length; at += 16) {
    const number = [...packed.slice(at, at + 4)].reduce((n, digit) => n * 64 + BASE64URL.indexOf(digit), 0)
    periods.set(number, packed.slice(at + 4, at + 16))
  }
  return periods
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
