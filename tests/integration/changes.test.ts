// GET changes/ in the digest source (API.md, "GET changes/"): a sync's pages,
// deltas as replaced periods (days, or months), tokens refused and expired. The log source's
// tests are in changes-log.test.ts; the replay property runs for both.
import { expect } from 'chai'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { HAIRCUT, loadSite, STRIZHKA } from '../fixtures/site.ts'
import { readChangeToken } from '../../server/domain/change-token.ts'
import { readPeriodDigests } from '../../db/changes.ts'
import { bookingsDigestHalves, compileBookingsDayDigests, type BookingsDayDigestRow } from '../../db/booking-queries.ts'
import { periodDigestsOfDays } from '../../db/day-digests.ts'
import { applyPage, CHANGES_URL, expectSameBookings, followChanges, slotsNow, type Booking, type ChangesPage } from '../support/changes.ts'

describe('GET changes/ (digest source)', () => {
  let db: TestDatabase
  let t: TestApp
  const table = () => `\`${db.prefix}booking_calendar_bookings\``

  before(async () => {
    db = await createTestDatabase('changes_digest')
    await loadSite(db)
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('a sync without since pages every matching booking as upserts, by day and id, per_page a page, inside a day or not; its last next is the token', async () => {
    const copy = new Map<number, Booking>()
    const { pages } = await followChanges(t.app, copy, undefined, { query: 'per_page=2' })
    expect(pages.length).to.be.above(2)
    // Upserts need no whole days (decision 0038): every page but the last is full.
    for (const page of pages.slice(0, -1)) expect(page.changes.length).to.equal(2)
    expect(pages.at(-1)!.changes.length).to.be.within(1, 2)
    for (const page of pages) for (const operation of page.changes) expect(operation.op).to.equal('upsert')
    const order = pages.flatMap((page) => page.changes.map((operation) => (operation.op === 'upsert' ? `${operation.booking.booking_date} ${String(operation.id).padStart(6, '0')}` : '')))
    expect(order).to.deep.equal([...order].sort())
    // The fixture's 2026-11-25 holds three bookings: some page goes on with the day the page before ended in.
    const dayOf = (operation: ChangesPage['changes'][number] | undefined) => (operation as { booking: Booking }).booking.booking_date
    expect(pages.slice(1).some((page, index) => dayOf(page.changes[0]) === dayOf(pages[index]!.changes.at(-1)))).to.equal(true)
    expectSameBookings(copy, await slotsNow(t.app))
  })

  it('a booking written in and out again while a sync pages is not kept: the next delta replaces every period', async () => {
    const query = 'start=2026-01-01&end=2026-12-31&per_page=1'
    // A day the sync sends halfway, one that has bookings before it starts.
    const days = [...(await slotsNow(t.app, query)).values()].map((booking) => booking.booking_date).sort()
    const middleDay = days[Math.floor(days.length / 2)]!
    const copy = new Map<number, Booking>()
    let deleted = false
    const { token } = await followChanges(t.app, copy, undefined, {
      query,
      betweenPages: async (page) => {
        if (page === 0) await db.insert('booking_calendar_bookings', [{ id: 777, service_id: HAIRCUT, status: 'booked', booking_date: middleDay, time_from: '23:00:00', time_to: '23:30:00', created_at: '2026-01-01 09:00:00' }])
        if (!deleted && copy.has(777)) {
          await db.admin.query(`DELETE FROM ${table()} WHERE id = 777`)
          deleted = true
        }
      },
    })
    // Sent by the sync, deleted before it ended: every digest reads as it did before the sync.
    expect(deleted).to.equal(true)
    expect(copy.has(777)).to.equal(true)
    const { pages } = await followChanges(t.app, copy, token, { query: 'start=2026-01-01&end=2026-12-31&per_page=1000' })
    expect(copy.has(777)).to.equal(false)
    expectSameBookings(copy, await slotsNow(t.app, query))
    const replaced = new Set(pages.flatMap((page) => page.changes.map((operation) => (operation.op === 'replace' ? operation.start : ''))))
    expect(replaced.size).to.equal(new Set([...copy.values()].map((booking) => booking.booking_date)).size)
    // The token after it stands for the copy again: nothing changed since.
    expect((await followChanges(t.app, copy, pages.at(-1)!.next, { query })).pages.flatMap((page) => page.changes)).to.deep.equal([])
  })

  it('bookings of odd days (a day 00, a 30 February, an April 31, the zero date) synced, then deleted: the copy follows slots/, a page at a time', async () => {
    const odd = ['2026-03-00', '2026-02-30', '2026-04-31', '0000-00-00', '2026-02-29']
    await db.admin.query(`SET STATEMENT sql_mode = '' FOR INSERT INTO ${table()} (id, service_id, status, booking_date, time_from, time_to, customer_name, customer_email, customer_phone, note, created_at)
      VALUES ${odd.map((_, i) => `(${880 + i}, ${HAIRCUT}, 'booked', ?, '10:00:00', '11:00:00', '', '', '', 'odd', '2026-01-01 00:00:00')`).join(', ')}`, odd)
    try {
      for (const query of ['per_page=2', 'start=2026-01-01&end=2026-12-31&per_page=1', 'start=2025-06-01&end=2026-12-31&per_page=3']) {
        const copy = new Map<number, Booking>()
        const { token } = await followChanges(t.app, copy, undefined, { query })
        expectSameBookings(copy, await slotsNow(t.app, query))
        await db.admin.query(`DELETE FROM ${table()} WHERE id BETWEEN 880 AND 889`)
        const { token: after } = await followChanges(t.app, copy, token, { query })
        expectSameBookings(copy, await slotsNow(t.app, query))
        expect([...copy.keys()].filter((id) => id >= 880 && id <= 889), query).to.deep.equal([])
        await db.admin.query(`SET STATEMENT sql_mode = '' FOR INSERT INTO ${table()} (id, service_id, status, booking_date, time_from, time_to, customer_name, customer_email, customer_phone, note, created_at)
          VALUES ${odd.map((_, i) => `(${880 + i}, ${HAIRCUT}, 'booked', ?, '10:00:00', '11:00:00', '', '', '', 'odd', '2026-01-01 00:00:00')`).join(', ')}`, odd)
        await followChanges(t.app, copy, after, { query })
        expectSameBookings(copy, await slotsNow(t.app, query))
      }
    } finally {
      await db.admin.query(`DELETE FROM ${table()} WHERE id BETWEEN 880 AND 889`)
    }
  })

  it('nothing changed: an empty changes, more false, and a token that still works', async () => {
    const copy = new Map<number, Booking>()
    const { token } = await followChanges(t.app, copy, undefined)
    const res = await request(t.app).get(`${CHANGES_URL}?since=${encodeURIComponent(token)}`).expect(200)
    expect(res.body.changes).to.deep.equal([])
    expect(res.body.more).to.equal(false)
    expect(res.headers['cache-control']).to.equal('no-store')
    const again = await request(t.app).get(`${CHANGES_URL}?since=${encodeURIComponent(res.body.next)}`).expect(200)
    expect(again.body.changes).to.deep.equal([])
  })

  it('an insert, an update and a delete come back as their periods (days, or months) replaced whole; replaying gives slots/', async () => {
    // A year: its digests are per day. Without start and end they are per month.
    const year = 'start=2026-01-01&end=2026-12-31'
    const copy = new Map<number, Booking>()
    const { token } = await followChanges(t.app, copy, undefined, { query: year })
    const wholeCopy = new Map<number, Booking>()
    const { token: wholeToken } = await followChanges(t.app, wholeCopy, undefined)
    await db.insert('booking_calendar_bookings', [{ id: 501, service_id: HAIRCUT, status: 'booked', booking_date: '2026-05-04', time_from: '10:00:00', time_to: '11:00:00', created_at: '2026-04-01 09:00:00' }])
    await db.admin.query(`UPDATE ${table()} SET note = 'moved' WHERE id = 101`)
    await db.admin.query(`DELETE FROM ${table()} WHERE id = 104`)
    try {
      const replacedIn = (pages: ChangesPage[]) => pages.flatMap((page) => page.changes).map((operation) => operation.op === 'replace' ? `${operation.start}..${operation.end}` : operation.op)
      const { pages } = await followChanges(t.app, copy, token, { query: year })
      expect(replacedIn(pages)).to.deep.equal(['2026-03-29..2026-03-29', '2026-05-04..2026-05-04', '2026-11-25..2026-11-25'])
      expectSameBookings(copy, await slotsNow(t.app, year))
      const { pages: wholePages } = await followChanges(t.app, wholeCopy, wholeToken)
      expect(replacedIn(wholePages)).to.deep.equal(['2026-03-01..2026-03-31', '2026-05-01..2026-05-31', '2026-11-01..2026-11-30'])
      expectSameBookings(wholeCopy, await slotsNow(t.app))
    } finally {
      await db.admin.query(`DELETE FROM ${table()} WHERE id = 501`)
      await db.admin.query(`UPDATE ${table()} SET note = 'Window seat' WHERE id = 101`)
      await db.admin.query(`INSERT INTO ${table()} (id, service_id, status, booking_date, time_from, time_to, customer_name, customer_email, customer_phone, note, created_at)
        VALUES (104, ${HAIRCUT}, 'reject', '2026-03-29', '02:30:00', '03:30:00', 'Customer 104', 'c104@example.com', '+49 30 104', 'in the spring gap', '2026-03-01 12:00:00')`)
    }
  })

  it('filters: a booking that leaves the statuses asked for leaves the copy; replace ops stay inside start and end', async () => {
    const query = 'status=booked,pending&start=2026-11-10&end=2026-11-30&per_page=2'
    const copy = new Map<number, Booking>()
    const { token } = await followChanges(t.app, copy, undefined, { query })
    expect(copy.has(101)).to.equal(true)
    await db.admin.query(`UPDATE ${table()} SET status = 'reject' WHERE id = 101`)
    try {
      const { pages } = await followChanges(t.app, copy, token, { query })
      for (const operation of pages.flatMap((page) => page.changes)) {
        expect(operation.op).to.equal('replace')
        if (operation.op === 'replace') {
          expect(operation.start >= '2026-11-10' && operation.end <= '2026-11-30', `${operation.start}..${operation.end}`).to.equal(true)
          expect(operation.bookings.length).to.be.at.most(2)
        }
      }
      expect(copy.has(101)).to.equal(false)
      expectSameBookings(copy, await slotsNow(t.app, query))
    } finally {
      await db.admin.query(`UPDATE ${table()} SET status = 'booked' WHERE id = 101`)
    }
  })

  it('a changed period larger than per_page is replaced in whole days, a page at most per_page bookings, a day never split', async () => {
    const copy = new Map<number, Booking>()
    const { token } = await followChanges(t.app, copy, undefined, { query: 'per_page=3' })
    const rows = Array.from({ length: 12 }, (_, i) => ({
      id: 600 + i, service_id: i % 2 === 0 ? HAIRCUT : STRIZHKA, status: 'booked', booking_date: `2026-07-${String(1 + Math.floor(i / 2)).padStart(2, '0')}`,
      time_from: '10:00:00', time_to: '11:00:00', created_at: '2026-06-01 09:00:00',
    }))
    // A day of four: more than a page.
    rows.push(...[0, 1, 2, 3].map((i) => ({ id: 650 + i, service_id: HAIRCUT, status: 'pending', booking_date: '2026-07-20', time_from: `1${i}:00:00`, time_to: `1${i}:30:00`, created_at: '2026-06-02 09:00:00' })))
    await db.insert('booking_calendar_bookings', rows)
    try {
      const { pages } = await followChanges(t.app, copy, token, { query: 'per_page=3' })
      const days = new Map<string, number>()
      for (const page of pages) {
        const bookings = page.changes.flatMap((operation) => operation.op === 'replace' ? operation.bookings : [])
        if (!bookings.some((booking) => booking.booking_date === '2026-07-20')) expect(bookings.length).to.be.at.most(3)
        for (const booking of bookings) days.set(booking.booking_date, (days.get(booking.booking_date) ?? 0) + 1)
      }
      expect(days.get('2026-07-20')).to.equal(4)
      expect(pages.length).to.be.above(4)
      expectSameBookings(copy, await slotsNow(t.app, 'per_page=3'))
    } finally {
      await db.admin.query(`DELETE FROM ${table()} WHERE id >= 600 AND id < 700`)
    }
  })

  it('writes while a sync pages are not lost: the next delta carries them', async () => {
    const copy = new Map<number, Booking>()
    let written = 0
    const { token } = await followChanges(t.app, copy, undefined, {
      query: 'per_page=2',
      betweenPages: async (page) => {
        if (page === 1) {
          await db.insert('booking_calendar_bookings', [{ id: 701, service_id: HAIRCUT, status: 'booked', booking_date: '2026-01-05', time_from: null, time_to: null, created_at: '2026-01-01 09:00:00' }])
          await db.admin.query(`UPDATE ${table()} SET booking_date = '2026-02-02' WHERE id = 115`)
          written++
        }
      },
    })
    expect(written).to.equal(1)
    try {
      await followChanges(t.app, copy, token)
      expectSameBookings(copy, await slotsNow(t.app))
    } finally {
      await db.admin.query(`DELETE FROM ${table()} WHERE id = 701`)
      await db.admin.query(`UPDATE ${table()} SET booking_date = '2025-12-31' WHERE id = 115`)
    }
  })

  it('rest_invalid_param: a token of other filters, one not made here, one cut short; page, flat, format and filter_by', async () => {
    const res = await request(t.app).get(`${CHANGES_URL}?status=booked`).expect(200)
    const token = (res.body as ChangesPage).next
    const other = await request(t.app).get(`${CHANGES_URL}?status=pending&since=${encodeURIComponent(token)}`).expect(400)
    expect(other.body.code).to.equal('rest_invalid_param')
    expect(other.body.data.params.since).to.match(/other filters/)
    for (const since of ['nonsense', token.slice(0, -1), `x${token}`]) {
      const bad = await request(t.app).get(`${CHANGES_URL}?status=booked&since=${encodeURIComponent(since)}`).expect(400)
      expect(bad.body.data.params.since).to.match(/not a token this service made/)
    }
    const refused = await request(t.app).get(`${CHANGES_URL}?page=2&flat&format=csv&filter_by=created_date`).expect(400)
    expect(Object.keys(refused.body.data.params).sort()).to.deep.equal(['filter_by', 'flat', 'format', 'page'])
    const perPage = await request(t.app).get(`${CHANGES_URL}?per_page=1001`).expect(400)
    expect(perPage.body.data.params.per_page).to.match(/1 to 1000/)
  })

  it('410 rest_changes_token_expired when what a record shows changed: customer data now shown', async () => {
    const { token } = await followChanges(t.app, new Map(), undefined)
    const exposing = createTestApp(db, { env: { EXPOSE_CUSTOMER_DATA: 'true' } })
    try {
      const res = await request(exposing.app).get(`${CHANGES_URL}?since=${encodeURIComponent(token)}`).expect(410)
      expect(res.body).to.deep.include({ code: 'rest_changes_token_expired' })
      expect(res.body.data.status).to.equal(410)
      expect(res.body.message).to.match(/Start a new sync/)
      // Shown, the customer's cells are digested too, by MariaDB and by the worker alike: a quiet delta is empty, its token exact.
      const shown = await followChanges(exposing.app, new Map(), undefined, { query: 'per_page=7' })
      const quiet = await followChanges(exposing.app, new Map(), shown.token)
      expect(quiet.pages.flatMap((page) => page.changes)).to.deep.equal([])
      const read = readChangeToken(quiet.token)
      expect(read.ok && read.token.unverified).to.equal(undefined)
      expect(read.ok && read.token.periods!.size).to.be.above(3)
    } finally {
      await exposing.close()
    }
  })

  it('the zero date is a period of its own, "0000-00-00" to "0000-00-00"', async () => {
    const copy = new Map<number, Booking>()
    const { token } = await followChanges(t.app, copy, undefined)
    // As a legacy site in a non-strict sql_mode writes it (PLUGIN_TABLES.md).
    await db.admin.query(`SET SESSION sql_mode = ''`)
    await db.insert('booking_calendar_bookings', [{ id: 117, service_id: HAIRCUT, status: 'booked', booking_date: '0000-00-00', time_from: '09:00:00', time_to: '10:00:00', note: 'legacy zero day', created_at: '2026-11-21 15:00:00' }])
    await db.admin.query(`SET SESSION sql_mode = DEFAULT`)
    try {
      const { pages } = await followChanges(t.app, copy, token)
      const operations = pages.flatMap((page) => page.changes)
      expect(operations.map((operation) => operation.op === 'replace' && `${operation.start}..${operation.end}`)).to.deep.equal(['0000-00-00..0000-00-00'])
      expect(copy.get(117)?.booking_date).to.equal('0000-00-00')
      expectSameBookings(copy, await slotsNow(t.app))
    } finally {
      await db.admin.query(`DELETE FROM ${table()} WHERE id = 117`)
    }
  })

  it('the digests\' two halves each hold a booking by its id: one moved across the year between their two statements is counted once', async () => {
    // Each half is a snapshot of its own. Cut by day, a booking read at its old day by the first
    // half and moved to a day of the second before that half's statement would be counted twice
    // (decision 0038); cut by id, it is in one half at one day.
    const filter = { serviceId: HAIRCUT, bookingDate: { from: '2026-01-01', to: '2026-12-31' } }
    const kysely = t.handle.db
    expect(bookingsDigestHalves(kysely, filter)).to.deep.equal([0, 1])
    const halfOf = async (half: 0 | 1) => (await kysely.executeQuery(compileBookingsDayDigests(kysely, filter, { customer: false }, half))).rows
    const before = await readPeriodDigests(kysely, filter, { customer: false }, 'day')
    const rowsOf = (days: BookingsDayDigestRow[]) => days.reduce((n, day) => n + Number(day.row_count), 0)
    const bookings = rowsOf([...await halfOf(0), ...await halfOf(1)])
    expect(bookings).to.be.above(2)
    // 104 (an even id) from March to November, its half read first; 105 (odd) from October to March, its half read first.
    for (const move of [{ id: 104, from: '2026-03-29', to: '2026-11-30', first: 0 as const }, { id: 105, from: '2026-10-25', to: '2026-03-30', first: 1 as const }]) {
      const first = await halfOf(move.first)
      await db.admin.query(`UPDATE ${table()} SET booking_date = ? WHERE id = ?`, [move.to, move.id])
      try {
        const second = await halfOf(move.first === 0 ? 1 : 0)
        expect(rowsOf([...first, ...second]), `booking ${move.id} moved between the halves`).to.equal(bookings)
        // Read before the move by its own half, it is counted at its old day: the digests are those of the table before.
        expect(periodDigestsOfDays([...first, ...second], 'day')).to.deep.equal(before)
        expect(await readPeriodDigests(kysely, filter, { customer: false }, 'day')).to.not.deep.equal(before)
      } finally {
        await db.admin.query(`UPDATE ${table()} SET booking_date = ? WHERE id = ?`, [move.from, move.id])
      }
    }
  })

  it('applyPage, the test client, fails on a booking twice on one page (so the checks above can fail)', () => {
    const booking = { id: 1, booking_date: '2026-01-01' }
    expect(() => applyPage(new Map(), { changes: [{ op: 'upsert', id: 1, booking }, { op: 'delete', id: 1 }], more: false, next: '' })).to.throw(/twice/)
  })
})
