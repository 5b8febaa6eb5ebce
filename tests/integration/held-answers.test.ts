// Held answers (API.md, "Under load"; decision 0028): a permit of
// DB_STREAM_CONNECTIONS is held while the database produces an answer's rows,
// not while its client reads them. The bytes a slow client has not read are
// held in memory, then in a temporary file under HOLD_DIR; within bounds, or
// the answer is cut visibly. Its memory and file go on every path.
import { expect } from 'chai'
import { connect, type Socket } from 'node:net'
import { get as httpGet } from 'node:http'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { demoDataSql } from '../../db/demo-data.ts'
import { startListeningService, type ListeningService } from '../support/service.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { bodyText } from '../support/chunked.ts'

const BOOKINGS = 100_000
/** Every booking, whole: about 26 MB, far more than the sockets' buffers hold. */
const EXPORT = '/wp-json/booking-calendar/v1/slots?flat'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface SlowClient {
  socket: Socket
  received: Buffer[]
  firstByteAt: number | undefined
  closed: Promise<void>
}

/** An export whose client reads its first chunk, then nothing (its socket paused). */
async function slowClient(port: number): Promise<SlowClient> {
  const socket = connect(port, '127.0.0.1')
  const client: SlowClient = { socket, received: [], firstByteAt: undefined, closed: new Promise((resolve) => socket.once('close', () => resolve())) }
  socket.on('error', () => { /* seen as the close */ })
  socket.on('data', (chunk: Buffer) => {
    if (client.firstByteAt === undefined) {
      client.firstByteAt = Date.now()
      socket.pause()
    }
    client.received.push(chunk)
  })
  socket.write(`GET ${EXPORT} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`)
  await until(() => client.firstByteAt !== undefined, 10_000, 'the first byte')
  return client
}

async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** A line of GET /metrics, over a connection of its own (a kept-alive one may be closed by the server meanwhile). */
async function metric(port: number, line: string): Promise<number> {
  const text = await new Promise<string>((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      const pieces: Buffer[] = []
      res.on('data', (piece: Buffer) => pieces.push(piece))
      res.on('end', () => resolve(Buffer.concat(pieces).toString('utf8')))
      res.on('error', reject)
    }).on('error', reject)
  })
  const found = text.split('\n').find((l) => l.startsWith(`${line} `))
  return found === undefined ? Number.NaN : Number(found.slice(line.length + 1))
}

/** Answers cut as hold_full so far: the line appears with the first. */
async function holdFullCuts(port: number): Promise<number> {
  const cuts = await metric(port, 'booking_calendar_answers_cut_total{reason="hold_full"}')
  return Number.isNaN(cuts) ? 0 : cuts
}

/** The held files in the process's directory under `dir`. */
function heldFiles(dir: string): string[] {
  try {
    return readdirSync(join(dir, String(process.pid)))
  } catch {
    return []
  }
}

