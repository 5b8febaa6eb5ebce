// Issue 62: SEND_TIMEOUT_MS cuts a client that stopped reading, never one that
// keeps reading, however slowly (cut-answer.ts). With the socket's buffers
// full, the kernel took bytes from the service only once a minute from a
// client reading at 20 KB/s; what the client takes off the socket is what counts.
import { expect } from 'chai'
import { metricLine, until } from '../support/metrics-line.ts'
import { connect, type Socket } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { demoDataSql } from '../../db/demo-data.ts'
import { startListeningService, type ListeningService } from '../support/service.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

/** Over three years: a year is about 10 MB of JSON, more than both sockets' buffers hold (4 MiB the service's) and what a reader here reads. */
const BOOKINGS = 120_000
/** A year's export, about 40,000 bookings: as at the defaults, read whole into a held answer, then sent with its ETag and Content-Length (sendHeldWhole). */
const YEAR = '/wp-json/booking-calendar/v1/slots?flat&start=2025-01-01&end=2025-12-31'
/** More than 366 days, about 50,000 bookings: past ETAG_MAX_ROWS here, so untagged, streamed as read (chunked), through a held answer. */
const LONGER = '/wp-json/booking-calendar/v1/slots?flat&start=2025-01-01&end=2026-03-31'
/** Between the two: the year is tagged, the longer range is not. */
const ETAG_MAX_ROWS = '45000'
const CUT_LINE = 'answer cut: the client read nothing for SEND_TIMEOUT_MS'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Reader {
  id: string
  socket: Socket
  received: Buffer[]
  bytes: number
  /** Its status line and headers, once they are all in. */
  head: string | undefined
  firstByteAt: number | undefined
  lastByteAt: number
  /** When the connection closed: the service's cut (a reader that keeps reading hangs up only once the test has looked). */
  closedAt: number | undefined
}

/**
 * A client of `path` that reads `bytesPerSecond` on average from its first
 * byte on, a little every 100 ms (and catches up after a late timer, as a
 * steady link would), or, at 0, reads its head and then nothing.
 */
