// answerChanges (server/domain/changes.ts) over bookings in memory: a sync's
// pages, a digest delta (periods of four days, or months) cut at whole days, a log delta's pages and its
// deletes. No database: the reads are given (ChangesReads), as they behave.
import { expect } from 'chai'
import { answerChanges, type ChangesAnswer, type ChangesReads, type ChangesSource } from '../../server/domain/changes.ts'
import { changeFilterKey, decodeChangeToken, encodeChangeToken, readChangeToken, type ChangeToken } from '../../server/domain/change-token.ts'
import { bookingMapping } from '../../server/domain/slots.ts'
import { zoneFromOptions } from '../../server/domain/zone-offsets.ts'
import { periodOfDay } from '../../server/domain/change-days.ts'
import { PeriodDigestSum } from '../../db/day-digests.ts'
import { applyPage, type Booking, type ChangesPage } from '../support/changes.ts'
import type { BookingRow, DigestPeriod } from '../../db/booking-queries.ts'
import type { BookingFilter } from '../../db/booking-filter.ts'
import type { ChangeLog, LogPosition } from '../../db/change-log.ts'
import type { Db } from '../../db/connect.ts'

const row = (id: number, day: string, status = 'booked'): BookingRow => ({
  id, service_id: 1, status, booking_date: day, time_from: '10:00:00', time_to: '11:00:00',
  customer_name: '', customer_email: '', customer_phone: '', note: null, created_at: '2026-01-01 00:00:00', service_post_name: 'cut',
})

/** The reads of db/changes.ts over `rows`, filtered as the SQL filters (statuses and booking_date bounds only). */
function readsOver(rows: BookingRow[], server = '1:bin', position: () => Promise<LogPosition> = async () => ({ file: 'bin.000001', position: 4 })): ChangesReads {
  const matching = (filter: BookingFilter) => rows.filter((r) => (!filter.statuses || filter.statuses.includes(r.status))
    && (filter.bookingDate?.from === undefined || r.booking_date >= filter.bookingDate.from)
    && (filter.bookingDate?.to === undefined || r.booking_date <= filter.bookingDate.to))
  const inPeriod = (of: BookingRow[], period: DigestPeriod, afterDay: string | undefined) => of
    .filter((r) => periodOfDay(r.booking_date, period.kind) === period.number && (afterDay === undefined || r.booking_date > afterDay))
  const byDay = (a: BookingRow, b: BookingRow) => (a.booking_date < b.booking_date ? -1 : a.booking_date > b.booking_date ? 1 : a.id - b.id)
  return {
    findBookingsAfterId: async (_db, filter, _columns, afterId, limit) => matching(filter).filter((r) => r.id > afterId).sort((a, b) => a.id - b.id).slice(0, limit),
    findBookingsByIds: async (_db, filter, _columns, ids) => matching(filter).filter((r) => ids.includes(r.id)),
    findBookingsOfPeriodAfter: async (_db, filter, _columns, period, after, limit) => inPeriod(matching(filter), period, undefined)
      .filter((r) => after === undefined || r.booking_date > after.day || (r.booking_date === after.day && r.id > after.id))
      .sort(byDay).slice(0, limit),
    findBookingsOfPeriod: async (_db, filter, _columns, period, afterDay, throughDay, limit) => inPeriod(matching(filter), period, afterDay)
      .filter((r) => throughDay === undefined || r.booking_date <= throughDay)
      .sort(byDay).slice(0, limit),
    countBookingsByDayOfPeriod: async (_db, filter, period, afterDay) => {
      const days = new Map<string, number>()
      for (const r of inPeriod(matching(filter), period, afterDay)) days.set(r.booking_date, (days.get(r.booking_date) ?? 0) + 1)
      return [...days].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, bookings]) => ({ day, bookings }))
    },
    // The digests the statement gives: each row's two CRC-32s added up by period (db/day-digests.ts).
    readPeriodDigests: async (_db, filter, columns, kind) => {
      const sums = new Map<number, PeriodDigestSum>()
      for (const r of matching(filter)) {
        const period = periodOfDay(r.booking_date, kind)
        if (!sums.has(period)) sums.set(period, new PeriodDigestSum())
        sums.get(period)!.add(r, columns)
      }
      return new Map([...sums].map(([period, sum]) => [period, sum.digest]))
    },
    readLogServer: async () => server,
    readLogPosition: position,
  }
}

const db = {} as Db
/** A log that holds no change, from any position to any other. */
const quietLog: ChangeLog = { state: () => ({ connected: true }), serverPosition: async () => ({ file: 'bin.000001', position: 4 }), bookingsChanged: async () => ({ kind: 'changes', ids: [] }), bookingsChangedSoFar: async () => ({ kind: 'not-now' }), changedBetween: async () => 'unknown', stop: async () => {} }
const options = { mapping: bookingMapping(zoneFromOptions('Europe/Berlin', ''), false), context: 'ctx', version: 'v', logWaitMs: 100 }
const digest: ChangesSource = { kind: 'digest' }

type Filters = { status?: string[]; start?: string; end?: string }

/** Follows a sync or delta to its last page; each page applied to `copy` when given, as a client does (tests/support/changes.ts). */
async function follow(source: ChangesSource, reads: ChangesReads, since: string | undefined, perPage: number, extra: Filters = {}, copy?: Map<number, Booking>): Promise<{ pages: ChangesAnswer[]; token: string }> {
  const pages: ChangesAnswer[] = []
  let token = since
  for (;;) {
    const page = await answerChanges(db, source, { since: token, per_page: perPage, ...extra }, options, reads)
    if (copy !== undefined) applyPage(copy, page as unknown as ChangesPage)
    pages.push(page)
    if (pages.length > 1000) throw new Error('a sync or delta that never ends')
    token = page.next
    if (!page.more) return { pages, token }
  }
}

/** Four years: more than two between start and end, at most four, so the digests are per four days of a month. */
const YEAR = { start: '2026-01-01', end: '2029-12-31' }

const opsOf = (pages: ChangesAnswer[]) => pages.map((page) => page.changes.map((op) => (op.op === 'replace' ? `replace ${op.start}..${op.end} [${op.bookings.map((b) => b.id).join(',')}]` : `${op.op} ${op.id}`)))

