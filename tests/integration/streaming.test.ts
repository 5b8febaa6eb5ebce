// Large answers stream (STYLE.md, "How a route flows"): rows flow from
// the database cursor to the socket. By default what a client has not read is
// held for it (memory, then a file: held-answers.test.ts) and the snapshot
// ends when the rows are out; with holding off (HOLD_MEMORY_BYTES=0 and
// HOLD_DISK_BYTES=0) back-pressure reaches the cursor, and a client that
// stops reading leaves the query waiting on the server, not finished into
// memory. A client that hangs up releases the connection either way.
import { expect } from 'chai'
import { connect, type AddressInfo } from 'node:net'
import { get as httpGet, type Server } from 'node:http'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { demoDataSql } from '../../db/demo-data.ts'

const BOOKINGS = 100_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('streaming', function () {
  this.timeout(60_000)
  let db: TestDatabase
  let t: TestApp
  let server: Server
  /** The same service with holding off: back-pressure from the socket reaches the cursor. */
  let unheld: TestApp
  let unheldServer: Server

  before(async () => {
    db = await createTestDatabase('streaming')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
    // A short QUERY_TIMEOUT_MS: reading slowly must not count against it.
    t = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin', QUERY_TIMEOUT_MS: '500' } })
    server = t.app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    unheld = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin', QUERY_TIMEOUT_MS: '500', HOLD_MEMORY_BYTES: '0', HOLD_DISK_BYTES: '0' } })
    unheldServer = unheld.app.listen(0, '127.0.0.1')
    await new Promise((resolve) => unheldServer.once('listening', resolve))
  })
  after(async () => {
    for (const listening of [server, unheldServer]) {
      listening.closeAllConnections()
      await new Promise((resolve) => listening.close(resolve))
    }
    await unheld.close()
    await t.close()
    await db.drop()
  })

  it('sends every booking of the call without parameters, whole and in order', async () => {
    const res = await request(t.app).get('/wp-json/booking-calendar/v1/slots?flat&_fields=id,booking_date').expect(200)
    expect(res.body.total).to.equal(BOOKINGS)
    expect(res.body.booked_slots).to.have.length(BOOKINGS)
    const sorted = res.body.booked_slots.every((b: { booking_date: string }, i: number, all: { booking_date: string }[]) =>
      i === 0 || all[i - 1]!.booking_date <= b.booking_date)
    expect(sorted).to.equal(true)
  })

  it('sends CSV the same way: every booking, one line each, after the header; tagged, so held whole with its Content-Length, and streamed untagged past ETAG_MAX_ROWS', async () => {
    const res = await request(t.app).get('/wp-json/booking-calendar/v1/slots?format=csv&_fields=id,note').buffer(true).expect(200)
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8')
    expect(res.headers['transfer-encoding']).to.equal(undefined)
    expect(Number(res.headers['content-length'])).to.equal(Buffer.byteLength(res.text))
    expect(res.headers.etag).to.match(/^W\//)
    const untagged = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin', ETAG_MAX_ROWS: '1000' } })
    try {
      const streamed = await request(untagged.app).get('/wp-json/booking-calendar/v1/slots?format=csv&_fields=id,note').buffer(true).expect(200)
      expect([streamed.headers['transfer-encoding'], streamed.headers.etag]).to.deep.equal(['chunked', undefined])
      expect(streamed.text).to.equal(res.text)
    } finally {
      await untagged.close()
    }
    const lines = res.text.split('\r\n')
    expect(lines[0]).to.equal('id,note')
    expect(lines.at(-1)).to.equal('')
    // A note may hold a line break inside quotes; ids start every record line.
    expect(lines.filter((line) => /^\d+,/.test(line) || /^\d+$/.test(line))).to.have.length(BOOKINGS)
  })

  it('a narrow filter that matches more than 1000 bookings still gets every one of them, with the right total', async () => {
    const res = await request(t.app).get('/wp-json/booking-calendar/v1/slots?service=10&flat&_fields=id,service_id').expect(200)
    expect(res.body.total).to.be.above(1000)
    expect(res.body.booked_slots).to.have.length(res.body.total)
    expect(res.headers['x-wp-total']).to.equal(String(res.body.total))
    const [rows] = await db.admin.query('SELECT COUNT(*) AS n FROM wp_booking_calendar_bookings WHERE service_id = 10')
    expect(res.body.total).to.equal(Number((rows as { n: number }[])[0]!.n))
  })

  it('a typical report goes out whole, with a Content-Length, its body exactly JSON.stringify of itself', async () => {
    const url = '/wp-json/booking-calendar/v1/slots?service=10&start=2026-03-01&end=2026-03-31'
    const res = await request(t.app).get(url).expect(200)
    expect(res.headers['transfer-encoding']).to.equal(undefined)
    expect(res.headers['content-length']).to.equal(String(Buffer.byteLength(res.text)))
    expect(res.body.total).to.be.above(0)
    expect(JSON.stringify(res.body)).to.equal(res.text)
  })

  it('answers streamed at once, whose chunks share buffers used again, are each the same bytes as alone', async () => {
    // Each chunk's buffer goes back to a pool once the socket has written it
    // (server/http/stream-body.ts): given back too early, it would carry another answer's bytes.
    const urls = [
      'slots?flat',
      'slots?format=csv',
      'slots?start=2027-01-01&end=2027-06-30',
      'slots?start=2025-04-01&end=2025-12-31&flat&status=booked,pending',
    ].map((path) => `/wp-json/booking-calendar/v1/${path}`)
    const alone: string[] = []
    for (const url of urls) alone.push((await request(t.app).get(url).buffer(true).expect(200)).text)
    for (const text of alone) expect(Buffer.byteLength(text)).to.be.above(1_000_000)
    // Readers that first read nothing, then read slowly: the sockets' buffers
    // fill, and each answer's socket holds a chunk it has not written yet.
    const together = await Promise.all(urls.map((url) => readSlowly(url)))
    together.forEach((text, i) => expect(text === alone[i], `${urls[i]} read slowly at once`).to.equal(true))
  })

  /** The body of a GET, read a piece at a time with a pause after each. */
  function readSlowly(url: string): Promise<string> {
    const { port } = server.address() as AddressInfo
    return new Promise((resolve, reject) => {
      httpGet({ host: '127.0.0.1', port, path: url }, (res) => {
        const pieces: Buffer[] = []
        res.pause()
        setTimeout(() => res.resume(), 300)
        res.on('data', (piece: Buffer) => {
          pieces.push(piece)
          res.pause()
          setTimeout(() => res.resume(), 2)
        })
        res.on('end', () => resolve(Buffer.concat(pieces).toString('utf8')))
        res.on('error', reject)
      }).on('error', reject)
    })
  }

  /** Sends the call without parameters and stops reading after the first chunk. */
  async function startSlowClient(to = server) {
    const { port } = to.address() as AddressInfo
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    await new Promise<void>((resolve) => {
      socket.once('data', (chunk) => {
        chunks.push(chunk)
        socket.pause()
        resolve()
      })
      socket.write('GET /wp-json/booking-calendar/v1/slots HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n')
    })
    return { socket, chunks }
  }

  it('by default the snapshot ends while a client does not read (the answer held for it), and the answer arrives whole when it reads again, long past QUERY_TIMEOUT_MS', async () => {
    const { socket, chunks } = await startSlowClient()
    await db.untilReaderIdle(20_000)
    expect(chunks.reduce((n, c) => n + c.length, 0)).to.be.below(1_000_000)
    await new Promise<void>((resolve) => {
      socket.on('data', (chunk) => chunks.push(chunk))
      socket.on('close', () => resolve())
      socket.resume()
    })
    const response = Buffer.concat(chunks).toString('utf8')
    expect(response.startsWith('HTTP/1.1 200 OK')).to.equal(true)
    // Tagged (100,000 bookings, within ETAG_MAX_ROWS): held whole, sent with its ETag and Content-Length.
    const [head, body] = response.split('\r\n\r\n', 2) as [string, string]
    expect(head).to.match(/\r\netag: W\//i)
    expect(Buffer.byteLength(body)).to.equal(Number(/\r\ncontent-length: (\d+)/i.exec(head)![1]))
    expect(body).to.match(/\]\},"total":100000\}$/)
  })

  it('holding off: holds the query open while a client does not read, and finishes the answer whole when it reads again, long past QUERY_TIMEOUT_MS', async () => {
    const { socket, chunks } = await startSlowClient(unheldServer)
    await sleep(1500)
    // About 28 MB of JSON are owed; socket buffers hold a few. The answer's
    // snapshot must still be open: its statement may still be sending rows, or
    // may have sent its last into the two sockets' buffers (up to about 10 MB
    // once the kernel has grown them, near the whole result), unread by the service.
    expect(await db.readerTransactions(), 'the snapshot is still open').to.have.length(1)
    expect(await db.readerQueries(), 'no other statement runs').to.have.length.at.most(1)
    expect(chunks.reduce((n, c) => n + c.length, 0)).to.be.below(1_000_000)

    await new Promise<void>((resolve) => {
      socket.on('data', (chunk) => chunks.push(chunk))
      socket.on('close', () => resolve())
      socket.resume()
    })
    const response = Buffer.concat(chunks).toString('utf8')
    const body = response.slice(response.indexOf('\r\n\r\n') + 4)
    // Chunked transfer encoding: the last chunk carries the end of the JSON.
    expect(response.startsWith('HTTP/1.1 200 OK')).to.equal(true)
    expect(body).to.match(/\]\},"total":100000\}\r\n0\r\n\r\n$/)
  })

  it('holding off: releases the connection when the client hangs up', async () => {
    const { socket } = await startSlowClient(unheldServer)
    await sleep(300)
    // Its statement may have sent its last rows into the sockets' buffers already
    // (see above); the snapshot stays open until the answer is done or given up.
    expect(await db.readerTransactions(), 'the snapshot is still open').to.have.length(1)
    socket.destroy()
    await db.untilReaderIdle(10_000)
    expect(await db.readerQueries(), 'the query ended after the client hung up').to.deep.equal([])
    expect(await db.readerTransactions(), 'the snapshot ended after the client hung up').to.deep.equal([])
    await request(t.app).get('/wp-json/booking-calendar/v1/slots?per_page=1').expect(200)
  })
})