function startReader(port: number, path: string, id: string, bytesPerSecond: number): Reader {
  const buffer = Buffer.alloc(Math.max(256, Math.round(bytesPerSecond / 20)))
  const owed = (now: number) => reader.firstByteAt === undefined ? Infinity : bytesPerSecond * (now - reader.firstByteAt) / 1000
  const socket = connect({
    port, host: '127.0.0.1',
    onread: {
      buffer,
      callback: (bytes: number, into: Buffer) => {
        const now = Date.now()
        reader.received.push(Buffer.from(into.subarray(0, bytes)))
        reader.bytes += bytes
        reader.firstByteAt ??= now
        reader.lastByteAt = now
        reader.head ??= headIn(reader.received)
        // The head whole first: the test reads its status and headers.
        if (reader.bytes >= owed(now) && reader.head !== undefined) socket.pause()
        return true
      },
    },
  })
  const reader: Reader = { id, socket, received: [], bytes: 0, head: undefined, firstByteAt: undefined, lastByteAt: 0, closedAt: undefined }
  socket.on('error', () => { /* seen as the close */ })
  socket.once('close', () => { reader.closedAt = Date.now() })
  if (bytesPerSecond > 0) {
    const pace = setInterval(() => { if (reader.bytes < owed(Date.now())) socket.resume() }, 100)
    socket.once('close', () => clearInterval(pace))
  }
  socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n`)
  return reader
}

/** A line of GET /metrics; 0 when it is not there yet. */
async function metric(port: number, line: string): Promise<number> {
  return (await metricLine(port, line)) ?? 0
}

function cutLineOf(service: ListeningService, reader: Reader): Record<string, unknown> | undefined {
  return service.logs.find((line) => line.msg === CUT_LINE && line.requestId === reader.id)
}

/** The head of an answer, its status line and headers, once `received` holds them all. */
function headIn(received: Buffer[]): string | undefined {
  const raw = Buffer.concat(received)
  const end = raw.indexOf('\r\n\r\n')
  return end === -1 ? undefined : raw.toString('latin1', 0, end + 2)
}

describe('SEND_TIMEOUT_MS: a client that keeps reading is never cut (issue 62)', function () {
  this.timeout(180_000)
  let db: TestDatabase
  const services: ListeningService[] = []
  const dirs: string[] = []
  const readers: Reader[] = []

  before(async () => {
    db = await createTestDatabase('steady_readers')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
  })
  after(async () => {
    for (const reader of readers) reader.socket.destroy()
    for (const service of services) await service.close()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
    await db.drop()
  })

  async function startService(sendTimeoutMs: number, env: Record<string, string> = {}): Promise<ListeningService> {
    const dir = mkdtempSync(join(tmpdir(), 'steady-readers-'))
    dirs.push(dir)
    const service = await startListeningService(db, { SEND_TIMEOUT_MS: String(sendTimeoutMs), ETAG_MAX_ROWS, HOLD_DIR: dir, ...env })
    services.push(service)
    return service
  }

  /**
   * Lets `reader` read for `readForMs` from its first byte, then hang up: whether
   * the service had closed its connection by then, and whether it kept its pace.
   */
  async function readSteadily(reader: Reader, bytesPerSecond: number, readForMs: number): Promise<{ id: string; closedByService: boolean; pace: string }> {
    await until(() => reader.firstByteAt !== undefined, 60_000, `${reader.id}'s first byte`)
    await sleep(reader.firstByteAt! + readForMs - Date.now())
    const closedByService = reader.closedAt !== undefined
    // Steady: at least 80% of its pace (a loaded machine's timers are late), and never far ahead of it.
    const paced = bytesPerSecond * readForMs / 1000
    const pace = reader.bytes >= 0.8 * paced && reader.bytes <= 1.1 * paced + 65_536 ? 'steady' : `${reader.bytes} bytes read, for ${paced}`
    reader.socket.destroy()
    return { id: reader.id, closedByService, pace }
  }

  /** How long after its last read a reader that stopped was cut. */
  async function cutAfterLastRead(service: ListeningService, reader: Reader, sendTimeoutMs: number): Promise<number> {
    await until(() => reader.firstByteAt !== undefined, 60_000, `${reader.id}'s first byte`)
    await until(() => cutLineOf(service, reader) !== undefined, sendTimeoutMs + 15_000, `${reader.id}'s cut`)
    return (cutLineOf(service, reader)!.time as number) - reader.lastByteAt
  }

  it('readers at 5, 20 and 40 KB/s, each reading longer than SEND_TIMEOUT_MS, on a year held whole and a longer range streamed (held, or not): none cut; one that stops is cut on time', async () => {
    // Two timeouts, all readers at once. On loopback the client's kernel opens its window a
    // step of 64 to 128 KiB at a time: 13 to 27 s apart at 5 KB/s, so that reader gets 40 s. At
    // 20 s, the readers at 20 and 40 KB/s were cut as stopped when only the kernel's takes counted.
    const short = await startService(20_000)
    const long = await startService(40_000)
    // Nothing held: the answer is written as its rows are read, its client's pace reaching the database cursor.
    const unheld = await startService(20_000, { HOLD_MEMORY_BYTES: '0', HOLD_DISK_BYTES: '0', DB_STREAM_CONNECTIONS: '3' })
    const steadyRuns: Array<ReturnType<typeof readSteadily>> = []
    const stoppedRuns: Array<Promise<number>> = []
    for (const [path, name] of [[YEAR, 'year'], [LONGER, 'longer']] as const) {
      for (const kbPerSecond of [20, 40]) {
        const reader = startReader(short.port, path, `${name}-${kbPerSecond}KBps`, kbPerSecond * 1000)
        readers.push(reader)
        steadyRuns.push(readSteadily(reader, kbPerSecond * 1000, 30_000))
      }
      const slowest = startReader(long.port, path, `${name}-5KBps`, 5_000)
      readers.push(slowest)
      steadyRuns.push(readSteadily(slowest, 5_000, 45_000))
      const stopped = startReader(short.port, path, `${name}-stopped`, 0)
      readers.push(stopped)
      stoppedRuns.push(cutAfterLastRead(short, stopped, 20_000))
    }
    for (const kbPerSecond of [20, 40]) {
      const reader = startReader(unheld.port, LONGER, `unheld-${kbPerSecond}KBps`, kbPerSecond * 1000)
      readers.push(reader)
      steadyRuns.push(readSteadily(reader, kbPerSecond * 1000, 30_000))
    }
    const unheldStopped = startReader(unheld.port, LONGER, 'unheld-stopped', 0)
    readers.push(unheldStopped)
    stoppedRuns.push(cutAfterLastRead(unheld, unheldStopped, 20_000))
    await until(() => readers.every((reader) => reader.head !== undefined), 60_000, 'every head', 50)
    for (const reader of readers) {
      const head = reader.head!
      expect(head, reader.id).to.match(/^HTTP\/1\.1 200 OK\r\n/)
      // Each path as named: the year held whole and sent with its length, the longer range chunked.
      if (reader.id.startsWith('year')) expect(head, reader.id).to.match(/\r\ncontent-length: \d{7,}\r\n/i)
      else expect(head, reader.id).to.match(/\r\ntransfer-encoding: chunked\r\n/i)
    }
    const steady = await Promise.all(steadyRuns)
    const stoppedCutAfter = await Promise.all(stoppedRuns)
    const cut = services.flatMap((service) => service.logs.filter((line) => line.msg === CUT_LINE).map((line) => line.requestId)).sort()
    expect(cut, 'the readers cut').to.deep.equal(['longer-stopped', 'unheld-stopped', 'year-stopped'])
    expect(steady.filter((run) => run.closedByService || run.pace !== 'steady'), 'the steady readers that were closed on or lost their pace').to.deep.equal([])
    // SEND_TIMEOUT_MS after its last read, and a little more (a look is at most a second apart, on a loaded machine).
    for (const after of stoppedCutAfter) expect(after, 'from the last read to the cut').to.be.within(20_000 - 500, 20_000 + 4_000)
    expect(await metric(short.port, 'booking_calendar_answers_cut_total{reason="send_timeout"}'), 'the two stopped readers').to.equal(2)
    expect(await metric(long.port, 'booking_calendar_answers_cut_total{reason="send_timeout"}')).to.equal(0)
    expect(await metric(unheld.port, 'booking_calendar_answers_cut_total{reason="send_timeout"}'), 'the stopped reader').to.equal(1)
    for (const service of services) expect(service.logs.filter((line) => (line.level as number) >= 50), 'no error line').to.deep.equal([])
  })
})