describe('answerChanges over bookings in memory', () => {
  it('bookings of odd days (a day 00, a 30 February, an April 31) deleted since leave the copy: a replace covers every day text of a period the client holds them in', async () => {
    for (const extra of [{}, { start: '2026-01-01', end: '2026-12-31' }, { start: '2026-01-01', end: '2027-06-30' }, YEAR]) {
      const rows = [row(1, '2026-03-00'), row(2, '2026-03-05'), row(3, '2026-04-31'), row(4, '2026-02-30'), row(5, '2026-03-01')]
      for (const perPage of [1, 10]) {
        const copy = new Map<number, Booking>()
        const { token } = await follow(digest, readsOver(rows), undefined, perPage, extra, copy)
        expect([...copy.keys()].sort(), JSON.stringify(extra)).to.deep.equal([1, 2, 3, 4, 5])
        const left = [rows[1]!, rows[4]!]
        await follow(digest, readsOver(left), token, perPage, extra, copy)
        expect([...copy.keys()].sort(), `${JSON.stringify(extra)} ${perPage}`).to.deep.equal([2, 5])
      }
    }
  })

  it('a page of a period cut after a day 00 or a month\'s last day goes on with the next day text: no booking falls between two pages', async () => {
    // Months (no bounds): 2026-02-28 fills the first page, the odd 2026-02-29 and 30 follow.
    const rows = [row(1, '2026-02-28'), row(2, '2026-02-29'), row(3, '2026-02-30'), row(4, '2026-03-00'), row(5, '2026-03-01'), row(6, '2026-03-01')]
    for (const extra of [{}, { start: '2026-01-01', end: '2026-12-31' }]) {
      const copy = new Map<number, Booking>()
      const { token } = await follow(digest, readsOver([]), undefined, 1, extra, copy)
      const { pages } = await follow(digest, readsOver(rows), token, 1, extra, copy)
      expect([...copy.keys()].sort(), JSON.stringify(opsOf(pages))).to.deep.equal([1, 2, 3, 4, 5, 6])
    }
  })

  it('a day larger than a page, alone on its page, is the end of its period: no replace of no days after it', async () => {
    const month = { start: '2026-03-01', end: '2026-03-31' }
    const rows = [row(1, '2026-03-10'), row(2, '2026-03-10'), row(3, '2026-03-10')]
    const { token } = await follow(digest, readsOver(rows), undefined, 2, month)
    for (const [index, each] of rows.entries()) rows[index] = { ...each, note: 'changed' }
    const { pages } = await follow(digest, readsOver(rows), token, 2, month)
    expect(opsOf(pages)).to.deep.equal([['replace 2026-03-10..2026-03-10 [1,2,3]']])
  })

  it('a booking moved between two periods read on one page is on it once, in its last state; the token is unverified until a quiet delta', async () => {
    const rows = [row(1, '2026-01-05'), row(2, '2026-02-05'), row(3, '2026-03-05')]
    const copy = new Map<number, Booking>()
    const { token } = await follow(digest, readsOver(rows), undefined, 10, {}, copy)
    for (const [index, each] of rows.entries()) rows[index] = { ...each, note: 'changed' }
    // Booking 2 moves from February to March after February's rows are read, before March's.
    const reads = readsOver(rows)
    let periodReads = 0
    const moving: ChangesReads = {
      ...reads,
      findBookingsOfPeriod: async (...args) => {
        const found = await reads.findBookingsOfPeriod(...args)
        if (++periodReads === 2) rows[1] = { ...rows[1]!, booking_date: '2026-03-06' }
        return found
      },
    }
    const { pages, token: after } = await follow(digest, moving, token, 10, {}, copy)
    expect(opsOf(pages)).to.deep.equal([['replace 2026-01-01..2026-01-31 [1]', 'replace 2026-02-01..2026-02-28 []', 'replace 2026-03-01..2026-03-31 [3,2]']])
    expect(decodeChangeToken(after, { filters: changeFilterKey({}), context: 'ctx', version: 'v' })).to.have.nested.property('token.unverified', true)
    await follow(digest, readsOver(rows), after, 10, {}, copy)
    expect([...copy.values()].map((booking) => `${booking.id} ${booking.booking_date}`).sort()).to.deep.equal(['1 2026-01-05', '2 2026-03-06', '3 2026-03-05'])
  })

  it('a sync in the digest source: upserts by day and id, per_page a page, the last page not more', async () => {
    const rows = [row(5, '2026-01-02'), row(2, '2026-03-01'), row(9, '2026-01-02')]
    const { pages } = await follow(digest, readsOver(rows), undefined, 2)
    expect(opsOf(pages)).to.deep.equal([['upsert 5', 'upsert 9'], ['upsert 2']])
    expect(pages.map((page) => page.more)).to.deep.equal([true, false])
  })

  it('a booking written in and out again while a sync pages is not kept: the token is unverified, the next delta replaces every period', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-02-10'), row(3, '2026-03-05')]
    const copy = new Map<number, string>()
    const apply = (page: ChangesAnswer) => {
      for (const op of page.changes) {
        if (op.op === 'upsert') copy.set(op.id, op.booking.booking_date)
        if (op.op === 'replace') {
          for (const [id, day] of copy) if (day >= op.start && day <= op.end) copy.delete(id)
          for (const booking of op.bookings) copy.set(booking.id, booking.booking_date)
        }
      }
    }
    // Booking 4 comes into February after the digests were read, is sent, and is deleted again before the sync ends.
    const between = [() => rows.push(row(4, '2026-02-11')), () => undefined, () => rows.splice(3, 1)]
    let page = await answerChanges(db, digest, { per_page: 1 }, options, readsOver(rows))
    apply(page)
    for (let i = 0; page.more; i++) {
      between[i]?.()
      page = await answerChanges(db, digest, { per_page: 1, since: page.next }, options, readsOver(rows))
      apply(page)
    }
    expect([...copy.keys()].sort()).to.deep.equal([1, 2, 3, 4])
    expect(decodeChangeToken(page.next, { filters: changeFilterKey({}), context: 'ctx', version: 'v' })).to.deep.include({ ok: true }).and.to.have.nested.property('token.unverified', true)
    // February's digest is the one read before the sync again, but the copy holds booking 4: every period is replaced.
    const { pages } = await follow(digest, readsOver(rows), page.next, 10)
    expect(opsOf(pages)).to.deep.equal([['replace 2026-01-01..2026-01-31 [1]', 'replace 2026-02-01..2026-02-28 [2]', 'replace 2026-03-01..2026-03-31 [3]']])
    for (const each of pages) apply(each)
    expect([...copy.keys()].sort()).to.deep.equal([1, 2, 3])
    // Read again as a whole, the token is verified: nothing changed since.
    const quiet = await follow(digest, readsOver(rows), pages.at(-1)!.next, 10)
    expect(opsOf(quiet.pages)).to.deep.equal([[]])
    expect(decodeChangeToken(quiet.token, { filters: changeFilterKey({}), context: 'ctx', version: 'v' })).to.not.have.nested.property('token.unverified')
  })

  it('a digest delta: only the changed periods (four days of a month), each whole, in order', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-02-03'), row(3, '2026-03-04'), row(5, '2026-02-24')]
    const { token } = await follow(digest, readsOver(rows), undefined, 10, YEAR)
    const before = [...rows]
    rows[1] = { ...rows[1]!, note: 'changed' }
    rows.push(row(4, '2026-05-15'), row(6, '2026-05-31'))
    const { pages } = await follow(digest, readsOver(rows), token, 10, YEAR)
    expect(opsOf(pages)).to.deep.equal([['replace 2026-02-01..2026-02-04 [2]', 'replace 2026-05-13..2026-05-16 [4]', 'replace 2026-05-29..2026-05-31 [6]']])
    // Without start and end (or with them more than four years apart) the periods are months.
    const { token: unbounded } = await follow(digest, readsOver(before), undefined, 10)
    const { pages: monthly } = await follow(digest, readsOver(rows), unbounded, 10)
    expect(opsOf(monthly)).to.deep.equal([['replace 2026-02-01..2026-02-28 [2,5]', 'replace 2026-05-01..2026-05-31 [4,6]']])
    const long = { start: '2022-01-01', end: '2027-01-01' }
    const { token: longToken } = await follow(digest, readsOver(before), undefined, 10, long)
    expect(opsOf((await follow(digest, readsOver(rows), longToken, 10, long)).pages)).to.deep.equal(opsOf(monthly))
  })

  it('a period gone empty is replaced by nothing; a period unchanged is not sent', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-02-10'), row(3, '2026-02-12')]
    const { token } = await follow(digest, readsOver(rows), undefined, 10, YEAR)
    const { pages, token: after } = await follow(digest, readsOver([rows[0]!]), token, 10, YEAR)
    expect(opsOf(pages)).to.deep.equal([['replace 2026-02-09..2026-02-12 []']])
    // Gone and sent as nothing, as its digest (none) says: the token is exact.
    expect(decodeChangeToken(after, { filters: changeFilterKey(YEAR), context: 'ctx', version: 'v' })).to.deep.include({ ok: true }).and.not.to.have.nested.property('token.unverified')
  })

  it('a period gone when the digests were read, written again before its rows: sent, and the token unverified; the next delta replaces it, deleted since or not', async () => {
    for (const deletedSince of [false, true]) {
      const rows = [row(1, '2026-01-02'), row(2, '2026-02-10')]
      const { token } = await follow(digest, readsOver(rows), undefined, 10)
      rows.splice(1, 1)
      const reads = readsOver(rows)
      const racing: ChangesReads = {
        ...reads,
        readPeriodDigests: async (...args) => {
          const digests = await reads.readPeriodDigests(...args)
          rows.push(row(3, '2026-02-11'))
          return digests
        },
      }
      const copy = new Map<number, Booking>()
      const { pages, token: after } = await follow(digest, racing, token, 10, {}, copy)
      expect(opsOf(pages)).to.deep.equal([['replace 2026-02-01..2026-02-28 [3]']])
      expect(decodeChangeToken(after, { filters: changeFilterKey({}), context: 'ctx', version: 'v' })).to.have.nested.property('token.unverified', true)
      // Deleted before the next delta, booking 3 leaves no digest: February is replaced because the token names it.
      if (deletedSince) rows.splice(rows.findIndex((each) => each.id === 3), 1)
      const { pages: again } = await follow(digest, readsOver(rows), after, 10, {}, copy)
      expect(opsOf(again)).to.deep.equal([['replace 2026-01-01..2026-01-31 [1]', `replace 2026-02-01..2026-02-28 [${deletedSince ? '' : '3'}]`]])
      expect([...copy.keys()].sort(), `deleted since: ${deletedSince}`).to.deep.equal(deletedSince ? [1] : [1, 3])
    }
  })

  it('a digest delta is cut at whole days: at most per_page bookings a page, a day larger than a page alone and whole', async () => {
    const rows = [row(1, '2026-04-01'), row(2, '2026-04-01'), row(3, '2026-04-02'), row(4, '2026-04-03'), row(5, '2026-04-03'), row(6, '2026-04-03'), row(7, '2026-04-03'), row(8, '2026-04-20')]
    const { token } = await follow(digest, readsOver([]), undefined, 3, YEAR)
    const { pages } = await follow(digest, readsOver(rows), token, 3, YEAR)
    expect(opsOf(pages)).to.deep.equal([
      ['replace 2026-04-01..2026-04-02 [1,2,3]'],
      ['replace 2026-04-03..2026-04-03 [4,5,6,7]'],
      ['replace 2026-04-04..2026-04-04 []', 'replace 2026-04-17..2026-04-20 [8]'],
    ])
  })

  it('bookings written between a page\'s count of days and its rows: still whole days, at most per_page, none lost', async () => {
    const rows = [row(1, '2026-04-01'), row(2, '2026-04-02'), row(3, '2026-04-02'), row(4, '2026-04-03'), row(5, '2026-04-03')]
    const { token } = await follow(digest, readsOver([]), undefined, 3, YEAR)
    // The count misses 3 and 5, written after it: it plans 04-01 to 04-03 (3 bookings), the rows are 5.
    const reads = readsOver(rows)
    const late = readsOver(rows.filter((r) => r.id !== 3 && r.id !== 5))
    const { pages } = await follow(digest, { ...reads, countBookingsByDayOfPeriod: late.countBookingsByDayOfPeriod }, token, 3, YEAR)
    expect(opsOf(pages)).to.deep.equal([
      ['replace 2026-04-01..2026-04-02 [1,2,3]'],
      ['replace 2026-04-03..2026-04-04 [4,5]'],
    ])
  })

  it('the page fills across periods, and a page never ends inside a day', async () => {
    const rows = [row(1, '2026-01-05'), row(2, '2026-02-01'), row(3, '2026-02-01'), row(4, '2026-02-03'), row(9, '2026-02-22')]
    const { token } = await follow(digest, readsOver([]), undefined, 2, YEAR)
    const { pages } = await follow(digest, readsOver(rows), token, 2, YEAR)
    expect(opsOf(pages)).to.deep.equal([
      ['replace 2026-01-05..2026-01-08 [1]'],
      ['replace 2026-02-01..2026-02-02 [2,3]'],
      ['replace 2026-02-03..2026-02-04 [4]', 'replace 2026-02-21..2026-02-24 [9]'],
    ])
  })

  it('a log delta: changed ids in the log\'s order, upserts for those that match, deletes for the rest, paged', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03', 'reject'), row(3, '2026-01-04')]
    const positions: LogPosition[] = [{ file: 'bin.000001', position: 100 }, { file: 'bin.000001', position: 200 }, { file: 'bin.000001', position: 300 }]
    let now = 0
    const log: ChangeLog = {
      state: () => ({ connected: true }),
      serverPosition: async () => { throw new Error('the position is read on the worker\'s own connection, not asked of the reader') },
      bookingsChanged: async (from, to) => (from.position === 100 && to.position === 200 ? { kind: 'changes', ids: [3, 2, 9, 1] }
      : from.position === 200 && to.position === 300 ? { kind: 'changes', ids: [1] } : { kind: 'changes', ids: [] }),
      bookingsChangedSoFar: async () => ({ kind: 'not-now' }), changedBetween: async () => 'unknown',
      stop: async () => {},
    }
    const source: ChangesSource = { kind: 'log', log }
    const reads = readsOver(rows, '1:bin', async () => positions[now]!)
    const { token } = await follow(source, reads, undefined, 10, { status: ['booked'] })
    now = 1
    const delta = await follow(source, reads, token, 3, { status: ['booked'] })
    expect(opsOf(delta.pages)).to.deep.equal([['upsert 3', 'delete 2', 'delete 9'], ['upsert 1']])
    // The last page's next is the token of the next delta: what changed after the first delta's end, only.
    now = 2
    const next = await follow(source, reads, delta.token, 3, { status: ['booked'] })
    expect(opsOf(next.pages)).to.deep.equal([['upsert 1']])
  })

  it('a log delta whose start the log no longer holds is 410; one the reader cannot reach in time is 503', async () => {
    const position = { file: 'bin.000001', position: 100 }
    let answer: Awaited<ReturnType<ChangeLog['bookingsChanged']>> = { kind: 'expired', reason: 'purged' }
    const log: ChangeLog = { state: () => ({ connected: true }), serverPosition: async () => position, bookingsChanged: async () => answer, bookingsChangedSoFar: async () => ({ kind: 'not-now' }), changedBetween: async () => 'unknown', stop: async () => {} }
    const { token } = await follow({ kind: 'log', log }, readsOver([]), undefined, 10)
    const status = async () => answerChanges(db, { kind: 'log', log }, { since: token, per_page: 10 }, options, readsOver([])).then(() => 200, (error: { status: number }) => error.status)
    expect(await status()).to.equal(410)
    answer = { kind: 'late' }
    const late = await answerChanges(db, { kind: 'log', log }, { since: token, per_page: 10 }, options, readsOver([]))
      .then(() => undefined, (error: { status: number; code: string; message: string; extra: { retryAfterSeconds?: number } }) => error)
    expect(late).to.deep.include({ status: 503, code: 'rest_database_unavailable', message: 'The database\'s log is not read up to now yet; try again in a moment.' })
    expect(late?.extra.retryAfterSeconds).to.equal(2)
    // Another database server (a fail-over without the log): 410 too.
    const other = await answerChanges(db, { kind: 'log', log }, { since: token, per_page: 10 }, options, readsOver([], '2:bin')).then(() => 200, (error: { status: number }) => error.status)
    expect(other).to.equal(410)
  })

  it('a token of one source is 410 in the other, and neither the reader nor the digests are asked for it', async () => {
    const asked: string[] = []
    const log: ChangeLog = {
      state: () => ({ connected: true }), serverPosition: async () => ({ file: 'b.1', position: 4 }), bookingsChanged: async () => ({ kind: 'changes', ids: [] }),
      bookingsChangedSoFar: async () => { asked.push('reader'); return { kind: 'not-now' } }, changedBetween: async () => 'unknown', stop: async () => {},
    }
    const base = readsOver([])
    const reads: ChangesReads = { ...base, readPeriodDigests: async (...args) => { asked.push('digests'); return await base.readPeriodDigests(...args) } }
    const digestToken = (await follow(digest, readsOver([]), undefined, 10)).token
    const logToken = (await follow({ kind: 'log', log }, readsOver([]), undefined, 10)).token
    const status = (source: ChangesSource, since: string) => answerChanges(db, source, { since, per_page: 10 }, options, reads).then(() => 200, (error: { status: number }) => error.status)
    expect(await status({ kind: 'log', log }, digestToken)).to.equal(410)
    expect(await status(digest, logToken)).to.equal(410)
    // A token this service did not make: 400, and nothing read for it either.
    expect(await status(digest, 'nonsense')).to.equal(400)
    expect(await status({ kind: 'log', log }, 'nonsense')).to.equal(400)
    expect(asked).to.deep.equal([])
  })
})

