// The tokens of changes/ (API.md, "GET changes/"): what a client keeps
// between two syncs, and what it sends for the next page of one. Pure.
//
// A token names the filters it was made with, what the answers were made of
// besides the bookings (the site's zone, the services' slugs, customer data
// shown or not: `context`), the service's version, the source, and where the
// client stands: a place in the database's log, or a digest per month. It is
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
  /** A digest delta's pages: the months still to replace, the first from `day` on. */
  | { kind: 'digest-delta'; months: string[]; day?: string }

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
  /** digest: each month's digest ("YYYY-MM" → hash), the state the token stands for; a delta's target on its pages. */
  months?: Record<string, string>
  /** Absent: a sync token, kept between syncs. */
  cursor?: ChangeCursor
}

const TOKEN_FORMAT = 1

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/)
const logPosition = z.object({ file: z.string().max(512), position: z.number().int().min(0) }).strict()
const cursorShape = z.union([
  z.object({ kind: z.literal('sync'), afterId: z.number().int().min(0) }).strict(),
  z.object({ kind: z.literal('log-delta'), from: logPosition, offset: z.number().int().min(0) }).strict(),
  z.object({ kind: z.literal('digest-delta'), months: z.array(z.string().regex(/^\d{4}-\d{2}$/)).max(100_000), day: day.optional() }).strict(),
])
const tokenParts = z.tuple([
  z.literal(TOKEN_FORMAT), z.enum(['log', 'digest']), z.string(), z.string(), z.string(), z.string().nullable(),
  z.tuple([z.string().max(512), z.number().int().min(0)]).nullable(), z.string().regex(/^(\d{6}[A-Za-z0-9_-]{12})*$/).nullable(), cursorShape.nullable(),
])

/** Why a token is refused: `invalid` (not ours, damaged, other filters) is 400; `expired` is 410. */
export type TokenVerdict = { ok: true; token: ChangeToken } | { ok: false; kind: 'invalid' | 'expired'; reason: string }

export function encodeChangeToken(token: ChangeToken): string {
  const body = Buffer.from(JSON.stringify([TOKEN_FORMAT, token.source, token.filters, token.context, token.version, token.server ?? null,
    token.position ? [token.position.file, token.position.position] : null, token.months ? packMonths(token.months) : null, token.cursor ?? null])).toString('base64url')
  return `${body}.${checkOf(body)}`
}

/**
 * The token a client sent, checked: made by this service, for these filters,
 * by this version, in this context (a changed zone, slug or customer mode
 * changes every record: the client starts again, 410).
 */
export function decodeChangeToken(text: string, expected: { filters: string; context: string; version: string }): TokenVerdict {
  const invalid = (reason: string): TokenVerdict => ({ ok: false, kind: 'invalid', reason })
  const dot = text.lastIndexOf('.')
  if (dot <= 0 || checkOf(text.slice(0, dot)) !== text.slice(dot + 1)) return invalid('since is not a token this service made: give the next of an earlier answer, or leave since out to start a new sync.')
  let parts: unknown
  try {
    parts = JSON.parse(Buffer.from(text.slice(0, dot), 'base64url').toString('utf8'))
  } catch {
    return invalid('since is not a token this service made: give the next of an earlier answer, or leave since out to start a new sync.')
  }
  if (!Array.isArray(parts) || parts[0] !== TOKEN_FORMAT) return invalid('since was made by another version of the token format: leave since out to start a new sync.')
  // The check is no secret: a token made by hand to pass it is still read only in the shape the service writes.
  const shaped = tokenParts.safeParse(parts)
  if (!shaped.success) return invalid('since is not a token this service made: give the next of an earlier answer, or leave since out to start a new sync.')
  const [, source, filters, context, version, server, position, months, cursor] = shaped.data
  if (filters !== expected.filters) return invalid('since was made with other filters (service, status, start, end): ask with the filters it was made with, or leave since out to start a new sync.')
  const token: ChangeToken = {
    source, filters, context, version,
    ...(server === null ? {} : { server }),
    ...(position === null ? {} : { position: { file: position[0], position: position[1] } }),
    ...(months === null ? {} : { months: unpackMonths(months) }),
    ...(cursor === null ? {} : { cursor }),
  }
  if (version !== expected.version) return { ok: false, kind: 'expired', reason: 'the service was upgraded since this token was made' }
  if (context !== expected.context) return { ok: false, kind: 'expired', reason: 'the site\'s time zone, a service\'s slug or what this caller may see changed since this token was made' }
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

/** A month's digest as a token keeps it: 12 base64url characters (72 bits) of the digest the database gave. */
export function monthDigestKey(digest: string): string {
  return createHash('sha256').update(digest).digest('base64url').slice(0, 12)
}

/** "YYYY-MM" → hash, as one string "YYYYMMhash…" (a decade of months is about 2 KB). */
function packMonths(months: Record<string, string>): string {
  return Object.keys(months).sort().map((month) => `${month.slice(0, 4)}${month.slice(5, 7)}${months[month]}`).join('')
}

function unpackMonths(packed: string): Record<string, string> {
  const months: Record<string, string> = {}
  for (let at = 0; at + 18 <= packed.length; at += 18) months[`${packed.slice(at, at + 4)}-${packed.slice(at + 4, at + 6)}`] = packed.slice(at + 6, at + 18)
  return months
}

// Not a secret: a check that a token came from this service and was not cut or changed on the way.
function checkOf(body: string): string {
  return createHash('sha256').update(`booking-calendar-api changes token\n${body}`).digest('base64url').slice(0, 16)
}

/** The months whose digests differ between two states (added, changed or gone), in order. */
export function changedMonths(before: Record<string, string>, after: Record<string, string>): string[] {
  const months = new Set([...Object.keys(before), ...Object.keys(after)])
  return [...months].filter((month) => before[month] !== after[month]).sort()
}
