// What GET changes/ means (API.md, "GET changes/"): a sync's pages, and the
// operations since a token, from the database's log or from digests per period
// (days of a month, or a month).
// No req or res here; the reads are db/changes.ts's, passed in (ChangesReads).
//
// Why it is exact (docs/changes.md, "Why replaying is exact"): a log token is
// the server's position up to which every change was visible before the rows
// were read (a consistent snapshot's): every change after
// it is in the next delta, and a row read later than the position is read again
// then if it changed. A digest token holds each period's digest taken before
// its rows, and the rows a page sends are digested as they go out: where every
// period sent is the one digested, the client holds exactly what the token
// says; where one is not (written while its rows were read: a row may have come
// from a period the client holds it in), the token is unverified and the next
// delta replaces every period.
import type { Db } from '../../db/connect.ts'
import type { BookingFilter } from '../../db/booking-filter.ts'
import type { BookingColumns, BookingRow } from '../../db/booking-queries.ts'
import { comparePositions, type BookingChangesSoFar, type ChangeLog, type LogPosition } from '../../db/change-log.ts'
import type { DatabaseServer } from '../../db/server-dialect.ts'
import { countBookingsByDayOfPeriod, findBookingsAfterId, findBookingsByIds, findBookingsOfPeriod, findBookingsOfPeriodAfter, readLogPosition, readLogServer, readPeriodDigests } from '../../db/changes.ts'
import { PeriodDigestSum } from '../../db/day-digests.ts'
import { RestError, invalidParams, toRestError } from '../errors.ts'
import { toBookingRecord, type BookingMapping, type BookingRecord } from './booking-record.ts'
import {
  changedPeriods, changeFilterKey, checkChangeToken, checkChangeTokenRequest, encodeChangeToken, periodDigestKey, readChangeToken, type ChangeCursor, type ChangeToken,
} from './change-token.ts'
import { dayTextAfter, firstDayOfPeriod, isOddDay, lastDayBefore, lastDayOfPeriod, periodAllDays, periodKindOf, periodRange, type PeriodKind } from './change-days.ts'

export type ChangeOperation =
  | { op: 'upsert'; id: number; booking: BookingRecord }
  | { op: 'delete'; id: number }
  | { op: 'replace'; start: string; end: string; bookings: BookingRecord[] }

export interface ChangesAnswer {
  changes: ChangeOperation[]
  more: boolean
  next: string
}

export interface ChangesQuery {
  since?: string
  serviceId?: number
  status?: string[]
  start?: string
  end?: string
  per_page: number
}

/** The source the instance chose at start (server/change-source.ts). */
export type ChangesSource =
  | { kind: 'log'; log: ChangeLog }
  | { kind: 'digest' }

export interface ChangesReads {
  findBookingsAfterId: typeof findBookingsAfterId
  findBookingsByIds: typeof findBookingsByIds
  findBookingsOfPeriod: typeof findBookingsOfPeriod
  findBookingsOfPeriodAfter: typeof findBookingsOfPeriodAfter
  countBookingsByDayOfPeriod: typeof countBookingsByDayOfPeriod
  readPeriodDigests: typeof readPeriodDigests
  readLogServer: typeof readLogServer
  readLogPosition: typeof readLogPosition
}

export const changesReads: ChangesReads = { findBookingsAfterId, findBookingsByIds, findBookingsOfPeriod, findBookingsOfPeriodAfter, countBookingsByDayOfPeriod, readPeriodDigests, readLogServer, readLogPosition }

export interface ChangesOptions {
  mapping: BookingMapping
  /** changeContextOf the zone, the services' slugs and the customer mode; a promise while the route still reads the slugs. */
  context: string | Promise<string>
  version: string
  /** How long a delta waits for the log's reader to read to the server's position. */
  logWaitMs: number
  /** The database server, once known: the digests per period read on its terms (db/changes.ts). */
  server?: DatabaseServer
}

/** The log's position could not be read: the database's own answer (503, 504) where it is one, else 503 (log_bin turned off, a privilege taken). */
function logUnreadable(error: unknown): RestError {
  return toRestError(error) ?? new RestError(503, 'rest_database_unavailable', 'The database\'s log could not be read; try again in a moment.', { retryAfterSeconds: 5 })
}

/** 410 rest_changes_token_expired: the client starts a new sync. */
export function tokenExpired(reason: string): RestError {
  return new RestError(410, 'rest_changes_token_expired', `The sync token has expired (${reason}). Start a new sync: ask again without since.`)
}