describe('answerChanges: what it asks the log, and when', () => {
  /** A log whose position moves by one each time it is asked, counting the asks. */
  function countingLog(ids: number[]) {
    const asked = { position: 0, changes: 0 }
    const log: ChangeLog = {
      state: () => ({ connected: true }),
      serverPosition: async () => { throw new Error('the position is read on the worker\'s own connection, not asked of the reader') },
      bookingsChanged: async () => { asked.changes++; return { kind: 'changes', ids } },
      bookingsChangedSoFar: async () => ({ kind: 'not-now' }), changedBetween: async () => 'unknown',
      stop: async () => {},
    }
    const position = async (): Promise<LogPosition> => ({ file: 'bin.000001', position: 100 + asked.position++ })
    return { log, asked, position }
  }

  it('a sync asks the log\'s position once, for its mark; its later pages go on by id and ask nothing', async () => {
    const { log, asked, position } = countingLog([])
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03'), row(3, '2026-01-04')]
    const { pages } = await follow({ kind: 'log', log }, readsOver(rows, '1:bin', position), undefined, 1)
    expect(pages).to.have.length(3)
    expect(asked).to.deep.equal({ position: 1, changes: 0 })
  })

  it('a delta asks the position once; its later pages end where its first did, and ask none', async () => {
    const { log, asked, position } = countingLog([3, 2, 1])
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03'), row(3, '2026-01-04')]
    const { token } = await follow({ kind: 'log', log }, readsOver(rows, '1:bin', position), undefined, 10)
    const { pages } = await follow({ kind: 'log', log }, readsOver(rows, '1:bin', position), token, 1)
    expect(opsOf(pages)).to.deep.equal([['upsert 3'], ['upsert 2'], ['upsert 1']])
    expect(asked).to.deep.equal({ position: 2, changes: 3 })
  })

  it('a new delta takes what the reader has read where it ends at the server\'s position, or past it in one page; it always ends at that position', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03'), row(3, '2026-01-04')]
    let serverAt = 100
    const at = (position: number): LogPosition => ({ file: 'bin.000001', position })
    let reader: { to: number; ids: number[] } | undefined
    const asked: string[] = []
    const log: ChangeLog = {
      state: () => ({ connected: true }),
      serverPosition: async () => { throw new Error('the position is read on the worker\'s own connection, not asked of the reader') },
      bookingsChanged: async (from, to) => {
        asked.push(`changed ${from.position}..${to.position}`)
        if (from.position > to.position) return { kind: 'expired', reason: 'the position is ahead of the server\'s log' }
        // What the log holds: for (100, 110] the reader's answer, for the later pages of that delta.
        return { kind: 'changes', ids: from.position === 100 && to.position === 110 ? [2, 1] : [3] }
      },
      bookingsChangedSoFar: async (from) => {
        asked.push(`so far ${from.position}`)
        return reader === undefined ? { kind: 'not-now' } : { kind: 'changes', ids: reader.ids, to: at(reader.to) }
      },
      changedBetween: async () => 'unknown',
      stop: async () => {},
    }
    const base = readsOver(rows, '1:bin', async () => at(serverAt))
    const reads: ChangesReads = { ...base, findBookingsByIds: async (...args) => { asked.push(`read ${args[3].join(',')}`); return await base.findBookingsByIds(...args) } }
    const positionOf = (token: string) => (readChangeToken(token) as { ok: true; token: ChangeToken }).token.position!.position
    const { token } = await follow({ kind: 'log', log }, reads, undefined, 10)
    expect(asked, 'a sync asks the reader nothing').to.deep.equal([])
    // Exactly at the server's position: the reader's answer.
    serverAt = 110
    reader = { to: 110, ids: [2, 1] }
    const exactly = await follow({ kind: 'log', log }, reads, token, 1)
    expect(opsOf(exactly.pages)).to.deep.equal([['upsert 2'], ['upsert 1']])
    expect(positionOf(exactly.token)).to.equal(110)
    // Past it, all in one page: the reader's answer, but the delta ends at the server's position,
    // up to which every change is visible to the read that follows.
    serverAt = 120
    reader = { to: 125, ids: [1] }
    const past = await follow({ kind: 'log', log }, reads, exactly.token, 1)
    expect(opsOf(past.pages)).to.deep.equal([['upsert 1']])
    expect(positionOf(past.token)).to.equal(120)
    // Past it, in more than a page; behind it; or not able to say: the log is asked up to the server's position, and waited for.
    serverAt = 130
    reader = { to: 135, ids: [2, 1] }
    const pastTwoPages = await follow({ kind: 'log', log }, reads, past.token, 1)
    expect(opsOf(pastTwoPages.pages)).to.deep.equal([['upsert 3']])
    serverAt = 140
    reader = { to: 139, ids: [2] }
    const behind = await follow({ kind: 'log', log }, reads, pastTwoPages.token, 10)
    expect(opsOf(behind.pages)).to.deep.equal([['upsert 3']])
    reader = undefined
    serverAt = 150
    const unknown = await follow({ kind: 'log', log }, reads, behind.token, 10)
    expect(positionOf(unknown.token)).to.equal(150)
    expect(asked).to.deep.equal([
      'so far 100', 'read 2', 'changed 100..110', 'read 1',
      'so far 110', 'read 1',
      'so far 120', 'changed 120..130', 'read 3',
      'so far 130', 'changed 130..140', 'read 3',
      'so far 140', 'changed 140..150', 'read 3',
    ])
    // The server's log reset (or another server's with the same name) while the reader still stands
    // in the old one, past the token: not the reader's answer, but 410 from the log.
    serverAt = 20
    reader = { to: 500, ids: [1] }
    const reset = await answerChanges(db, { kind: 'log', log }, { since: unknown.token, per_page: 10 }, options, reads).then(() => 200, (error: { status: number }) => error.status)
    expect(reset).to.equal(410)
    expect(asked.at(-1)).to.equal('changed 150..20')
  })

  it('a new delta reads its bookings only after the server\'s position is in: a read before it might not see a change the position holds', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03')]
    const at = (position: number): LogPosition => ({ file: 'bin.000001', position })
    const order: string[] = []
    const log: ChangeLog = {
      state: () => ({ connected: true }),
      serverPosition: async () => { throw new Error('the position is read on the worker\'s own connection, not asked of the reader') },
      bookingsChanged: async () => ({ kind: 'changes', ids: [] }),
      bookingsChangedSoFar: async () => { order.push('so far'); return { kind: 'changes', ids: [2], to: at(100) } },
      changedBetween: async () => 'unknown',
      stop: async () => {},
    }
    const base = readsOver(rows, '1:bin', async () => at(100))
    let slow = false
    const reads: ChangesReads = {
      ...base,
      findBookingsByIds: async (...args) => { order.push(`by ids ${args[3].join(',')}`); return await base.findBookingsByIds(...args) },
      readLogPosition: async (db) => {
        if (slow) await new Promise((resolve) => setTimeout(resolve, 50))
        order.push('position')
        return await base.readLogPosition(db)
      },
    }
    const { token } = await follow({ kind: 'log', log }, reads, undefined, 10)
    slow = true
    order.length = 0
    const delta = await follow({ kind: 'log', log }, reads, token, 10)
    expect(opsOf(delta.pages)).to.deep.equal([['upsert 2']])
    expect(order).to.deep.equal(['so far', 'position', 'by ids 2'])
  })

  it('the digest source reads the periods\' digests at once, not after the services\' slugs; a token refused is refused all the same', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03')]
    const base = readsOver(rows)
    const order: string[] = []
    let release = () => {}
    const reads: ChangesReads = { ...base, readPeriodDigests: async (...args) => { order.push('digests'); release(); return await base.readPeriodDigests(...args) } }
    // The context (the services' slugs) comes only once the digests are asked for, or after 500 ms.
    const slowContext = () => new Promise<string>((resolve) => {
      const timer = setTimeout(() => release(), 500)
      release = () => {
        clearTimeout(timer)
        order.push('context')
        resolve('ctx')
      }
    })
    const ask = (since: string | undefined, filters: Filters = {}) => answerChanges(db, digest, { since, per_page: 10, ...filters }, { ...options, context: slowContext() }, reads)
    const sync = await ask(undefined)
    expect(order).to.deep.equal(['digests', 'context'])
    order.length = 0
    const delta = await ask(sync.next)
    expect(delta.changes).to.deep.equal([])
    expect(order).to.deep.equal(['digests', 'context'])
    order.length = 0
    const refused = await ask(sync.next, { status: ['booked'] }).then(() => 200, (error: { status: number }) => error.status)
    expect(refused).to.equal(400)
    // Nor are they read for a token of other filters, or of another version of the service.
    const upgraded = await answerChanges(db, digest, { since: sync.next, per_page: 10 }, { ...options, version: 'v2', context: slowContext() }, reads).then(() => 200, (error: { status: number }) => error.status)
    expect(upgraded).to.equal(410)
    expect(order).to.deep.equal(['context', 'context'])
  })

  it('the digests are read on the first page of a sync or a delta only, and never in the log source', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03'), row(3, '2026-01-04')]
    let digestReads = 0
    const base = readsOver(rows)
    const reads: ChangesReads = { ...base, readPeriodDigests: async (...args) => { digestReads++; return await base.readPeriodDigests(...args) } }
    const sync = await follow(digest, reads, undefined, 1)
    expect(sync.pages).to.have.length(3)
    expect(digestReads, 'a digest sync of three pages').to.equal(1)
    rows.splice(0, rows.length, row(1, '2026-01-02', 'reject'), row(2, '2026-01-03', 'reject'), row(3, '2026-01-04', 'reject'))
    const delta = await follow(digest, reads, sync.token, 1)
    expect(delta.pages).to.have.length(3)
    expect(digestReads, 'and a digest delta of three pages').to.equal(2)
    const { log } = countingLog([3, 2, 1])
    const logSync = await follow({ kind: 'log', log }, reads, undefined, 1)
    await follow({ kind: 'log', log }, reads, logSync.token, 1)
    expect(digestReads, 'the log source').to.equal(2)
  })

  it('a position that cannot be read is 503 with Retry-After (log_bin turned off, a privilege taken); the server\'s own time limit, 504', async () => {
    const { log } = countingLog([])
    const refusal = (position: () => Promise<LogPosition>) => answerChanges(db, { kind: 'log', log }, { per_page: 10 }, options, readsOver([], '1:bin', position))
      .then(() => undefined, (error: { status: number; code: string; message: string; extra: { retryAfterSeconds?: number } }) => error)
    const off = await refusal(async () => { throw new Error('the server keeps no binary log (log_bin is OFF)') })
    expect(off).to.deep.include({ status: 503, code: 'rest_database_unavailable', message: 'The database\'s log could not be read; try again in a moment.' })
    expect(off?.extra.retryAfterSeconds).to.equal(5)
    const slow = await refusal(async () => { throw Object.assign(new Error('max_statement_time exceeded'), { errno: 1969 }) })
    expect(slow).to.deep.include({ status: 504, code: 'rest_query_timeout' })
  })

  it('a page exactly full is the last when nothing is left: more false', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03')]
    const { pages } = await follow(digest, readsOver(rows), undefined, 2)
    expect(pages.map((page) => [page.changes.length, page.more])).to.deep.equal([[2, false]])
  })

  it('a token of one source with the other\'s cursor, or without its state, is 400 naming since; another server, 410 saying so', async () => {
    const base = { filters: '[null,null,null,null]', context: 'ctx', version: 'v' }
    const position = { file: 'bin.000001', position: 4 }
    const { log } = countingLog([])
    type Refusal = { status: number; message: string; extra?: { params?: Record<string, string> } }
    const ask = (source: ChangesSource, since: string) => answerChanges(db, source, { since, per_page: 10 }, options, readsOver([])).then(() => undefined, (error: Refusal) => error)
    const notThisFeed = 'since is not a token of this feed: leave since out to start a new sync.'
    for (const [source, token] of [
      [{ kind: 'log', log }, { source: 'log', ...base, server: '1:bin', position, cursor: { kind: 'digest-delta', periods: [] } }],
      [{ kind: 'log', log }, { source: 'log', ...base, server: '1:bin' }],
      [digest, { source: 'digest', ...base, periods: new Map(), cursor: { kind: 'log-delta', from: position, offset: 0 } }],
      [digest, { source: 'digest', ...base }],
    ] as const) {
      const refused = await ask(source, encodeChangeToken(token as Parameters<typeof encodeChangeToken>[0]))
      expect(refused, JSON.stringify(token)).to.deep.include({ status: 400 })
      expect(refused?.extra?.params).to.deep.equal({ since: notThisFeed })
    }
    const moved = await ask({ kind: 'log', log }, encodeChangeToken({ source: 'log', ...base, server: '2:other', position }))
    expect(moved).to.deep.include({ status: 410, message: 'The sync token has expired (the database server is not the one the token was made on). Start a new sync: ask again without since.' })
  })
})

