// A feed of 100,000 bookings streams (API.md, "Calendar feeds: format=ics":
// "Large feeds stream"): the same cursor and back-pressure as the
// JSON and CSV bodies, so a calendar app that reads slowly holds a database
// cursor, not the feed in memory.
import { expect } from 'chai'
import { connect, type AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { dechunkBody } from '../support/chunked.ts'
import { demoDataSql } from '../../db/demo-data.ts'

const BOOKINGS = 100_000
// The demo data spreads over three years from 2025-01-01: one range holds them all.
const FEED = '/wp-json/booking-calendar/v1/slots?format=ics&start=2025-01-01&end=2028-01-31'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('streaming calendar feeds', function () {
  this.timeout(120_000)
  let db: TestDatabase
  let t: TestApp
  let server: Server

  before(async () => {
    db = await createTestDatabase('ics_streaming')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
    // A short QUERY_TIMEOUT_MS: reading slowly must not count against it.
    // Holding off (HOLD_*=0): back-pressure reaches the cursor, which these tests watch; held answers: held-answers.test.ts.
    t = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin', QUERY_TIMEOUT_MS: '500', MAX_RANGE_DAYS: '1200', HOLD_MEMORY_BYTES: '0', HOLD_DISK_BYTES: '0' } })
    server = t.app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await t.close()
    await db.drop()
  })

  it('a feed of 100,000 bookings: the query stays open while the client does not read, little is sent ahead, and the whole feed arrives when it reads again', async () => {
    const { port } = server.address() as AddressInfo
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    await new Promise<void>((resolve) => {
      socket.once('data', (chunk) => {
        chunks.push(chunk)
        socket.pause()
        resolve()
      })
      socket.write(`GET ${FEED} HTTP/1.1\r\nHost: feeds.example.com\r\nConnection: close\r\n\r\n`)
    })
    await sleep(1500)
    // About 35 MB of iCalendar are owed; socket buffers hold a few. The answer's
    // snapshot must still be open: its statement may still be sending rows, or may
    // have sent its last into the two sockets' buffers (up to about 10 MB once the
    // kernel has grown them, near the whole result), unread by the service.
    expect(await db.readerTransactions(), 'the snapshot is still open').to.have.length(1)
    expect(await db.readerQueries(), 'no other statement runs').to.have.length.at.most(1)
    expect(chunks.reduce((n, c) => n + c.length, 0)).to.be.below(1_000_000)

    await new Promise<void>((resolve) => {
      socket.on('data', (chunk) => chunks.push(chunk))
      socket.on('close', () => resolve())
      socket.resume()
    })
    const response = Buffer.concat(chunks)
    const headEnd = response.indexOf('\r\n\r\n')
    const head = response.subarray(0, headEnd).toString('latin1')
    expect(head.startsWith('HTTP/1.1 200 OK')).to.equal(true)
    expect(head).to.match(/\r\ncontent-type: text\/calendar; charset=utf-8\r\n/i)
    expect(head).to.match(/\r\ntransfer-encoding: chunked(\r\n|$)/i)
    const body = dechunkBody(response.subarray(headEnd + 4))
    expect(body.length).to.be.above(20_000_000)
    const text = body.toString('utf8')
    expect(text.startsWith('BEGIN:VCALENDAR\r\n')).to.equal(true)
    expect(text.endsWith('END:VEVENT\r\nEND:VCALENDAR\r\n')).to.equal(true)
    expect(text.match(/\r\nBEGIN:VEVENT\r\n/g)).to.have.length(BOOKINGS)
    const uids = new Set(text.match(/\r\nUID:booking-\d+@feeds\.example\.com\r\n/g))
    expect(uids.size).to.equal(BOOKINGS)
    // Every line at most 75 octets, over the whole feed.
    let from = 0
    let longest = 0
    while (from < body.length) {
      const at = body.indexOf('\r\n', from)
      longest = Math.max(longest, at - from)
      from = at + 2
    }
    expect(longest).to.be.at.most(75)
  })

  it('releases the connection when a calendar app hangs up mid-feed', async () => {
    const { port } = server.address() as AddressInfo
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => {
      socket.once('data', () => {
        socket.pause()
        resolve()
      })
      socket.write(`GET ${FEED} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`)
    })
    await sleep(300)
    // Its statement may have sent its last rows into the sockets' buffers already
    // (see above); the snapshot stays open until the answer is done or given up.
    expect(await db.readerTransactions(), 'the snapshot is still open').to.have.length(1)
    socket.destroy()
    await db.untilReaderIdle(10_000)
    expect(await db.readerQueries(), 'the query ended after the client hung up').to.deep.equal([])
    expect(await db.readerTransactions(), 'the snapshot ended after the client hung up').to.deep.equal([])
  })
})
