// Held answers (API.md, "Under load"; decision 0028): a permit of
// DB_STREAM_CONNECTIONS is held while the database produces an answer's rows,
// not while its client reads them. The bytes a slow client has not read are
// held in memory, then in a temporary file under HOLD_DIR; within bounds, or
// the answer is cut visibly. Its memory and file go on every path. A HOLD_DIR
// that cannot be written, or a disk that fills, is never a 500.
import { expect } from 'chai'
import { metricLine, until } from '../support/metrics-line.ts'
import { execFileSync } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { demoDataSql } from '../../db/demo-data.ts'
import { processHoldDir } from '../../server/http/held-answer.ts'
import { spawnService, startListeningService, type ListeningService, type ServiceProcess } from '../support/service.ts'
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

/** A line of GET /metrics; NaN when it is not there yet. */
async function metric(port: number, line: string): Promise<number> {
  return (await metricLine(port, line)) ?? Number.NaN
}

/** Answers cut as hold_full so far: the line appears with the first. */
async function holdFullCuts(port: number): Promise<number> {
  const cuts = await metric(port, 'booking_calendar_answers_cut_total{reason="hold_full"}')
  return Number.isNaN(cuts) ? 0 : cuts
}

/** The held files in the process's directory under `dir`. */
function heldFiles(dir: string): string[] {
  try {
    return readdirSync(processHoldDir(dir))
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

  describe('a HOLD_DIR that cannot be written, or a disk that fills', () => {
    /** A year of the demo's bookings (2025–2027): 33,319 of them, 8.7 MB of JSON, 4.3 MB of CSV, 6.7 MB of iCalendar, each past the 4 MiB one answer holds in memory. */
    const YEAR = '/wp-json/booking-calendar/v1/slots?flat&start=2026-01-01&end=2026-12-31'
    const QUESTIONS = { json: YEAR, csv: `${YEAR}&format=csv`, ics: `${YEAR}&format=ics` }
    /** 18 months: counted first (past 366 days), held whole, its first bytes in the file before the disk fills. */
    const EIGHTEEN_MONTHS = '/wp-json/booking-calendar/v1/slots?flat&start=2025-07-01&end=2026-12-31'
    interface Answer { status: number; total: string | null; body: string }
    /** A body as the defaults' is compared with it: a feed's DTSTAMP is the time of the answer. */
    const comparable = (body: string) => body.replace(/^DTSTAMP:.*\r\n/gm, '')
    const expectSameBookings = (format: string, answer: Answer) => {
      const expected = reference[format]!
      expect(answer.status, format).to.equal(200)
      expect(answer.total, `${format}: X-WP-Total`).to.equal(expected.total)
      expect(answer.body.length, `${format}: the same length as at the defaults`).to.equal(expected.body.length)
      expect(comparable(answer.body) === comparable(expected.body), `${format}: the same bytes as at the defaults`).to.equal(true)
    }

    const ask = async (port: number, path: string): Promise<Answer> => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`)
      return { status: res.status, total: res.headers.get('x-wp-total'), body: await res.text() }
    }
    /** The held-answer lines of a log: the one line at start, and any line about HOLD_DIR. */
    const holdLines = (logs: Record<string, unknown>[]) => logs.filter((line) => typeof line.msg === 'string' && /held answers|HOLD_DIR/.test(line.msg))

    let reference: Record<string, Answer>
    before(async function () {
      this.timeout(120_000)
      // The same questions at the default settings, HOLD_DIR writable.
      const referenceDir = mkdtempSync(join(tmpdir(), 'held-test-'))
      const defaults = await startListeningService(db, { HOLD_DIR: referenceDir })
      try {
        reference = {}
        for (const [name, path] of [...Object.entries(QUESTIONS), ['eighteenMonths', EIGHTEEN_MONTHS]] as const) reference[name] = await ask(defaults.port, path)
      } finally {
        await defaults.close()
        rmSync(referenceDir, { recursive: true, force: true })
      }
      for (const answer of Object.values(reference)) expect(answer.status).to.equal(200)
      expect(Buffer.byteLength(reference.json!.body), 'past one answer\'s memory: the disk would be used').to.be.above(4 * 1024 * 1024)
    })

    it('HOLD_DIR cannot be made (a path under a regular file): one warn line at start, and a year\'s export answers 200 in JSON, CSV and iCalendar, the same as at the defaults', async () => {
      writeFileSync(join(dir, 'file'), 'x')
      const unwritable = join(dir, 'file', 'held')
      let spawned: ServiceProcess | undefined
      try {
        spawned = await spawnService(db, { HOLD_DIR: unwritable, WORKERS: '1' })
        const atStart = holdLines(spawned.logs)
        expect(atStart, 'one line at start').to.have.length(1)
        expect(atStart[0]).to.include({ level: 40, holdDir: unwritable, code: 'ENOTDIR', memoryBytes: 32 * 1024 * 1024 })
        expect(atStart[0]!.msg).to.equal('HOLD_DIR cannot be written: answers are held in memory only (HOLD_MEMORY_BYTES), and the disk is tried again in a minute')
        for (const [format, path] of Object.entries(QUESTIONS)) expectSameBookings(format, await ask(spawned.port, path))
        expect(await metric(spawned.port, 'booking_calendar_held_disk_failures_total'), 'the probe at start; not tried again within the minute').to.equal(1)
        expect(holdLines(spawned.logs), 'no line per answer').to.have.length(1)
        expect(spawned.logs.filter((line) => line.level === 50), 'no error').to.deep.equal([])
      } finally {
        spawned?.child.kill('SIGTERM')
        await spawned?.exited
      }
    })

    describe('a disk that fills mid-hold (a 2 MiB tmpfs)', () => {
      let mountPoint: string | undefined
      before(function () {
        const point = mkdtempSync(join(tmpdir(), 'held-tmpfs-'))
        try {
          execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', point], { stdio: 'pipe' })
          mountPoint = point
        } catch (error) {
          rmSync(point, { recursive: true, force: true })
          console.log(`      skipped: mount -t tmpfs failed (${String((error as Error).message).split('\n')[0]}); it needs root on Linux`)
          this.skip()
        }
      })
      after(() => {
        if (mountPoint === undefined) return
        try {
          execFileSync('umount', [mountPoint], { stdio: 'ignore' })
        } catch {
          execFileSync('umount', ['--lazy', mountPoint], { stdio: 'ignore' })
        }
        rmSync(mountPoint, { recursive: true, force: true })
      })

      it('a tagged export whose file fills: 200, whole, the same as at the defaults; the disk is left alone after, with one warn line', async () => {
        service = await startListeningService(db, { HOLD_DIR: mountPoint! })
        const port = service.port
        // Counted first, held whole: 4 MiB in memory, then the file, until the tmpfs is full.
        const first = await ask(port, EIGHTEEN_MONTHS)
        expect(first.status).to.equal(200)
        expect([first.total, first.body === reference.eighteenMonths!.body], 'every booking, in order: what was in the file before it filled, then the rest').to.deep.equal([reference.eighteenMonths!.total, true])
        expect(await metric(port, 'booking_calendar_held_disk_failures_total')).to.equal(1)
        // The disk is left alone for a minute: a year's export is held in memory only, and answered whole.
        for (const [format, path] of Object.entries(QUESTIONS)) expectSameBookings(format, await ask(port, path))
        expect(await metric(port, 'booking_calendar_held_disk_failures_total'), 'not tried again within the minute').to.equal(1)
        const lines = holdLines(service.logs)
        expect(lines.map((line) => [line.level, line.code, line.msg])).to.deep.equal([[40, 'ENOSPC', 'HOLD_DIR cannot be written: answers are held in memory only, and the disk is tried again in a minute']])
        expect(service.logs.filter((line) => line.level === 50), 'no error, no 500').to.deep.equal([])
        await until(async () => await metric(port, 'booking_calendar_held_bytes{where="disk"}') === 0, 5_000, 'no byte held on disk')
        expect(heldFiles(mountPoint!), 'no held file left').to.deep.equal([])
      })

      it('an untagged export to a client that reads nothing, whose file fills while another export waits: no 500; cut visibly (hold_full), the other answers whole, nothing is left held', async () => {
        // The whole table (26 MB), untagged (ETAG_MAX_ROWS=0): sent as it is made. Alone it waits for its client
        // past 4 MiB; once the quarter waits for the one permit it goes to the file, which fills (decision 0035).
        service = await startListeningService(db, { HOLD_DIR: mountPoint!, ETAG_MAX_ROWS: '0', DB_STREAM_CONNECTIONS: '1', DB_QUEUE_TIMEOUT_MS: '20000' })
        const port = service.port
        const slow = await slowClient(port)
        await sleep(1_000)
        expect(await metric(port, 'booking_calendar_held_disk_failures_total'), 'alone, it waits for its client: no file').to.equal(0)
        const quarter = await fetch(`http://127.0.0.1:${port}/wp-json/booking-calendar/v1/slots?flat&start=2026-01-01&end=2026-03-31`)
        const body = await quarter.json() as { booked_slots: unknown[]; total: number }
        expect(quarter.status).to.equal(200)
        expect(body.booked_slots).to.have.length(body.total)
        expect(await metric(port, 'booking_calendar_held_disk_failures_total'), 'the file filled').to.equal(1)
        expect(await holdFullCuts(port)).to.equal(1)
        slow.socket.resume()
        await slow.closed
        const raw = Buffer.concat(slow.received).toString('latin1')
        expect(raw.startsWith('HTTP/1.1 200 OK'), 'never a 500').to.equal(true)
        expect(raw.endsWith('0\r\n\r\n'), 'no last chunk: the answer looks cut').to.equal(false)
        expect(holdLines(service.logs).map((line) => [line.level, line.code])).to.deep.equal([[40, 'ENOSPC']])
        expect(service.logs.filter((line) => line.level === 50), 'no error').to.deep.equal([])
        await until(() => heldFiles(mountPoint!).length === 0, 5_000, 'the held file to go')
        expect(await metric(port, 'booking_calendar_held_bytes{where="disk"}')).to.equal(0)
        expect(await metric(port, 'booking_calendar_held_bytes{where="memory"}')).to.equal(0)
      })
    })
  })
})
