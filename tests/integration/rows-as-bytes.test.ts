// A streamed slots/ answer is written from the bytes MariaDB sends
// (db/row-packets.ts, server/http/booking-list.ts). Through the real mysql2 and
// MariaDB, the rows must reach the list as bytes, and the answers must be the
// ones the record's way gives: `_fields` naming every field takes that way.
// A streamed answer, of a period or of everything, is counted, digested for
// its ETag, then read: the statements each makes are counted below.
import { expect } from 'chai'
import { createConnection, type Connection } from 'mysql2'
import request from '../support/request.ts'
import { createTestDatabase, testServer, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { HAIRCUT, loadSite, STRIZHKA, TRICKY_NOTE } from '../fixtures/site.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { BOOKING_ROW_COLUMNS } from '../../db/booking-queries.ts'
import { ROW_TAKEN, takeRowPackets, type ResultColumn } from '../../db/row-packets.ts'
import { BOOKING_FIELDS } from '../../server/domain/booking-record.ts'
import { CSV_FIELD_NAMES } from '../../server/http/booking-text.ts'
import { SMALL_ANSWER_ROWS } from '../../server/domain/slots.ts'

const API = '/wp-json/booking-calendar/v1/'
const EVERY_FIELD = BOOKING_FIELDS.join(',')
const EVERY_COLUMN = CSV_FIELD_NAMES.filter((name) => name !== 'customer').join(',')
/** Demo bookings: a period of two years holds a few thousand, all years more than 10,000. */
const BOOKINGS = 12_000

describe('streamed answers written from the database\'s bytes', function () {
  this.timeout(60_000)
  let db: TestDatabase
  let hidden: TestApp
  let shown: TestApp

  before(async () => {
    db = await createTestDatabase('rows_as_bytes')
    await loadSite(db)
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
    // Quirks the fast way must leave to the record's way, or write the same: a
    // zero created_at, a time of 10:75:00, control characters, a formula-like phone.
    await db.admin.query(`SET SESSION sql_mode = ''`)
    await db.insert('booking_calendar_bookings', [
      { service_id: 12, status: ' Booked ', booking_date: '2026-03-29', time_from: '02:30:00', time_to: '03:30:00', customer_name: '=SUM(A1)', customer_email: 'a,b@example.com', customer_phone: '-1', note: 'tab\there\u0001', created_at: '0000-00-00 00:00:00' },
      { service_id: 12, status: 'pending', booking_date: '2026-05-02', time_from: '10:75:00', time_to: '24:00:00', customer_name: 'Zoë "Z"', customer_email: 'z@example.com', customer_phone: '', note: TRICKY_NOTE, created_at: '2026-04-01 09:00:00' },
    ])
    hidden = createTestApp(db)
    shown = createTestApp(db, { env: { EXPOSE_CUSTOMER_DATA: 'true' } })
  })

  after(async () => {
    await hidden?.close()
    await shown?.close()
    await db?.drop()
  })

  for (const [label, query, recordWay] of [
    ['flat JSON', 'slots?flat', `slots?flat&_fields=${EVERY_FIELD}`],
    ['grouped JSON', 'slots', `slots?_fields=${EVERY_FIELD}`],
    ['CSV', 'slots?format=csv', `slots?format=csv&_fields=${EVERY_COLUMN}`],
    ['a year of two statuses', 'slots?status=pending,booked&start=2025-01-01&end=2026-12-31&flat', `slots?status=pending,booked&start=2025-01-01&end=2026-12-31&flat&_fields=${EVERY_FIELD}`],
  ] as const) {
    it(`${label}: the same bytes as the record's way, customer data hidden and shown`, async () => {
      for (const app of [hidden, shown]) {
        const fast = await request(app.app).get(API + query).buffer(true).expect(200)
        const records = await request(app.app).get(API + recordWay).buffer(true).expect(200)
        expect(Number(fast.headers['x-wp-total'])).to.be.greaterThan(500)
        expect(fast.headers['x-wp-total']).to.equal(records.headers['x-wp-total'])
        expect(fast.text).to.equal(records.text)
        const zoe = query.includes('csv') ? 'Zoë ""Z""' : 'Zoë \\"Z\\"'
        if (app === shown) expect(fast.text).to.contain(zoe)
        else expect(fast.text).not.to.contain('Zoë')
      }
    })
  }

  // A narrow answer (a service, or a period of up to two months) is one
  // statement joined to the services' posts, read whole before it is sent.
  const SPRING = 'start=2026-03-01&end=2026-05-31'
  for (const [label, query] of [
    ['a service by ID, grouped JSON', `slots?service=${HAIRCUT}&${SPRING}`],
    ['a service by ID, flat JSON', `slots?service=${HAIRCUT}&${SPRING}&flat`],
    ['a service by ID, CSV', `slots?service=${HAIRCUT}&${SPRING}&format=csv`],
    ['a service with a percent-encoded slug', `slots?service=${STRIZHKA}&${SPRING}`],
    ['a service by slug', `slots?service=haircut&${SPRING}&status=pending,booked&flat`],
    ['two weeks of every service', 'slots?start=2026-03-22&end=2026-04-04'],
  ] as const) {
    it(`a narrow answer, ${label}: the same bytes as the record's way, customer data hidden and shown`, async () => {
      const recordWay = `${query}&_fields=${query.includes('csv') ? EVERY_COLUMN : EVERY_FIELD}`
      for (const app of [hidden, shown]) {
        const fast = await request(app.app).get(API + query).buffer(true).expect(200)
        const records = await request(app.app).get(API + recordWay).buffer(true).expect(200)
        expect(Number(fast.headers['x-wp-total'])).to.be.within(5, SMALL_ANSWER_ROWS)
        expect(fast.headers['x-wp-total']).to.equal(records.headers['x-wp-total'])
        expect(fast.text).to.equal(records.text)
        expect(fast.text).to.match(query.includes('csv') ? /,haircut,/ : query.includes(`service=${STRIZHKA}`) ? /"service_slug":"стрижка"/ : /"service_slug":"haircut"/)
      }
    })
  }

  it('a narrow answer of a service given by ID is one statement, tagged by what it holds; by slug, two', async () => {
    const selects = async () => {
      const [rows] = await db.admin.query("SHOW GLOBAL STATUS LIKE 'Com_select'")
      return Number((rows as Array<{ Value: string }>)[0]!.Value)
    }
    for (const [query, statements] of [[`slots?service=${HAIRCUT}&${SPRING}`, 1], [`slots?service=haircut&${SPRING}`, 2]] as const) {
      const before = await selects()
      const res = await request(hidden.app).get(API + query).buffer(true).expect(200)
      expect(await selects() - before, query).to.equal(statements)
      expect(res.headers.etag, query).to.match(/^W\/"v3-/)
      const body = JSON.parse(res.text) as { booked_slots: Record<string, unknown[]>; total: number }
      // One service: one group, holding every booking of the total.
      expect(Object.values(body.booked_slots).map((group) => group.length)).to.deep.equal([body.total])
      expect(Number(res.headers['x-wp-total'])).to.equal(body.total)
    }
  })

  it('a streamed answer reads its rows once: counted, then its slugs and its rows (hashed as read for its ETag); each total is the rows sent', async () => {
    const selects = async () => {
      const [rows] = await db.admin.query("SHOW GLOBAL STATUS LIKE 'Com_select'")
      return Number((rows as Array<{ Value: string }>)[0]!.Value)
    }
    const statementsOf = async (query: string) => {
      const before = await selects()
      const res = await request(hidden.app).get(API + query).buffer(true).expect(200)
      const body = JSON.parse(res.text) as { booked_slots: unknown[]; total: number }
      expect(Number(res.headers['x-wp-total'])).to.equal(body.booked_slots.length)
      expect(body.total).to.equal(body.booked_slots.length)
      return { selects: await selects() - before, total: body.total }
    }
    const small = await statementsOf('slots?status=pending,booked&start=2025-01-01&end=2026-12-31&flat')
    expect(small.total).to.be.within(500, 10_000)
    expect(small.selects, 'the count, the slugs and the rows').to.equal(3)
    const large = await statementsOf('slots?start=2000-01-01&end=2099-12-31&flat')
    expect(large.total).to.be.greaterThan(10_000)
    expect(large.selects, 'the count, the slugs and the rows').to.equal(3)
    const everything = await statementsOf('slots?flat')
    expect(everything.total).to.be.at.least(large.total)
    expect(everything.selects, 'the count, the slugs and the rows').to.equal(3)
  })

  it('mysql2 hands the rows of a bookings query to the sink as bytes, and its stream holds ROW_TAKEN for each', async () => {
    const server = testServer()
    const connection: Connection = createConnection({
      host: server.host, port: server.port, user: server.readerUser, password: server.readerPassword, database: db.name, dateStrings: true, charset: 'UTF8MB4_UNICODE_520_CI',
    })
    try {
      const columns: ResultColumn[][] = []
      const rows: string[] = []
      const query = connection.query(`SELECT ${BOOKING_ROW_COLUMNS.slice(0, -1).join(', ')}, NULL AS service_post_name FROM ${db.prefix}booking_calendar_bookings ORDER BY id LIMIT 3`)
      takeRowPackets(query, {
        accepts: (given) => {
          columns.push([...given])
          return true
        },
        row: (bytes, start, end) => { rows.push(bytes.subarray(start, end).toString('latin1')) },
      })
      const items: unknown[] = []
      await new Promise((resolve, reject) => query.stream().on('data', (item: unknown) => items.push(item)).on('end', resolve).on('error', reject))
      expect(columns).to.have.length(1)
      expect(columns[0]!.map((column) => column.name)).to.deep.equal([...BOOKING_ROW_COLUMNS])
      expect(columns[0]![2]!.encoding).to.equal('utf8')
      expect(items).to.deep.equal([ROW_TAKEN, ROW_TAKEN, ROW_TAKEN])
      expect(rows).to.have.length(3)
      // The first cell of the first row: its ID, length-coded.
      const [firstId] = (await db.admin.query(`SELECT MIN(id) AS id FROM ${db.prefix}booking_calendar_bookings`))[0] as Array<{ id: number }>
      expect(rows[0]!.slice(1, 1 + rows[0]!.charCodeAt(0))).to.equal(String(firstId!.id))
    } finally {
      connection.end()
    }
  })

  it('a query keeps no property of its own for its sink, and the next query without one gives objects', async () => {
    const server = testServer()
    const connection: Connection = createConnection({
      host: server.host, port: server.port, user: server.readerUser, password: server.readerPassword, database: db.name, dateStrings: true,
    })
    try {
      const taken = connection.query(`SELECT ${BOOKING_ROW_COLUMNS.slice(0, -1).join(', ')}, NULL AS service_post_name FROM ${db.prefix}booking_calendar_bookings ORDER BY id LIMIT 2`)
      let rows = 0
      takeRowPackets(taken, { accepts: () => true, row: () => { rows++ } })
      const items: unknown[] = []
      await new Promise((resolve, reject) => taken.stream().on('data', (item: unknown) => items.push(item)).on('end', resolve).on('error', reject))
      expect(items).to.deep.equal([ROW_TAKEN, ROW_TAKEN])
      expect(rows).to.equal(2)
      // An accessor defined on each query gave each a map of its own, which kept
      // much of the young generation alive through scavenges (db/row-packets.ts).
      expect(Object.getOwnPropertyDescriptor(taken, '_rowParser')).to.equal(undefined)
      const plain = await new Promise<unknown[]>((resolve, reject) => {
        connection.query(`SELECT id FROM ${db.prefix}booking_calendar_bookings ORDER BY id LIMIT 2`, (error, result) => (error ? reject(error) : resolve(result as unknown[])))
      })
      expect(plain).to.have.length(2)
      expect(plain[0]).to.have.property('id').that.is.a('number')
    } finally {
      connection.end()
    }
  })

  it('a sink that refuses the columns gets no row, and mysql2 gives its objects as usual', async () => {
    const server = testServer()
    const connection: Connection = createConnection({
      host: server.host, port: server.port, user: server.readerUser, password: server.readerPassword, database: db.name, dateStrings: true,
    })
    try {
      const query = connection.query(`SELECT id FROM ${db.prefix}booking_calendar_bookings ORDER BY id LIMIT 2`)
      let rows = 0
      takeRowPackets(query, { accepts: () => false, row: () => { rows++ } })
      const items: unknown[] = []
      await new Promise((resolve, reject) => query.stream().on('data', (item: unknown) => items.push(item)).on('end', resolve).on('error', reject))
      expect(rows).to.equal(0)
      expect(items).to.have.length(2)
      expect(items[0]).to.have.property('id').that.is.a('number')
    } finally {
      connection.end()
    }
  })
})
