// A range of booking dates across services is read through an index that
// starts with (booking_date, time_from), when the table has one
// (db/booking-indexes.ts), and so is the whole table in booking order; the
// whole table in service order (a grouped answer) through one that starts with
// (service_id, booking_date, time_from). The same answers, without MariaDB's
// table scan; and an index dropped under a running service costs no answer.
import { expect } from 'chai'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { bookingDateIndex, readBookingIndexes, serviceDateIndex } from '../../db/booking-indexes.ts'
import { sql } from 'kysely'
import { bookingsDigestHalves, periodOfDate, type PeriodKind } from '../../db/booking-queries.ts'
import { periodDays, periodKindOf, periodOfDay } from '../../server/domain/change-days.ts'
import { readPeriodDigests } from '../../db/changes.ts'
import { rowCellsCrcs, type RowCrcs } from '../../db/row-digest.ts'

const BOOKINGS = 5_000
const API = '/wp-json/booking-calendar/v1/'
const QUERIES = [
  'slots?status=pending,booked&start=2025-01-01&end=2025-12-31&flat',
  'slots?start=2024-03-01&end=2026-02-28',
  'slots?start=2025-06-01&flat&format=csv',
  'slots?end=2026-06-30&flat',
  'slots?status=Booked&start=2025-01-01&end=2025-03-31&flat&per_page=7&page=3',
  // The whole table: grouped (service order), flat and CSV (booking order), with statuses.
  'slots',
  'slots?flat',
  'slots?format=csv',
  'slots?status=booked,pending&flat',
  'slots?status=booked',
]
/** Both indexes, as the README recommends them. */
const ADD_INDEXES = 'ADD INDEX bc_api_date (booking_date, time_from, id, status), ADD INDEX bc_api_service_date (service_id, booking_date, time_from)'