describe('answerChanges: tokens, filters and cursors', () => {
  const log: ChangeLog = { state: () => ({ connected: true }), serverPosition: async () => ({ file: 'b.000001', position: 4 }), bookingsChanged: async () => ({ kind: 'changes', ids: [] }), bookingsChangedSoFar: async () => ({ kind: 'not-now' }), changedBetween: async () => 'unknown', stop: async () => {} }
  const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: { status: number; code: string; message: string; extra?: { params?: Record<string, string> } }) => error)

  it('a token refused is 400 rest_invalid_param naming since; an expired one 410 with its reason and what to do', async () => {
    const bad = await failure(answerChanges(db, digest, { since: 'nonsense', per_page: 10 }, options, readsOver([])))
    expect(bad).to.deep.include({ status: 400, code: 'rest_invalid_param' })
    expect(bad?.extra?.params?.since).to.match(/not a token this service made/)
    const { token } = await follow(digest, readsOver([]), undefined, 10)
    const expired = await failure(answerChanges(db, digest, { since: token, per_page: 10 }, { ...options, version: 'w' }, readsOver([])))
    expect(expired).to.deep.include({ status: 410, code: 'rest_changes_token_expired', message: 'The sync token has expired (the service was upgraded since this token was made). Start a new sync: ask again without since.' })
    const moved = await failure(answerChanges(db, { kind: 'log', log }, { since: token, per_page: 10 }, options, readsOver([])))
    expect(moved?.message).to.match(/the service now reads changes from the database's log/)
    const { token: logToken } = await follow({ kind: 'log', log }, readsOver([]), undefined, 10)
    const back = await failure(answerChanges(db, digest, { since: logToken, per_page: 10 }, options, readsOver([])))
    expect(back?.message).to.match(/the service now reads changes from digests per period/)
  })

  it('a sync\'s cursor goes on after its last id, in either source; the filters are those of the token', async () => {
    const rows = [row(1, '2026-01-02'), row(2, '2026-01-03'), row(3, '2026-05-04'), row(4, '2026-07-01')]
    for (const source of [digest, { kind: 'log', log } as ChangesSource]) {
      const first = await answerChanges(db, source, { per_page: 2, start: '2026-01-01', end: '2026-06-30' }, options, readsOver(rows))
      expect(first.more).to.equal(true)
      const second = await answerChanges(db, source, { since: first.next, per_page: 2, start: '2026-01-01', end: '2026-06-30' }, options, readsOver(rows))
      expect(opsOf([first, second])).to.deep.equal([['upsert 1', 'upsert 2'], ['upsert 3']])
      expect(second.more).to.equal(false)
      const other = await failure(answerChanges(db, source, { since: first.next, per_page: 2, start: '2026-01-01' }, options, readsOver(rows)))
      expect(other).to.deep.include({ status: 400 })
    }
  })

  it('a digest delta replaces only days inside start and end (periods of a day for at most a year, of two days for at most two), and reads only within them', async () => {
    const rows = [row(1, '2026-03-02'), row(2, '2026-03-12'), row(3, '2027-03-28'), row(4, '2026-03-24'), row(5, '2027-03-25')]
    for (const [end, ops] of [
      ['2026-03-25', ['replace 2026-03-12..2026-03-12 [2]', 'replace 2026-03-24..2026-03-24 [4]']],
      ['2027-03-25', ['replace 2026-03-11..2026-03-12 [2]', 'replace 2026-03-23..2026-03-24 [4]', 'replace 2027-03-25..2027-03-25 [5]']],
    ] as const) {
      const query = { per_page: 10, start: '2026-03-10', end }
      const first = await answerChanges(db, digest, query, options, readsOver([]))
      const delta = await answerChanges(db, digest, { ...query, since: first.next }, options, readsOver(rows))
      expect(opsOf([delta]), end).to.deep.equal([ops])
    }
  })

  it('a page full of operations stops there: per_page operations at most, even of empty periods', async () => {
    const months = ['2026-01-05', '2026-02-05', '2026-03-05', '2026-04-05']
    const { token } = await follow(digest, readsOver(months.map((day, i) => row(i + 1, day))), undefined, 10)
    const { pages } = await follow(digest, readsOver([]), token, 3)
    expect(pages.map((page) => page.changes.length)).to.deep.equal([3, 1])
  })

  it('start alone, or end alone, bounds the feed: a sync holds only the bookings on their side', async () => {
    const rows = [row(1, '2026-01-05'), row(2, '2026-06-05'), row(3, '2027-01-05')]
    for (const [bounds, ids] of [[{ start: '2026-06-01' }, ['upsert 2', 'upsert 3']], [{ end: '2026-06-30' }, ['upsert 1', 'upsert 2']]] as const) {
      for (const source of [digest, { kind: 'log', log: quietLog } as ChangesSource]) {
        const { pages } = await follow(source, readsOver(rows), undefined, 10, bounds)
        expect(opsOf(pages).flat(), `${source.kind} ${JSON.stringify(bounds)}`).to.deep.equal(ids)
      }
    }
  })

  it('where customer data is shown, every read is asked for the customer\'s cells', async () => {
    const rows = [row(1, '2026-01-05'), row(2, '2026-02-05')]
    const asked: Array<boolean | undefined> = []
    const base = readsOver(rows)
    const recording: ChangesReads = {
      ...base,
      readPeriodDigests: async (...args) => { asked.push(args[2].customer); return await base.readPeriodDigests(...args) },
      findBookingsOfPeriod: async (...args) => { asked.push(args[2].customer); return await base.findBookingsOfPeriod(...args) },
      findBookingsOfPeriodAfter: async (...args) => { asked.push(args[2].customer); return await base.findBookingsOfPeriodAfter(...args) },
    }
    const shown = { ...options, mapping: bookingMapping(zoneFromOptions('Europe/Berlin', ''), true) }
    const sync = await answerChanges(db, digest, { per_page: 10 }, shown, recording)
    rows[0] = { ...rows[0]!, note: 'changed' }
    await answerChanges(db, digest, { per_page: 10, since: sync.next }, shown, recording)
    expect(asked.length).to.be.above(3)
    expect(asked.every((customer) => customer === true), JSON.stringify(asked)).to.equal(true)
  })

  it('an unverified token\'s delta replaces every period, the token\'s and today\'s, in order of days', async () => {
    const rows = [row(1, '2026-01-05'), row(2, '2026-03-05')]
    const sync = await answerChanges(db, digest, { per_page: 10 }, options, readsOver([row(2, '2026-03-05'), row(3, '2026-05-05')]))
    const read = readChangeToken(sync.next)
    if (!read.ok) throw new Error('the sync\'s token does not read')
    // The token holds March and May; January is new: the union, unsorted, would be March, May, January.
    const unverified = encodeChangeToken({ ...read.token, unverified: true })
    const { pages } = await follow(digest, readsOver(rows), unverified, 10)
    expect(opsOf(pages)).to.deep.equal([['replace 2026-01-01..2026-01-31 [1]', 'replace 2026-03-01..2026-03-31 [2]', 'replace 2026-05-01..2026-05-31 []']])
  })

  it('a log delta that holds no change reads no booking', async () => {
    const base = readsOver([row(1, '2026-01-05')])
    let byIds = 0
    const reads: ChangesReads = { ...base, findBookingsByIds: async (...args) => { byIds++; return await base.findBookingsByIds(...args) } }
    const { token } = await follow({ kind: 'log', log: quietLog }, reads, undefined, 10)
    const delta = await answerChanges(db, { kind: 'log', log: quietLog }, { per_page: 10, since: token }, options, reads)
    expect(delta.changes).to.deep.equal([])
    expect(byIds).to.equal(0)
  })

  it('a sync\'s page may end inside a day: per_page bookings a page, the day going on on the next', async () => {
    const rows = [row(1, '2026-01-05'), row(2, '2026-01-05'), row(3, '2026-01-05'), row(4, '2026-01-06')]
    const { pages } = await follow(digest, readsOver(rows), undefined, 2)
    expect(opsOf(pages)).to.deep.equal([['upsert 1', 'upsert 2'], ['upsert 3', 'upsert 4']])
  })

  it('a booking moved between two periods read on one page of a sync is upserted once, in its last state', async () => {
    const rows = [row(1, '2026-01-05'), row(2, '2026-02-05'), row(3, '2026-03-05')]
    const base = readsOver(rows)
    let periodReads = 0
    const moving: ChangesReads = {
      ...base,
      findBookingsOfPeriodAfter: async (...args) => {
        const found = await base.findBookingsOfPeriodAfter(...args)
        if (++periodReads === 2) rows[1] = { ...rows[1]!, booking_date: '2026-03-06' }
        return found
      },
    }
    const copy = new Map<number, Booking>()
    const { pages } = await follow(digest, moving, undefined, 10, {}, copy)
    expect(opsOf(pages)).to.deep.equal([['upsert 1', 'upsert 3', 'upsert 2']])
    expect(copy.get(2)?.booking_date).to.equal('2026-03-06')
  })

  it('a replace of a period that begins before start begins at start', async () => {
    // Two days a period (at most two years): 2026-03-09 and 10 are one, and start is the 10th.
    const query = { per_page: 10, start: '2026-03-10', end: '2027-03-25' }
    const first = await answerChanges(db, digest, query, options, readsOver([]))
    const delta = await answerChanges(db, digest, { ...query, since: first.next }, options, readsOver([row(1, '2026-03-10')]))
    expect(opsOf([delta])).to.deep.equal([['replace 2026-03-10..2026-03-10 [1]']])
  })

  it('a period\'s odd day gone between two pages of a delta: the second page sends no replace of days after the period\'s last', async () => {
    // Months (no bounds). Page 1 is February's 28th (the 30th's two bookings do not fit beside it); they are deleted before page 2.
    const { token } = await follow(digest, readsOver([]), undefined, 10)
    const rows = [row(1, '2026-02-28'), row(2, '2026-02-30'), row(3, '2026-02-30')]
    const first = await answerChanges(db, digest, { per_page: 2, since: token }, options, readsOver(rows))
    expect(opsOf([first])).to.deep.equal([['replace 2026-02-01..2026-02-28 [1]']])
    const second = await answerChanges(db, digest, { per_page: 2, since: first.next }, options, readsOver([rows[0]!]))
    expect(opsOf([second])).to.deep.equal([[]])
    expect(second.more).to.equal(false)
  })

  it('a page full of bookings ends there, though it has room for more operations', async () => {
    const { token } = await follow(digest, readsOver([row(1, '2026-01-05'), row(2, '2026-01-06'), row(3, '2026-02-05')]), undefined, 10)
    const { pages } = await follow(digest, readsOver([{ ...row(1, '2026-01-05'), note: 'changed' }, row(2, '2026-01-06')]), token, 2)
    expect(opsOf(pages)).to.deep.equal([['replace 2026-01-01..2026-01-31 [1,2]'], ['replace 2026-02-01..2026-02-28 []']])
  })

  it('each page of a delta reads the rows of the whole days that fit, and no more', async () => {
    const days = ['2026-03-01', '2026-03-01', '2026-03-02', '2026-03-02', '2026-03-03', '2026-03-03']
    const { token } = await follow(digest, readsOver([]), undefined, 10)
    const base = readsOver(days.map((day, i) => row(i + 1, day)))
    const asked: string[] = []
    const recording: ChangesReads = {
      ...base,
      findBookingsOfPeriod: async (...args) => { asked.push(`${args[4] ?? '-'}..${args[5] ?? '-'} ${args[6]}`); return await base.findBookingsOfPeriod(...args) },
    }
    const { pages } = await follow(digest, recording, token, 3)
    expect(opsOf(pages)).to.deep.equal([['replace 2026-03-01..2026-03-01 [1,2]'], ['replace 2026-03-02..2026-03-02 [3,4]'], ['replace 2026-03-03..2026-03-31 [5,6]']])
    expect(asked).to.deep.equal(['-..2026-03-01 4', '2026-03-01..2026-03-02 4', '2026-03-02..- 4'])
  })
})