export async function answerChanges(db: Db, source: ChangesSource, query: ChangesQuery, options: ChangesOptions, reads: ChangesReads = changesReads): Promise<ChangesAnswer> {
  const filters = changeFilterKey({ serviceId: query.serviceId, statuses: query.status, start: query.start, end: query.end })
  const filter: BookingFilter = { serviceId: query.serviceId, statuses: query.status }
  if (query.start !== undefined || query.end !== undefined) filter.bookingDate = { from: query.start, to: query.end }
  const columns: BookingColumns = { customer: options.mapping.exposeCustomer }
  const toRecord = (row: BookingRow) => toBookingRecord(row, options.mapping)
  const read: DeltaRead = { db, filter, columns, toRecord, perPage: query.per_page, reads, server: options.server, periodKind: periodKindOf(query.start, query.end) }
  const sent = query.since === undefined ? undefined : readChangeToken(query.since)
  // The log source's place (the server's name, its position now), asked at once, side by side
  // with the slugs the context still waits for, each on a connection of this worker's pool: a
  // delta of one booking is mostly round trips. Not for a page of a sync, which goes on by id; a
  // page of a delta takes its end from the token.
  const cursorKind = sent?.ok ? sent.token.cursor?.kind : undefined
  const logPlace: Promise<[string, LogPosition | undefined]> | undefined = source.kind === 'log' && (sent === undefined || (sent.ok && cursorKind !== 'sync'))
    ? Promise.all([reads.readLogServer(db), cursorKind === 'log-delta' ? undefined : reads.readLogPosition(db, options.server).catch((error: unknown) => { throw logUnreadable(error) })])
    : undefined
  // Awaited where it is used; a failure before that is not the place's to report.
  logPlace?.catch(() => {})
  // A new delta also asks the reader at once what it has read since the token, beside the place
  // rather than after it: where the reader has read to the server's position already (it mostly
  // has), that answer is the delta's, and one trip between processes is off its way.
  // A refusal (the primary did not answer) is as good as 'not-now': the log is then asked and waited for.
  const soFar: Promise<BookingChangesSoFar | undefined> | undefined = source.kind === 'log' && sent?.ok && cursorKind === undefined && sent.token.position !== undefined
    ? source.log.bookingsChangedSoFar(sent.token.position).catch(() => undefined)
    : undefined
  // The digest source's sync or new delta reads every period's digest first, nearly all of its
  // time: asked at once, beside the services' slugs that the context (and the token's check) waits for.
  // Not for a token that will be refused whatever the context (other filters, another version): a
  // read of every digest for nothing, and after each upgrade for every client's first delta.
  const digestsNow = source.kind === 'digest' && (sent === undefined || (sent.ok && sent.token.source === 'digest' && cursorKind === undefined && checkChangeTokenRequest(sent.token, { filters, version: options.version }).ok))
    ? readDigests(read)
    : undefined
  // Awaited where it is used; a token refused before that is the answer.
  digestsNow?.catch(() => {})
  const context = await options.context
  const base = { source: source.kind, filters, context, version: options.version } as const

  if (sent === undefined) {
    // The start of a sync: what the client will stand on, read before its first row.
    if (logPlace !== undefined) return await syncPage(read, await logPlace.then(([server, position]) => ({ ...base, server, position: position! })), 0)
    // The digest source's sync: every period the digests name, in order, each page's rows digested as they go.
    const mark: ChangeToken = { ...base, periods: await digestsNow! }
    return await digestPages(read, mark, { periods: [...mark.periods!.keys()].sort((a, b) => a - b), sync: true })
  }
  const verdict = sent.ok ? checkChangeToken(sent.token, { filters, context, version: options.version }) : sent
  if (!verdict.ok) {
    if (verdict.kind === 'expired') throw tokenExpired(verdict.reason)
    throw invalidParams({ since: verdict.reason })
  }
  const token = verdict.token
  if (token.source !== source.kind) throw tokenExpired(`the service now reads changes from ${source.kind === 'log' ? 'the database\'s log' : 'digests per period'}`)
  const cursor = token.cursor
  if (source.kind === 'log') {
    if (cursor?.kind === 'sync') return await syncPage(read, withoutCursor(token), cursor.afterId)
    return await logDelta(read, source.log, token, cursor, options.logWaitMs, logPlace!, soFar)
  }
  if (token.periods === undefined || (cursor !== undefined && cursor.kind !== 'digest-delta')) throw invalidParams({ since: 'since is not a token of this feed: leave since out to start a new sync.' })
  if (cursor !== undefined) return await digestPages(read, token, cursor)
  // A new delta: the periods whose digests differ now (every period, where the token is unverified), replaced whole.
  const target = await digestsNow!
  const periods = token.unverified ? [...new Set([...token.periods.keys(), ...target.keys()])].sort((a, b) => a - b) : changedPeriods(token.periods, target)
  return await digestPages(read, { ...withoutCursor(token), periods: target, unverified: undefined }, { periods })
}

