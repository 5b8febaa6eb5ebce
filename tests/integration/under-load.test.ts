// Under load (API.md, "Under load"): streamed answers wait in line for one
// of DB_STREAM_CONNECTIONS' permits instead of being refused; the line is
// first come first served but fair between callers, bounded in length and
// in time (503 with Retry-After past either), and a client that hangs up
// leaves it at once. With WORKERS=2 the budget is the whole service's, and
// AUTH_MODE=wordpress verdicts are shared by the workers.
import { expect } from 'chai'
import { connect, type Socket } from 'node:net'
import { get as httpGet } from 'node:http'
import { demoDataSql } from '../../db/demo-data.ts'
import { spawnService, startListeningService, type ServiceProcess } from '../support/service.ts'
import { createTestDatabase, testServer, type TestDatabase } from '../support/database.ts'
import { bodyText } from '../support/chunked.ts'
import { startWordPress, type WordPressSite } from '../support/wordpress.ts'

const BOOKINGS = 100_000
/** Every booking, whole: about 26 MB, more than the sockets' buffers hold, so a client that stops reading holds its permit. */
const EXPORT = '/wp-json/booking-calendar/v1/slots?flat'
/** Every booking's ID only (1.3 MB): a quick export. */
const SHORT_EXPORT = '/wp-json/booking-calendar/v1/slots?flat&_fields=id'
/** Two years of the three the demo data covers (730 days): a long answer, not a wide one (WIDE_ANSWER_MIN_DAYS), so it may take every permit. */
const LONG_EXPORT = '/wp-json/booking-calendar/v1/slots?flat&start=2025-01-01&end=2026-12-31'
/** A quarter: a short answer (SHORT_ANSWER_MAX_DAYS). */
const QUARTER_EXPORT = '/wp-json/booking-calendar/v1/slots?flat&start=2025-01-01&end=2025-03-31'
const SMALL = '/wp-json/booking-calendar/v1/slots?per_page=5'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Holding off (HOLD_*=0): a client that stops reading then holds its permit, which is how these tests fill the line (held answers: held-answers.test.ts). */
const startService = (db: TestDatabase, env: Record<string, string> = {}) => startListeningService(db, { HOLD_MEMORY_BYTES: '0', HOLD_DISK_BYTES: '0', ...env })

/** A request on a socket of its own; `stopAfterFirstChunk` leaves the rest unread, so its answer stays in flight. */
interface RawRequest {
  socket: Socket
  /** When the first byte of the answer came; undefined before. */
  firstByteAt: number | undefined
  received: Buffer[]
  ended: Promise<void>
  status(): number
}