describe('the booking-date index', function () {
  this.timeout(60_000)
  let db: TestDatabase
  let plain: TestApp
  let hinted: TestApp
  const table = () => `${db.prefix}booking_calendar_bookings`
  /** Rows MariaDB read by scanning tables, server-wide (the tests run one at a time). */
  const tableScanReads = async () => {
    const [rows] = await db.admin.query("SHOW GLOBAL STATUS LIKE 'Handler_read_rnd_next'")
    return Number((rows as Array<{ Value: string }>)[0]!.Value)
  }
  const answer = async (t: TestApp, query: string) => {
    const res = await request(t.app).get(API + query).buffer(true).expect(200)
    return { text: res.text, total: res.headers['x-wp-total'] }
  }

  before(async () => {
    db = await createTestDatabase('index_hints')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
    plain = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin' } })
    await readBookingIndexes(plain.handle.db, table())
    await db.admin.query(`ALTER TABLE \`${table()}\` ${ADD_INDEXES}`)
    hinted = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin' } })
    await readBookingIndexes(hinted.handle.db, table())
  })
  after(async () => {
    await plain.close()
    await hinted.close()
    await db.drop()
  })

  it('is found by its columns', () => {
    expect(bookingDateIndex(plain.handle.db)).to.equal(undefined)
    expect(serviceDateIndex(plain.handle.db)).to.equal(undefined)
    expect(bookingDateIndex(hinted.handle.db)).to.equal('bc_api_date')
    expect(serviceDateIndex(hinted.handle.db)).to.equal('bc_api_service_date')
  })

  for (const query of QUERIES) {
    it(`gives the answer the table scan gives: ${query}`, async () => {
      const expected = await answer(plain, query)
      expect(await answer(hinted, query)).to.deep.equal(expected)
      expect(expected.text.length).to.be.above(100)
    })
  }

  // changes/'s digest source (db/changes.ts): where the index finds the rows, the digests per
  // period are read in two halves side by side; their sums are the one statement's, to the
  // digit, so both services make the same token and see the same changes.
  for (const query of ['changes?start=2025-01-01&end=2025-12-31&per_page=1000', 'changes?status=booked&per_page=1000', 'changes?per_page=1000']) {
    it(`reads changes/'s digests in two halves where it has the index, and makes the token one statement makes: ${query}`, async () => {
      const filter = Object.fromEntries(new URLSearchParams(query.slice('changes?'.length)))
      const bookingDate = filter.start === undefined ? undefined : { from: filter.start, to: filter.end }
      expect(bookingsDigestHalves(hinted.handle.db, { bookingDate, statuses: filter.status?.split(',') })).to.deep.equal(bookingDate || !filter.status ? [0, 1] : [undefined])
      expect(bookingsDigestHalves(plain.handle.db, { bookingDate })).to.deep.equal([undefined])
      const lastToken = async (t: TestApp) => {
        let res = await request(t.app).get(API + query).expect(200)
        while (res.body.more) res = await request(t.app).get(`${API}${query}&since=${encodeURIComponent(res.body.next)}`).expect(200)
        return String(res.body.next)
      }
      const token = await lastToken(plain)
      expect(await lastToken(hinted)).to.equal(token)
      // A change in each half (of the days, and of the ids) is seen from the other service's token.
      const [changed] = await db.admin.query(`(SELECT id, booking_date FROM \`${table()}\` WHERE status = 'booked' AND booking_date BETWEEN '2025-03-01' AND '2025-03-31' AND id % 2 = 1 LIMIT 1)
        UNION ALL (SELECT id, booking_date FROM \`${table()}\` WHERE status = 'booked' AND booking_date BETWEEN '2025-10-01' AND '2025-10-31' AND id % 2 = 0 LIMIT 1)`) as unknown as [Array<{ id: number; booking_date: string }>]
      expect(changed).to.have.length(2)
      const ids = changed.map((booking) => booking.id)
      await db.admin.query(`UPDATE \`${table()}\` SET note = CONCAT(IFNULL(note, ''), '!') WHERE id IN (?)`, [ids])
      try {
        const delta = await request(hinted.app).get(`${API}${query}&since=${encodeURIComponent(token)}`).expect(200)
        const replaced = delta.body.changes.map((operation: { start: string; end: string }) => `${operation.start}..${operation.end}`)
        const kind = periodKindOf(filter.start, filter.end)
        expect(replaced).to.deep.equal(changed.map((booking) => periodDays(periodOfDay(booking.booking_date, kind), kind)).map(({ first, last }) => `${first}..${last}`))
      } finally {
        await db.admin.query(`UPDATE \`${table()}\` SET note = LEFT(note, CHAR_LENGTH(note) - 1) WHERE id IN (?)`, [ids])
      }
    })
  }

  it('groups every booking_date as periodOfDay does, in days, two days, four and months: the zero date, a day 00, each period\'s first and last day', async () => {
    // The same numbers for periods of a day, of two days, of four, and for months (a long feed's periods).
    const odd = ['0000-00-00', '2025-06-00', '2025-00-00', '2025-00-15', '2024-02-29', '2025-02-28', '2025-12-31', '2025-06-02', '2025-06-03', '2025-06-04', '2025-06-05', '2025-06-28', '2025-06-29', '2025-05-31']
    // The service's own expression, compiled as the service compiles it (of a column `d`).
    const periodOfD = (kind: PeriodKind) => periodOfDate(sql.ref('d'), kind).compile(hinted.handle.db).sql
    const [rows] = await db.admin.query(`SELECT d, ${periodOfD('day')} AS one, ${periodOfD('two-days')} AS two, ${periodOfD('four-days')} AS four, ${periodOfD('month')} AS month FROM (SELECT DISTINCT booking_date AS d FROM \`${table()}\` UNION SELECT CAST(? AS DATE) ${odd.slice(1).map(() => 'UNION SELECT CAST(? AS DATE)').join(' ')}) AS days`, odd) as unknown as [Array<{ d: string; one: number | string; two: number | string; four: number | string; month: number | string }>]
    expect(rows.length).to.be.above(300)
    for (const row of rows) expect([Number(row.one), Number(row.two), Number(row.four), Number(row.month)], row.d).to.deep.equal((['day', 'two-days', 'four-days', 'month'] as const).map((kind) => periodOfDay(row.d, kind)))
    expect(rows.map((row) => row.d)).to.include.members(odd)
  })

  it('reads each period\'s digest to the digit, as the rows\' two CRC-32s add up: by day and by id halves, one statement, odd days', async () => {
    // Odd rows a lenient SQL mode let in (PLUGIN_TABLES.md): the zero date, a day 00, a 30 February; removed after.
    const odd = ['0000-00-00', '2025-06-00', '2025-02-30', '2025-00-00']
    const [inserted] = await db.admin.query(`SET STATEMENT sql_mode = '' FOR INSERT INTO \`${table()}\` (service_id, status, booking_date, time_from, time_to, customer_name, customer_email, customer_phone, note, created_at)
      VALUES ${odd.map(() => "(1, 'booked', ?, '24:00:00', NULL, '', '', '', 'Ünïcode ✓', '0000-00-00 00:00:00')").join(', ')}`, odd) as unknown as [{ insertId: number }]
    try {
      const [rows] = await db.admin.query(`SELECT CAST(id AS CHAR) AS id, CAST(service_id AS CHAR) AS service_id, status, CAST(booking_date AS CHAR) AS booking_date,
        CAST(time_from AS CHAR) AS time_from, CAST(time_to AS CHAR) AS time_to, note, CAST(created_at AS CHAR) AS created_at FROM \`${table()}\``) as unknown as [Array<Record<string, string | null>>]
      const expected = (kind: PeriodKind, from?: string, to?: string) => {
        const sums = new Map<number, { rows: number; crc: bigint; reversed: bigint }>()
        const crcs: RowCrcs = { crc: 0, reversed: 0 }
        for (const row of rows.filter((r) => (from === undefined || r.booking_date! >= from) && (to === undefined || r.booking_date! <= to))) {
          rowCellsCrcs(['id', 'service_id', 'status', 'booking_date', 'time_from', 'time_to', 'note', 'created_at'].map((name) => row[name]!), crcs)
          const period = periodOfDay(row.booking_date!, kind)
          const sum = sums.get(period) ?? { rows: 0, crc: 0n, reversed: 0n }
          sums.set(period, { rows: sum.rows + 1, crc: sum.crc + BigInt(crcs.crc), reversed: sum.reversed + BigInt(crcs.reversed) })
        }
        return new Map([...sums].map(([period, sum]) => [period, `${sum.rows}:${sum.crc}:${sum.reversed}`]))
      }
      // A year (days; two halves of its days), two years (two days), four (four days), from the zero date on, and the whole table (months, halves by id).
      for (const [from, to] of [['2025-01-01', '2025-12-31'], ['2024-03-01', '2026-02-28'], ['2023-01-01', '2026-12-31'], ['0000-00-00', '2025-06-30'], [undefined, undefined]] as const) {
        const kind = periodKindOf(from, to)
        const filter = { bookingDate: from === undefined ? undefined : { from, to } }
        const want = expected(kind, from, to)
        expect(want.size, `${from}..${to}`).to.be.above(5)
        for (const app of [plain, hinted]) expect(await readPeriodDigests(app.handle.db, filter, { customer: false }, kind), `${from}..${to}`).to.deep.equal(want)
      }
    } finally {
      await db.admin.query(`DELETE FROM \`${table()}\` WHERE id >= ?`, [inserted.insertId])
    }
  })

  /** The hinted service answers `query` without scanning the table; the service that knows no index scans it. */
  const readsWithoutScan = async (query: string) => {
    let before = await tableScanReads()
    await answer(hinted, query)
    expect(await tableScanReads() - before).to.be.below(BOOKINGS / 10)
    before = await tableScanReads()
    await answer(plain, query)
    expect(await tableScanReads() - before).to.be.at.least(BOOKINGS)
  }

  it('reads a year of bookings without scanning the table, where the service without the index scans it', async () => {
    await readsWithoutScan(QUERIES[0]!)
  })

  for (const query of ['slots', 'slots?format=csv']) {
    it(`reads the whole table in the answer's order through its index, without scanning it: ${query}`, async () => {
      // The rows are not read by scanning: fewer scanned rows than the table holds.
      let before = await tableScanReads()
      await answer(hinted, query)
      const hintedScans = await tableScanReads() - before
      expect(hintedScans).to.be.below(BOOKINGS * 1.1)
      before = await tableScanReads()
      await answer(plain, query)
      expect(await tableScanReads() - before).to.be.at.least(hintedScans + BOOKINGS)
    })
  }

  it('answers the whole table grouped when the service-date index is dropped under it, then names no index', async () => {
    const expected = await answer(plain, 'slots')
    await db.admin.query(`ALTER TABLE \`${table()}\` DROP INDEX bc_api_service_date`)
    try {
      expect(await answer(hinted, 'slots')).to.deep.equal(expected)
      expect(serviceDateIndex(hinted.handle.db)).to.equal(undefined)
      expect(bookingDateIndex(hinted.handle.db)).to.equal(undefined)
    } finally {
      await db.admin.query(`ALTER TABLE \`${table()}\` ADD INDEX IF NOT EXISTS bc_api_service_date (service_id, booking_date, time_from)`)
      await readBookingIndexes(hinted.handle.db, table())
    }
    expect(serviceDateIndex(hinted.handle.db)).to.equal('bc_api_service_date')
  })

  it('answers a conditional request whose digest names a dropped index: 304 to its tag, then stops naming it', async () => {
    const year = await request(hinted.app).get(API + QUERIES[0]!).buffer(true).expect(200)
    const tag = String(year.headers.etag)
    expect(tag).to.match(/^W\//)
    await db.admin.query(`ALTER TABLE \`${table()}\` DROP INDEX bc_api_date`)
    try {
      // The digest (decision 0034) is read again without the hint, in the same snapshot.
      const again = await request(hinted.app).get(API + QUERIES[0]!).set('If-None-Match', tag)
      expect(again.status).to.equal(304)
      expect(again.headers.etag).to.equal(tag)
      expect(bookingDateIndex(hinted.handle.db)).to.equal(undefined)
    } finally {
      await db.admin.query(`ALTER TABLE \`${table()}\` ADD INDEX IF NOT EXISTS bc_api_date (booking_date, time_from, id, status)`)
      await readBookingIndexes(hinted.handle.db, table())
    }
  })

  it('answers whole when the index is dropped under it, then stops naming it', async () => {
    const expected = await answer(plain, QUERIES[0]!)
    const expectedSmall = await answer(plain, 'slots?status=booked&start=2025-01-01&end=2025-01-31&flat')
    await db.admin.query(`ALTER TABLE \`${table()}\` DROP INDEX bc_api_date`)
    try {
      expect(await answer(hinted, QUERIES[0]!)).to.deep.equal(expected) // streamed
      await db.admin.query(`ALTER TABLE \`${table()}\` ADD INDEX bc_api_date (booking_date, time_from, id, status)`)
      await readBookingIndexes(hinted.handle.db, table())
      await db.admin.query(`ALTER TABLE \`${table()}\` DROP INDEX bc_api_date`)
      expect(await answer(hinted, 'slots?status=booked&start=2025-01-01&end=2025-01-31&flat')).to.deep.equal(expectedSmall) // one statement
      expect(bookingDateIndex(hinted.handle.db)).to.equal(undefined)
    } finally {
      await db.admin.query(`ALTER TABLE \`${table()}\` ADD INDEX IF NOT EXISTS bc_api_date (booking_date, time_from, id, status)`)
    }
  })
})