interface DeltaRead {
  db: Db
  filter: BookingFilter
  columns: BookingColumns
  toRecord: (row: BookingRow) => BookingRecord
  perPage: number
  reads: ChangesReads
  server?: DatabaseServer
  /** The digest source's periods, by the distance of start and end (change-days.ts's periodKindOf). */
  periodKind: PeriodKind
}

/** A page of a sync: the matching bookings by id, after `afterId`; the last page's next is the mark. */
async function syncPage(read: DeltaRead, mark: ChangeToken, afterId: number): Promise<ChangesAnswer> {
  const rows = await read.reads.findBookingsAfterId(read.db, read.filter, read.columns, afterId, read.perPage + 1)
  const more = rows.length > read.perPage
  const page = more ? rows.slice(0, read.perPage) : rows
  const changes: ChangeOperation[] = page.map((row) => ({ op: 'upsert', id: row.id, booking: read.toRecord(row) }))
  const next = more ? { ...mark, cursor: { kind: 'sync', afterId: page.at(-1)!.id } as ChangeCursor } : mark
  return { changes, more, next: encodeChangeToken(next) }
}

async function logDelta(
  read: DeltaRead, log: ChangeLog, token: ChangeToken, cursor: ChangeCursor | undefined, waitMs: number, place: Promise<[string, LogPosition | undefined]>,
  soFar: Promise<BookingChangesSoFar | undefined> | undefined,
): Promise<ChangesAnswer> {
  if (token.position === undefined || (cursor !== undefined && cursor.kind !== 'log-delta')) throw invalidParams({ since: 'since is not a token of this feed: leave since out to start a new sync.' })
  // A page of a delta goes on over the same ids, to the token's end; a new delta runs to the server's position now.
  const from: LogPosition = cursor?.kind === 'log-delta' ? cursor.from : token.position
  const [server, now] = await place
  if (server !== token.server) throw tokenExpired('the database server is not the one the token was made on')
  const offset = cursor?.kind === 'log-delta' ? cursor.offset : 0
  // A new delta runs to the server's position now: the end of what every read from here on sees
  // (db/changes.ts's readLogPosition), so no further, and its rows are read after it. The reader's
  // answer is the delta's where it ends there, or past it in one page (a booking changed after
  // the position, sent now, is sent again by the next delta). Never for a token ahead of the
  // position (the log reset, or another server's by the same name): the reader, not yet
  // reconnected, may still stand past it in the old log; bookingsChanged says 410.
  const early = await soFar
  const past = early?.kind === 'changes' ? comparePositions(early.to, now!) : -1
  const reachedNow = early?.kind === 'changes' && comparePositions(from, now!) <= 0 && past >= 0 && (past === 0 || early.ids.length <= read.perPage) ? early : undefined
  const to = cursor?.kind === 'log-delta' ? token.position : now!
  const changed = reachedNow ?? await log.bookingsChanged(from, to, waitMs)
  if (changed.kind === 'expired') throw tokenExpired(changed.reason)
  if (changed.kind === 'late') throw new RestError(503, 'rest_database_unavailable', 'The database\'s log is not read up to now yet; try again in a moment.', { retryAfterSeconds: 2 })
  const ids = changed.ids.slice(offset, offset + read.perPage)
  const rows = ids.length === 0 ? [] : await read.reads.findBookingsByIds(read.db, read.filter, read.columns, ids)
  const byId = new Map(rows.map((row) => [row.id, row]))
  const changes: ChangeOperation[] = ids.map((id) => {
    const row = byId.get(id)
    return row === undefined ? { op: 'delete', id } : { op: 'upsert', id, booking: read.toRecord(row) }
  })
  const more = offset + read.perPage < changed.ids.length
  const next: ChangeToken = more
    ? { ...withoutCursor(token), position: to, cursor: { kind: 'log-delta', from, offset: offset + read.perPage } }
    : { ...withoutCursor(token), position: to }
  return { changes, more, next: encodeChangeToken(next) }
}