function rawRequest(port: number, path: string, options: { stopAfterFirstChunk?: boolean; headers?: Record<string, string> } = {}): RawRequest {
  const socket = connect(port, '127.0.0.1')
  const request: RawRequest = {
    socket, firstByteAt: undefined, received: [],
    ended: new Promise<void>((resolve) => socket.once('close', () => resolve())),
    status: () => Number(Buffer.concat(request.received).toString('latin1', 9, 12)),
  }
  socket.on('error', () => { /* seen as the close */ })
  socket.on('data', (chunk: Buffer) => {
    if (request.firstByteAt === undefined) {
      request.firstByteAt = Date.now()
      if (options.stopAfterFirstChunk) socket.pause()
    }
    request.received.push(chunk)
  })
  const headers = Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n${headers}Connection: close\r\n\r\n`)
  return request
}

/** An export whose client read its first chunk and then stopped: it holds its permit until the socket goes. */
async function holdExport(port: number, headers?: Record<string, string>, path = EXPORT): Promise<RawRequest> {
  const held = rawRequest(port, path, { stopAfterFirstChunk: true, headers })
  await until(() => held.firstByteAt !== undefined, 10_000, 'the held export to start')
  return held
}

async function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> | undefined; ms: number }> {
  const started = Date.now()
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(20_000) })
  const text = await res.text()
  let body: Record<string, unknown> | undefined
  try { body = JSON.parse(text) } catch { body = undefined }
  return { status: res.status, headers: res.headers, body, ms: Date.now() - started }
}

async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

function bodyOf(request: RawRequest): { total: number; booked_slots: unknown[] } {
  return JSON.parse(bodyText(Buffer.concat(request.received)))
}

describe('under load: the line for stream permits', function () {
  this.timeout(60_000)
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('under_load')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
  })
  after(async () => { await db.drop() })

  it('a streamed answer that finds every permit taken waits, first come first served, and no small request waits behind it', async () => {
    const service = await startService(db, { DB_STREAM_CONNECTIONS: '1' })
    try {
      const held = await holdExport(service.port)
      const first = rawRequest(service.port, SHORT_EXPORT)
      await until(() => service.handle.pool.gate.stats.waiting === 1, 5_000, 'the first to wait')
      const second = rawRequest(service.port, SHORT_EXPORT)
      await until(() => service.handle.pool.gate.stats.waiting === 2, 5_000, 'the second to wait')
      await sleep(300)
      expect(first.firstByteAt, 'no byte is sent while it waits').to.equal(undefined)
      expect(second.firstByteAt).to.equal(undefined)

      // Small answers have their own pool.
      const small = await get(service.port, SMALL)
      expect(small.status).to.equal(200)
      expect(small.ms).to.be.below(1_000)

      held.socket.destroy()
      await Promise.all([first.ended, second.ended])
      expect(first.status()).to.equal(200)
      expect(second.status()).to.equal(200)
      expect(bodyOf(first).total).to.equal(BOOKINGS)
      expect(bodyOf(second).booked_slots).to.have.length(BOOKINGS)
      expect(first.firstByteAt!).to.be.below(second.firstByteAt!)
      // Each waiter's log line says how long it waited in line.
      const waited = service.logs.filter((line) => line.msg === 'request' && line.completed === true && line.queueWaitMs !== undefined)
        .map((line) => line.queueWaitMs as number)
      expect(waited).to.have.length(2)
      for (const ms of waited) expect(ms).to.be.at.least(250)
    } finally {
      await service.close()
    }
  })

  it('DB_QUEUE_LENGTH: one more than may wait is 503 rest_database_unavailable at once, with Retry-After, counted in /metrics', async () => {
    const service = await startService(db, { DB_STREAM_CONNECTIONS: '1', DB_QUEUE_LENGTH: '1' })
    try {
      const held = await holdExport(service.port)
      const waiting = rawRequest(service.port, SHORT_EXPORT)
      await until(() => service.handle.pool.gate.stats.waiting === 1, 5_000, 'one to wait')
      const refused = await get(service.port, SHORT_EXPORT)
      expect(refused.status).to.equal(503)
      expect(refused.ms).to.be.below(1_000)
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 300)
      expect(refused.body).to.deep.equal({
        code: 'rest_database_unavailable', message: 'Too many reports are waiting for the database. Try again later.', data: { status: 503 },
      })
      const metrics = await (await fetch(`http://127.0.0.1:${service.port}/metrics`)).text()
      expect(metrics).to.match(/^booking_calendar_db_queue_refusals_total\{reason="queue_full"\} 1$/m)
      expect(metrics).to.match(/^booking_calendar_db_queue_refusals_total\{reason="waited_too_long"\} 0$/m)
      expect(metrics).to.match(/^booking_calendar_db_queue_length 1$/m)
      expect(metrics).to.match(/^booking_calendar_db_stream_permits_in_use 1$/m)
      // The held export's wait (none) and the refused one's; the waiting one is counted when its wait ends.
      expect(metrics).to.match(/^booking_calendar_db_queue_wait_seconds_count 2$/m)
      held.socket.destroy()
      await waiting.ended
      expect(waiting.status()).to.equal(200)
    } finally {
      await service.close()
    }
  })

  it('DB_QUEUE_TIMEOUT_MS: a wait that runs out is 503 with Retry-After, not sooner', async () => {
    const service = await startService(db, { DB_STREAM_CONNECTIONS: '1', DB_QUEUE_TIMEOUT_MS: '800' })
    try {
      const held = await holdExport(service.port)
      const refused = await get(service.port, SHORT_EXPORT)
      expect(refused.status).to.equal(503)
      expect(refused.ms).to.be.within(750, 3_000)
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 300)
      expect(refused.body).to.deep.equal({
        code: 'rest_database_unavailable', message: 'No database connection for a report became free within 800 ms. Try again later.', data: { status: 503 },
      })
      expect(service.handle.pool.gate.stats.refusals).to.deep.equal({ queue_full: 0, waited_too_long: 1 })
      held.socket.destroy()
    } finally {
      await service.close()
    }
  })

  it('a client that hangs up while it waits leaves the line at once, and its place goes to the next', async () => {
    const service = await startService(db, { DB_STREAM_CONNECTIONS: '1', DB_QUEUE_LENGTH: '1' })
    try {
      const held = await holdExport(service.port)
      const quitter = rawRequest(service.port, SHORT_EXPORT)
      await until(() => service.handle.pool.gate.stats.waiting === 1, 5_000, 'the quitter to wait')
      quitter.socket.destroy()
      await until(() => service.handle.pool.gate.stats.waiting === 0, 1_000, 'the quitter to leave')
      const next = rawRequest(service.port, SHORT_EXPORT)
      await until(() => service.handle.pool.gate.stats.waiting === 1, 5_000, 'the next to wait (not be refused)')
      held.socket.destroy()
      await next.ended
      expect(next.status()).to.equal(200)
      expect(bodyOf(next).total).to.equal(BOOKINGS)
    } finally {
      await service.close()
    }
  })

  it('availability/ over a week is a short answer: it goes ahead of a long export waiting before it', async () => {
    const service = await startService(db, { DB_STREAM_CONNECTIONS: '1' })
    try {
      const held = await holdExport(service.port)
      const long = rawRequest(service.port, LONG_EXPORT)
      await until(() => service.handle.pool.gate.stats.waiting === 1, 5_000, 'the long export to wait')
      const week = rawRequest(service.port, '/wp-json/booking-calendar/v1/availability?start=2025-03-03&end=2025-03-09')
      await until(() => service.handle.pool.gate.stats.waiting === 2, 5_000, 'the week of availability to wait')
      held.socket.destroy()
      await Promise.all([long.ended, week.ended])
      expect([long.status(), week.status()]).to.deep.equal([200, 200])
      expect(week.firstByteAt!, 'the week answered before the long export began').to.be.below(long.firstByteAt!)
    } finally {
      await service.close()
    }
  })

  it('a pipelined export whose client hangs up before its turn gives its permit back, and a pipelined one waiting in line leaves it', async () => {
    const service = await startService(db, { DB_STREAM_CONNECTIONS: '2' })
    try {
      const { stats } = service.handle.pool.gate
      // Three requests in one packet: the first held by a client that stops reading, the next two queued behind it on the connection.
      const socket = connect(service.port, '127.0.0.1')
      socket.on('error', () => { /* hung up below */ })
      const firstByte = new Promise<void>((resolve) => socket.once('data', () => { socket.pause(); resolve() }))
      socket.write(`GET ${EXPORT} HTTP/1.1\r\nHost: test\r\n\r\nGET ${LONG_EXPORT} HTTP/1.1\r\nHost: test\r\n\r\nGET ${LONG_EXPORT} HTTP/1.1\r\nHost: test\r\n\r\n`)
      await firstByte
      await until(() => stats.holding === 2 && stats.waiting === 1, 5_000, 'two permits held and the third request waiting')
      socket.destroy()
      await until(() => stats.holding === 0 && stats.waiting === 0, 5_000, 'every permit given back and the line empty')
      // Both permits work for the next clients.
      const [one, two] = [rawRequest(service.port, SHORT_EXPORT), rawRequest(service.port, SHORT_EXPORT)]
      await Promise.all([one.ended, two.ended])
      expect([one.status(), two.status()]).to.deep.equal([200, 200])
    } finally {
      await service.close()
    }
  })

  it('wide answers hold all permits but one: behind a held export of the whole table, a second waits and a quarter starts at once', async () => {
    const service = await startService(db, { DB_STREAM_CONNECTIONS: '2' })
    try {
      const held = await holdExport(service.port)
      const secondWide = rawRequest(service.port, SHORT_EXPORT)
      await until(() => service.handle.pool.gate.stats.waiting === 1, 5_000, 'the second export of the whole table to wait')
      expect(service.handle.pool.gate.stats.holding, 'one permit of two is free').to.equal(1)
      const quarter = await get(service.port, QUARTER_EXPORT)
      expect(quarter.status).to.equal(200)
      expect((quarter.body as { total: number }).total).to.be.above(1_000)
      expect(secondWide.firstByteAt, 'the second wide one still waits').to.equal(undefined)
      held.socket.destroy()
      await secondWide.ended
      expect(secondWide.status()).to.equal(200)
      expect(bodyOf(secondWide).total).to.equal(BOOKINGS)
    } finally {
      await service.close()
    }
  })

  it('fair between callers: a caller holding two exports waits behind a new caller\'s first', async () => {
    const service = await startService(db, { DB_STREAM_CONNECTIONS: '2', AUTH_MODE: 'token', API_TOKENS: 'script-token,dashboard-token' })
    const script = { Authorization: 'Bearer script-token' }
    const dashboard = { Authorization: 'Bearer dashboard-token' }
    try {
      // Long exports, not wide ones: wide answers would leave the dashboard a permit at once.
      const scriptFirst = await holdExport(service.port, script, LONG_EXPORT)
      const scriptSecond = await holdExport(service.port, script, LONG_EXPORT)
      const scriptThird = rawRequest(service.port, SHORT_EXPORT, { headers: script })
      await until(() => service.handle.pool.gate.stats.waiting === 1, 5_000, 'the script\'s third to wait')
      const dashboardFirst = rawRequest(service.port, SHORT_EXPORT, { headers: dashboard, stopAfterFirstChunk: true })
      await until(() => service.handle.pool.gate.stats.waiting === 2, 5_000, 'the dashboard to wait')

      scriptFirst.socket.destroy()
      await until(() => dashboardFirst.firstByteAt !== undefined, 5_000, 'the dashboard to start')
      expect(scriptThird.firstByteAt, 'the script\'s third still waits').to.equal(undefined)
      expect(service.handle.pool.gate.stats.waiting).to.equal(1)

      scriptSecond.socket.destroy()
      await scriptThird.ended
      expect(scriptThird.status()).to.equal(200)
      dashboardFirst.socket.resume()
      await dashboardFirst.ended
      expect(dashboardFirst.status()).to.equal(200)
      expect(bodyOf(dashboardFirst).total).to.equal(BOOKINGS)
    } finally {
      await service.close()
    }
  })
})