describe('held answers: a slow client holds no stream permit', function () {
  this.timeout(90_000)
  let db: TestDatabase
  let dir: string
  let service: ListeningService | undefined

  before(async () => {
    db = await createTestDatabase('held_answers')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
  })
  after(async () => { await db.drop() })
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'held-test-')) })
  afterEach(async () => {
    await service?.close()
    service = undefined
    rmSync(dir, { recursive: true, force: true })
  })

  it('two clients that read nothing, then a third export: it starts at once with DB_STREAM_CONNECTIONS=2, and every answer is whole', async () => {
    // A wait in line of 2 s would be a 503: the third must not wait for the two readers.
    service = await startListeningService(db, { DB_STREAM_CONNECTIONS: '2', DB_QUEUE_TIMEOUT_MS: '2000', HOLD_DIR: dir })
    const port = service.port
    const slow = [await slowClient(port), await slowClient(port)]
    // Their rows are out of the database: both snapshots end while neither client reads.
    await db.untilReaderIdle(20_000)
    expect(service.handle.pool.gate.stats.holding, 'no permit held for the two readers').to.equal(0)
    const started = Date.now()
    const third = await fetch(`http://127.0.0.1:${port}${EXPORT}`)
    const body = await third.json() as { booked_slots: unknown[] }
    expect(third.status).to.equal(200)
    expect(body.booked_slots).to.have.length(BOOKINGS)
    // Its own read and send of 26 MB, on a shared machine: bounded, but the proof is the wait in line below.
    expect(Date.now() - started).to.be.below(45_000)
    const queueWait = service.logs.filter((line) => line.msg === 'request' && line.status === 200).map((line) => line.queueWaitMs ?? 0)
    expect(Math.max(...queueWait as number[]), 'no request waited in line').to.be.below(1_000)

    // The two readers read now: each gets its whole answer, from memory and file.
    expect(await metric(port, 'booking_calendar_held_spills_total')).to.be.at.least(1)
    for (const client of slow) client.socket.resume()
    await Promise.all(slow.map((client) => client.closed))
    for (const client of slow) {
      const raw = Buffer.concat(client.received)
      expect(raw.toString('latin1', 0, 15)).to.equal('HTTP/1.1 200 OK')
      expect((JSON.parse(bodyText(raw)) as { booked_slots: unknown[] }).booked_slots).to.have.length(BOOKINGS)
    }
    await until(async () => await metric(port, 'booking_calendar_held_bytes{where="disk"}') === 0, 5_000, 'no byte held on disk')
    expect(await metric(port, 'booking_calendar_held_bytes{where="memory"}')).to.equal(0)
    expect(heldFiles(dir), 'no held file left').to.deep.equal([])
  })

  it('24 If-None-Match requests on the whole table at once wait in the line: never more statements on the server than DB_STREAM_CONNECTIONS, and all 304', async () => {
    service = await startListeningService(db, { DB_STREAM_CONNECTIONS: '2', DB_QUEUE_TIMEOUT_MS: '120000', HOLD_DIR: dir })
    const port = service.port
    const first = await fetch(`http://127.0.0.1:${port}${EXPORT}`)
    await first.arrayBuffer()
    const tag = first.headers.get('etag')!
    expect(tag).to.match(/^W\//)
    let most = 0
    let flooding = true
    const watching = (async () => {
      while (flooding) {
        most = Math.max(most, (await db.readerQueries()).length)
        await sleep(10)
      }
    })()
    const statuses = await Promise.all(Array.from({ length: 24 }, async () => {
      const res = await fetch(`http://127.0.0.1:${port}${EXPORT}`, { headers: { 'If-None-Match': tag } })
      await res.arrayBuffer()
      return res.status
    }))
    flooding = false
    await watching
    expect(statuses).to.deep.equal(Array.from({ length: 24 }, () => 304))
    expect(most, 'statements of the reader running at once').to.be.within(1, 2)
  })

  it('a held answer whose client hangs up frees its memory and its file at once', async () => {
    service = await startListeningService(db, { HOLD_MEMORY_BYTES: String(1024 * 1024), HOLD_DIR: dir })
    const port = service.port
    const slow = await slowClient(port)
    await db.untilReaderIdle(20_000)
    expect(await metric(port, 'booking_calendar_held_bytes{where="memory"}')).to.be.at.most(1024 * 1024)
    expect(await metric(port, 'booking_calendar_held_bytes{where="disk"}')).to.be.above(10_000_000)
    expect(heldFiles(dir)).to.have.length(1)

    slow.socket.destroy()
    await until(() => heldFiles(dir).length === 0, 5_000, 'the held file to go')
    expect(await metric(port, 'booking_calendar_held_bytes{where="memory"}')).to.equal(0)
    expect(await metric(port, 'booking_calendar_held_bytes{where="disk"}')).to.equal(0)
  })

  for (const [bounds, env] of [
    ['the hold\'s bounds spent', { HOLD_MEMORY_BYTES: String(1024 * 1024), HOLD_DISK_BYTES: String(2 * 1024 * 1024) }],
    ['holding off', { HOLD_MEMORY_BYTES: '0', HOLD_DISK_BYTES: '0' }],
  ] as const) {
    it(`${bounds}: a client that reads nothing keeps its permit only while no other answer waits for one, then is cut visibly (hold_full), and the waiting export answers`, async () => {
      // Untagged (ETAG_MAX_ROWS=0): sent as it is made. One stream connection: the quarter waits for the reader's permit.
      service = await startListeningService(db, { ...env, HOLD_DIR: dir, ETAG_MAX_ROWS: '0', DB_STREAM_CONNECTIONS: '1', DB_QUEUE_TIMEOUT_MS: '20000' })
      const port = service.port
      const slow = await slowClient(port)
      // Past SLOW_CLIENT_GRACE_MS with no one waiting: it goes on at its client's pace, its permit held.
      await sleep(3_000)
      expect(await holdFullCuts(port), 'no one waits: not cut').to.equal(0)
      expect(service.handle.pool.gate.stats.holding, 'its permit held while no one waits').to.equal(1)
      const started = Date.now()
      const quarter = await fetch(`http://127.0.0.1:${port}/wp-json/booking-calendar/v1/slots?flat&start=2026-01-01&end=2026-03-31`)
      const body = await quarter.json() as { booked_slots: unknown[]; total: number }
      expect(quarter.status).to.equal(200)
      expect(body.booked_slots).to.have.length(body.total)
      // SLOW_CLIENT_GRACE_MS (2 s), then the quarter's own read: far from the queue's 20 s.
      expect(Date.now() - started, 'the quarter did not wait for the reader').to.be.below(12_000)
      expect(await holdFullCuts(port)).to.equal(1)
      expect(service.logs.some((line) => line.msg === 'answer cut: its client reads slower than the database, past the hold\'s bounds, while other answers wait for a stream permit')).to.equal(true)
      slow.socket.resume()
      await slow.closed
      const raw = Buffer.concat(slow.received).toString('latin1')
      expect(raw.startsWith('HTTP/1.1 200 OK')).to.equal(true)
      expect(raw.endsWith('0\r\n\r\n'), 'no last chunk: the answer looks cut').to.equal(false)
      await until(() => heldFiles(dir).length === 0, 5_000, 'the held file to go')
      expect(await metric(port, 'booking_calendar_held_bytes{where="disk"}')).to.equal(0)
    })
  }

  it('the hold\'s bounds spent and a client that reads: the whole answer, at its pace, as with holding off', async () => {
    service = await startListeningService(db, { HOLD_MEMORY_BYTES: String(1024 * 1024), HOLD_DISK_BYTES: String(2 * 1024 * 1024), HOLD_DIR: dir, ETAG_MAX_ROWS: '0' })
    const answer = await fetch(`http://127.0.0.1:${service.port}${EXPORT}`)
    const body = await answer.json() as { booked_slots: unknown[] }
    expect(answer.status).to.equal(200)
    expect(body.booked_slots).to.have.length(BOOKINGS)
    expect(await holdFullCuts(service.port)).to.equal(0)
  })
})