/** Where the digest source's pages stand: a digest-delta cursor, its kind aside. */
type DigestPlace = Omit<Extract<ChangeCursor, { kind: 'digest-delta' }>, 'kind'>

/**
 * The digest source's pages: of a delta, each period in `cursor.periods`
 * replaced whole; of a sync (`cursor.sync`), its bookings as upserts. Cut at
 * days so a page holds at most per_page bookings (a single day of more goes
 * alone on its page). `token.periods` are the digests read before any of the
 * rows, what the last page's token stands for: each period's rows are digested
 * as they are sent (a period cut across pages carries its sum in the cursor),
 * and a period whose rows are not the ones digested makes the token
 * unverified. Each page counts the days of its period in the index first, then
 * reads the rows of the whole days that fit, and no more.
 */
async function digestPages(read: DeltaRead, token: ChangeToken, cursor: DigestPlace): Promise<ChangesAnswer> {
  const target = new Map(token.periods)
  const periods = [...cursor.periods]
  let afterDay = cursor.day
  /** A sync's place in its period: the last booking sent. */
  let afterBooking = cursor.day !== undefined && cursor.afterId !== undefined ? { day: cursor.day, id: cursor.afterId } : undefined
  let sums = new PeriodDigestSum(cursor.sums)
  let unverified = token.unverified ?? false
  const oddPeriods = new Set(token.oddPeriods)
  const changes: ChangeOperation[] = []
  let bookings = 0
  const bounds = read.filter.bookingDate
  /** Rows of the first period, sent: digested, their odd days noted, counted. */
  const sent = (rows: BookingRow[]) => {
    for (const row of rows) sums.add(row, read.columns)
    if (rows.some((row) => isOddDay(row.booking_date))) oddPeriods.add(periods[0]!)
    bookings += rows.length
  }
  /** A sync's rows: as upserts. */
  const sendUpserts = (rows: BookingRow[]) => {
    sent(rows)
    changes.push(...rows.map((row): ChangeOperation => ({ op: 'upsert', id: row.id, booking: read.toRecord(row) })))
  }
  /** A delta's rows of days `first` to `last` of the period: as one replace. */
  const sendReplace = (first: string, last: string, rows: BookingRow[]) => {
    sent(rows)
    // Rows lie between first and last. None, and first after last: the rest of a period cut after
    // its last real day, its odd days gone since: no day the client holds.
    if (first <= last) changes.push(replaceOf(first, last, rows, read, bounds))
  }
  /** The period's rows all sent: digested as the token says, or the token is unverified (and keeps what was sent). */
  const periodSent = (period: number) => {
    // No rows, no digest: a period the digests did not name, or one gone empty since.
    const digested = sums.rows === 0 ? undefined : periodDigestKey(sums.digest)
    if (target.get(period) !== digested) {
      unverified = true
      // Named in the token, so the next delta replaces it, rows or none.
      if (digested !== undefined) target.set(period, digested)
    }
    periods.shift()
    afterDay = undefined
    afterBooking = undefined
    sums = new PeriodDigestSum()
  }
  while (periods.length > 0 && changes.length < read.perPage) {
    const period = periods[0]!
    const digestPeriod = { number: period, kind: read.periodKind, ...periodRange(period, read.periodKind) }
    const room = read.perPage - bookings
    if (room === 0) break
    if (cursor.sync) {
      // A sync's upserts need no whole days: a page ends after per_page bookings, inside a day or not.
      // One more than the room: a period that ends with the page ends on it.
      const rows = await read.reads.findBookingsOfPeriodAfter(read.db, read.filter, read.columns, digestPeriod, afterBooking, room + 1)
      if (rows.length <= room) {
        sendUpserts(rows)
        periodSent(period)
        continue
      }
      const fits = rows.slice(0, room)
      sendUpserts(fits)
      afterBooking = { day: fits.at(-1)!.booking_date, id: fits.at(-1)!.id }
      break
    }
    // The whole days that fit: through the day before the first that does not, or all of the
    // period's (through undefined). A first day larger than the room is read alone, cut below.
    const days = await read.reads.countBookingsByDayOfPeriod(read.db, read.filter, digestPeriod, afterDay)
    let through: string | undefined
    let fit = 0
    for (const [index, day] of days.entries()) {
      if (fit + day.bookings > room) {
        through = index === 0 ? day.day : lastDayBefore(day.day, days[index - 1]!.day)
        break
      }
      fit += day.bookings
    }
    const rows = await read.reads.findBookingsOfPeriod(read.db, read.filter, read.columns, digestPeriod, afterDay, through, room + 1)
    // A period the client holds odd days of is replaced over every day text it has.
    const all = oddPeriods.has(period) ? periodAllDays(period, read.periodKind) : undefined
    const first = afterDay === undefined ? (all?.first ?? firstDayOfPeriod(period, read.periodKind, rows)) : dayTextAfter(afterDay)
    if (rows.length <= room) {
      if (through === undefined) {
        sendReplace(first, all?.last ?? lastDayOfPeriod(period, read.periodKind, rows), rows)
        periodSent(period)
        continue
      }
      sendReplace(first, through, rows)
      afterDay = through
      break
    }
    // More than the page has room for (a day larger than a page, or bookings added since the count): whole days only.
    const lastDay = rows.at(-1)!.booking_date
    const whole = rows.filter((row) => row.booking_date !== lastDay)
    if (whole.length > 0) {
      const end = lastDayBefore(lastDay, whole.at(-1)!.booking_date)
      sendReplace(first, end, whole)
      afterDay = end
      break
    }
    if (changes.length > 0) break
    // One day of more bookings than per_page: alone on this page, whole (its first day from these rows: an earlier one may have come since).
    const day = await read.reads.findBookingsOfPeriod(read.db, read.filter, read.columns, digestPeriod, afterDay, lastDay, Number.MAX_SAFE_INTEGER)
    sendReplace(afterDay === undefined ? (all?.first ?? firstDayOfPeriod(period, read.periodKind, day)) : first, lastDay, day)
    // The period's last day text: it is sent whole, not one more page of nothing.
    if (dayTextAfter(lastDay) > periodAllDays(period, read.periodKind).last) periodSent(period)
    else afterDay = lastDay
    break
  }
  const more = periods.length > 0
  const stands: ChangeToken = {
    ...withoutCursor(token), periods: target, unverified: unverified ? true : undefined, oddPeriods: oddPeriods.size === 0 ? undefined : [...oddPeriods].sort((a, b) => a - b),
  }
  const next: ChangeToken = more
    ? { ...stands, cursor: { kind: 'digest-delta', periods, ...place(afterDay, afterBooking, sums), ...(cursor.sync ? { sync: true } : {}) } }
    : stands
  return { changes: onceEach(changes), more, next: encodeChangeToken(next) }
}