/** server/main.ts with two workers unless `env` says otherwise. */
const startProcess = (db: TestDatabase, env: Record<string, string>): Promise<ServiceProcess> => spawnService(db, { WORKERS: '2', ...env })

/** One request on a connection of its own, so node:cluster hands each to the next worker. */
function getOnce(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: '127.0.0.1', port, path, headers, agent: false, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
  })
}

/** Kept-alive connections, `each` answered by each of the two workers (told by their log lines' request ids). */
async function socketsOnEachWorker(service: ServiceProcess, each: number): Promise<Socket[]> {
  const byWorker = new Map<unknown, Socket[]>()
  for (let i = 0; i < 40 && [...byWorker.values()].filter((list) => list.length >= each).length < 2; i++) {
    const socket = connect(service.port, '127.0.0.1')
    const requestId = `which-worker-${i}`
    await new Promise<void>((resolve, reject) => {
      let seen = ''
      const onData = (chunk: Buffer) => {
        seen += chunk.toString('latin1')
        if (!seen.includes('\r\n\r\n')) return
        socket.off('data', onData)
        resolve()
      }
      socket.on('data', onData)
      socket.once('error', reject)
      socket.write(`GET /healthz HTTP/1.1\r\nHost: test\r\nX-Request-Id: ${requestId}\r\n\r\n`)
    })
    await until(() => service.logs.some((line) => line.requestId === requestId), 5_000, 'the probe\'s log line')
    const worker = service.logs.find((line) => line.requestId === requestId)!.worker
    const list = byWorker.get(worker) ?? []
    if (list.length < each) list.push(socket)
    else socket.destroy()
    byWorker.set(worker, list)
  }
  const lists = [...byWorker.values()].filter((list) => list.length >= each)
  if (lists.length < 2) throw new Error('node:cluster did not give both workers connections')
  return lists.flat()
}

