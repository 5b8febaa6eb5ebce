// Customer data that is not shown is not read either (db/booking-queries.ts,
// BookingColumns): no statement of the service names a customer column unless
// EXPOSE_CUSTOMER_DATA=true. Seen in MariaDB's own general log.
import { expect } from 'chai'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { readerStatementsDuring } from '../support/general-log.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { demoDataSql, FIRST_SERVICE_ID } from '../../db/demo-data.ts'

const API = '/wp-json/booking-calendar/v1/'
// The three ways slots/ reads bookings: a narrow answer in one statement, a page, a stream.
const QUERIES = [`slots?service=${FIRST_SERVICE_ID}&start=2025-03-01&end=2025-03-31`, 'slots?per_page=5&page=2', 'slots?flat']

describe('customer columns', function () {
  this.timeout(60_000)
  let db: TestDatabase

  /** The statements the reader account sent while `run` ran that read bookings, from the general log. */
  const statementsDuring = (run: () => Promise<void>) => readerStatementsDuring(db, run, 'booking_calendar_bookings')

  const readAll = (t: TestApp) => async () => {
    for (const query of QUERIES) await request(t.app).get(API + query).expect(200)
  }

  before(async () => {
    db = await createTestDatabase('customer_reads')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: 2_000 })) await db.admin.query(statement)
  })
  after(async () => {
    await db.drop()
  })

  it('are never read while customer data is hidden', async () => {
    const t = createTestApp(db)
    try {
      const statements = await statementsDuring(readAll(t))
      expect(statements.length).to.be.at.least(QUERIES.length)
      expect(statements.filter((text) => /customer_(name|email|phone)`/.test(text) && !/'' as `customer_/.test(text))).to.deep.equal([])
      const res = await request(t.app).get(API + QUERIES[2]).expect(200)
      expect(res.body.booked_slots[0].customer).to.equal(null)
    } finally {
      await t.close()
    }
  })

  it('are read for every kind of answer when EXPOSE_CUSTOMER_DATA=true', async () => {
    const t = createTestApp(db, { env: { EXPOSE_CUSTOMER_DATA: 'true' } })
    try {
      const statements = await statementsDuring(readAll(t))
      const reading = statements.filter((text) => /`booking_calendar_bookings`\.`customer_email`|_booking_calendar_bookings`\.`customer_email`/.test(text))
      expect(reading.length).to.be.at.least(QUERIES.length)
      const res = await request(t.app).get(API + QUERIES[2]).expect(200)
      expect(res.body.booked_slots[0].customer.email).to.be.a('string').and.not.equal('')
    } finally {
      await t.close()
    }
  })
})