/**
 * One booking at most once a page, in its last state: a booking moved between
 * two periods read on one page is in both reads; the later is kept (and the
 * sums, which counted it twice, make the token unverified).
 */
function onceEach(changes: ChangeOperation[]): ChangeOperation[] {
  const seen = new Set<number>()
  const kept: ChangeOperation[] = []
  for (const operation of [...changes].reverse()) {
    if (operation.op === 'replace') {
      kept.push({ ...operation, bookings: operation.bookings.filter((booking) => !seen.has(booking.id)) })
      for (const booking of operation.bookings) seen.add(booking.id)
    } else if (!seen.has(operation.id)) {
      kept.push(operation)
      seen.add(operation.id)
    }
  }
  return kept.reverse()
}

/** Where a page of the digest source goes on in its first period: after a day (a delta) or a booking (a sync), with the sum of what was sent of it. */
function place(afterDay: string | undefined, afterBooking: { day: string; id: number } | undefined, sums: PeriodDigestSum): { day?: string; afterId?: number; sums?: string } {
  if (afterBooking !== undefined) return { day: afterBooking.day, afterId: afterBooking.id, sums: sums.digest }
  return afterDay === undefined ? {} : { day: afterDay, sums: sums.digest }
}

function replaceOf(start: string, end: string, rows: BookingRow[], read: DeltaRead, bounds: BookingFilter['bookingDate']): ChangeOperation {
  // The days asked for, no more: a client holds nothing outside them.
  const from = bounds?.from !== undefined && bounds.from > start ? bounds.from : start
  const to = bounds?.to !== undefined && bounds.to < end ? bounds.to : end
  return { op: 'replace', start: from, end: to, bookings: rows.map(read.toRecord) }
}

/** Each period's digest now, as a token keeps it (periodDigestKey). */
async function readDigests(read: DeltaRead): Promise<Map<number, string>> {
  const digests = await read.reads.readPeriodDigests(read.db, read.filter, read.columns, read.periodKind, read.server)
  return new Map([...digests].map(([period, digest]) => [period, periodDigestKey(digest)]))
}

function withoutCursor(token: ChangeToken): ChangeToken {
  const { cursor: _cursor, ...rest } = token
  return rest
}