/** An export asked on a connection that is open already; the answer's bytes as rawRequest keeps them. */
function exportOn(socket: Socket, path: string): RawRequest {
  const request: RawRequest = {
    socket, firstByteAt: undefined, received: [],
    ended: new Promise<void>((resolve) => socket.once('close', () => resolve())),
    status: () => Number(Buffer.concat(request.received).toString('latin1', 9, 12)),
  }
  socket.on('data', (chunk: Buffer) => {
    request.firstByteAt ??= Date.now()
    request.received.push(chunk)
  })
  socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`)
  return request
}

describe('under load: one budget for every worker (WORKERS=2)', function () {
  this.timeout(120_000)
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('under_load_cluster')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
  })
  after(async () => { await db.drop() })

  it('DB_STREAM_CONNECTIONS=2 is the whole service\'s: six concurrent long exports never run more than two statements on the server, and all six complete', async () => {
    const service = await startProcess(db, { DB_STREAM_CONNECTIONS: '2' })
    const server = testServer()
    let most = 0
    const samples: number[] = []
    let watching = true
    // Export statements of this database's reader, running on the server now (db/snapshot.ts marks them).
    const watch = (async () => {
      while (watching) {
        const [rows] = await db.admin.query(
          `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ? AND DB = ? AND COMMAND = 'Query' AND INFO LIKE '%max_statement_time = 0 FOR%'`,
          [server.readerUser, db.name]) as unknown as [Array<{ n: number | string }>]
        most = Math.max(most, Number(rows[0]!.n))
        samples.push(Number(rows[0]!.n))
        await sleep(5)
      }
    })()
    try {
      // Three connections on each worker (node:cluster hands a connection to a worker once, when it opens),
      // so the exports cannot all land on one worker, whose own two would then look like the service's.
      const sockets = await socketsOnEachWorker(service, 3)
      // Long exports (two years), not wide ones: wide answers hold all permits but one.
      const answers = sockets.map((socket) => exportOn(socket, LONG_EXPORT))
      await Promise.all(answers.map((answer) => answer.ended))
      for (const answer of answers) {
        expect(answer.status()).to.equal(200)
        const body = bodyOf(answer)
        expect(body.total, 'two years of three').to.be.within(0.6 * BOOKINGS, 0.7 * BOOKINGS)
        expect(body.booked_slots).to.have.length(body.total)
      }
      const workers = new Set(service.logs.filter((line) => line.msg === 'request' && line.route === 'slots').map((line) => line.worker))
      expect(workers.size).to.equal(2)
      // They waited in the primary's one line.
      expect(service.logs.some((line) => line.msg === 'request' && (line.queueWaitMs as number) > 0)).to.equal(true)
    } finally {
      watching = false
      await watch
      service.child.kill('SIGKILL')
    }
    expect(most, `export statements on the server at once (samples ${samples.join('')})`).to.equal(2)
  })
})

describe('under load: AUTH_MODE=wordpress verdicts shared by every worker (WORKERS=2)', function () {
  this.timeout(120_000)
  let db: TestDatabase
  let wordpress: WordPressSite

  before(async () => {
    db = await createTestDatabase('under_load_wordpress', 'wp_', 'plugin')
    wordpress = await startWordPress(db)
  })
  after(async () => {
    await wordpress?.close()
    await db.drop()
  })

  it('a verdict is known to every worker: with WordPress stopped, twenty requests over fresh connections all answer 200, and WordPress was asked once', async () => {
    const service = await startProcess(db, { AUTH_MODE: 'wordpress', WORDPRESS_URL: wordpress.url, AUTH_CACHE_SECONDS: '120' })
    const authorization = { Authorization: `Basic ${Buffer.from(wordpress.admin).toString('base64')}` }
    try {
      const callsBefore = wordpress.credentialChecks()
      const first = await getOnce(service.port, SMALL, authorization)
      expect(first.status).to.equal(200)
      await wordpress.stop()
      const answers = []
      for (let i = 0; i < 20; i++) answers.push(await getOnce(service.port, SMALL, authorization))
      expect(answers.map((answer) => answer.status)).to.deep.equal(Array(20).fill(200))
      const workers = new Set(service.logs.filter((line) => line.msg === 'request' && line.status === 200).map((line) => line.worker))
      expect(workers.size, 'both workers answered').to.equal(2)
      expect(wordpress.credentialChecks() - callsBefore, 'calls to users/me').to.equal(1)
    } finally {
      service.child.kill('SIGKILL')
      await wordpress.start()
    }
  })
})
