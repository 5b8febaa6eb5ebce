// summary/'s rows are read from the packets MariaDB sends (db/summary.ts,
// summaryRowPackets), not from mysql2's objects. Through the real mysql2 and
// MariaDB, every row must reach the sink with the values mysql2's objects give,
// for each shape of the statement, on the quirky site plus demo data.
import { expect } from 'chai'
import { createConnection } from 'mysql2'
import { createTestDatabase, testServer, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { HAIRCUT, loadSite, STRIZHKA } from '../fixtures/site.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { ROW_TAKEN, takeRowPackets } from '../../db/row-packets.ts'
import {
  addParsedSummaryRow, findSummaryRows, summaryRowPackets, type ParsedSummaryRow, type SummaryQuery, type SummaryRowSink,
} from '../../db/summary.ts'
import { compileSummaryQuery } from '../../server/tools.ts'

/** A sink that keeps each row it is given as one line, sorted (the statement has no order). */
function recording(): SummaryRowSink & { lines(): string[] } {
  const lines: string[] = []
  return {
    add: (...row) => { lines.push(JSON.stringify(row)) },
    lines: () => [...lines].sort(),
  }
}

const YEARS = { from: '2020-01-01', to: '2036-12-31' }
const YEARS_CREATED = { from: '2020-01-01 00:00:00', to: '2036-12-31 23:59:59' }
const SHAPES: Array<[string, SummaryQuery]> = [
  ['booking_date', { filter: { bookingDate: YEARS }, dateOf: 'booking_date', byStatus: false, blocking: ['pending', 'booked', 'completed'] }],
  ['booking_date, by status', { filter: { bookingDate: YEARS }, dateOf: 'booking_date', byStatus: true, blocking: ['pending', 'booked', 'completed'] }],
  ['created_date', { filter: { createdAt: YEARS_CREATED }, dateOf: 'created_date', byStatus: false, blocking: ['pending', 'booked', 'completed'] }],
  ['created_date, by status, one service', { filter: { createdAt: YEARS_CREATED, serviceId: HAIRCUT }, dateOf: 'created_date', byStatus: true, blocking: ['pending', 'booked', 'completed'] }],
]

describe('summary/\'s rows read from the database\'s bytes', function () {
  this.timeout(60_000)
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('summary_rows')
    await loadSite(db)
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: 3_000 })) await db.admin.query(statement)
    await db.admin.query(`SET SESSION sql_mode = ''`)
    // On days of their own, past the demo data: a status in UTF-8 beyond Latin-1, one with
    // spaces, a booking past midnight, one to 24:00, a whole-day booking beside a timed one, a zero created_at.
    const booking = (id: number, service_id: number, status: string, time_from: string | null, time_to: string | null, created_at = '2035-04-01 09:00:00') =>
      ({ id: 900_000 + id, service_id, status, booking_date: '2035-05-02', time_from, time_to, created_at })
    await db.insert('booking_calendar_bookings', [
      booking(1, STRIZHKA, 'подтверждено', '22:00:00', '02:00:00'),
      booking(2, HAIRCUT, ' Booked ', '10:00:00', '24:00:00'),
      booking(3, HAIRCUT, ' Booked ', null, null),
      booking(4, HAIRCUT, 'booked', null, null, '0000-00-00 00:00:00'),
      booking(5, STRIZHKA, 'booked', '09:00:00', '09:30:00', '2035-04-01 23:59:59'),
    ])
    t = createTestApp(db)
  })

  after(async () => {
    await t?.close()
    await db?.drop()
  })

  for (const [label, query] of SHAPES) {
    it(`${label}: each row with the values mysql2's objects give`, async () => {
      const fromPackets = recording()
      await findSummaryRows(t.handle.db, t.handle.pool.short, query, fromPackets)
      const compiled = compileSummaryQuery(t.handle.db, query)
      const [objects] = await db.admin.query(compiled.sql, [...compiled.parameters])
      const fromObjects = recording()
      for (const row of objects as ParsedSummaryRow[]) addParsedSummaryRow(fromObjects, row)
      expect(fromObjects.lines().length).to.be.greaterThan(50)
      expect(fromPackets.lines()).to.deep.equal(fromObjects.lines())
    })
  }

  it('the quirky rows: statuses as stored, times past midnight and to 24:00, whole-day bookings with their day', async () => {
    const byDay = recording()
    await findSummaryRows(t.handle.db, t.handle.pool.short, { filter: { bookingDate: { from: '2035-05-02', to: '2035-05-02' } }, dateOf: 'booking_date', byStatus: true, blocking: ['pending', 'booked', 'completed'] }, byDay)
    expect(byDay.lines().map((line) => JSON.parse(line) as unknown)).to.deep.equal([
      // 10:00 to 24:00 is 14 hours; the whole-day booking counts apart, with its day. The last two
      // are what blocks: ` Booked ` (a leading space) is no blocking status, as availability/'s `status IN` reads it.
      ['2035-05-02', HAIRCUT, ' Booked ', '2035-05-02', 2, 1, 14 * 3600, 0, 0],
      ['2035-05-02', HAIRCUT, 'booked', '2035-05-02', 1, 1, 0, 1, 0],
      ['2035-05-02', STRIZHKA, 'booked', null, 1, 0, 1800, 0, 1800],
      // 22:00 to 02:00 the next day: four hours.
      ['2035-05-02', STRIZHKA, 'подтверждено', null, 1, 0, 4 * 3600, 0, 0],
    ])
    const byCreation = recording()
    await findSummaryRows(t.handle.db, t.handle.pool.short, { filter: { createdAt: { from: '2035-04-01 00:00:00', to: '2035-04-01 23:59:59' } }, dateOf: 'created_date', byStatus: false, blocking: ['pending', 'booked', 'completed'] }, byCreation)
    expect(byCreation.lines().map((line) => JSON.parse(line) as unknown)).to.deep.equal([
      // The whole-day booking keeps its own booking date apart; the zero created_at is on no day.
      ['2035-04-01', HAIRCUT, null, '2035-05-02', 1, 1, 0, 0, 0],
      ['2035-04-01', HAIRCUT, null, null, 1, 0, 14 * 3600, 0, 0],
      ['2035-04-01', STRIZHKA, null, null, 2, 0, 4 * 3600 + 1800, 0, 1800],
    ])
  })

  it('mysql2 hands the statement\'s rows to the sink as bytes, and its result holds ROW_TAKEN for each', async () => {
    const server = testServer()
    const connection = createConnection({
      host: server.host, port: server.port, user: server.readerUser, password: server.readerPassword, database: db.name, dateStrings: true, charset: 'UTF8MB4_UNICODE_520_CI',
    })
    try {
      const compiled = compileSummaryQuery(t.handle.db, SHAPES[1]![1])
      const rows = recording()
      const items = await new Promise<unknown[]>((resolve, reject) => {
        const query = connection.query(compiled.sql, [...compiled.parameters], (error, result) => (error ? reject(error) : resolve(result as unknown[])))
        takeRowPackets(query, summaryRowPackets(rows))
      })
      expect(items.length).to.be.greaterThan(100)
      expect(items.every((item) => item === ROW_TAKEN)).to.equal(true)
      expect(rows.lines()).to.have.length(items.length)
    } finally {
      connection.end()
    }
  })
})
