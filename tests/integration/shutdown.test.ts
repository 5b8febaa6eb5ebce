// SIGTERM: the real process (server/main.ts) stops
// accepting, lets a large streamed answer in flight finish whole within
// SHUTDOWN_GRACE_MS, closes the pool and exits 0; past the grace period it cuts
// what is left and still exits 0. The same with WORKERS=2: the
// primary stops every worker that way, restarts one that dies, and gives up
// on a crash loop. With the database hung (a private MariaDB, SIGSTOPped), the
// requests still waiting when the grace runs out are answered 503.
import { expect } from 'chai'
import { connect, type Socket } from 'node:net'
import { get as httpGet } from 'node:http'
import { readdirSync, readFileSync } from 'node:fs'
import { getPriority } from 'node:os'
import { createTestDatabase, describeOwnServer, type TestDatabase } from '../support/database.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { spawnService, type ServiceDatabase, type ServiceProcess } from '../support/service.ts'
import { FIRST_SERVICE_ID } from '../../db/demo-data.ts'
import { startPrivateMariaDb, type PrivateMariaDb } from '../support/private-mariadb.ts'
import { bodyText, dechunk } from '../support/chunked.ts'
import { DEFAULT_WORKER_V8_FLAGS } from '../../server/config.ts'
import { NO_LOWERING, noLoweringRuns, runnerMayLowerNiceness } from '../support/niceness.ts'

const BOOKINGS = 100_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** Two years by day, service and status: about 34 MB of JSON, made whole in memory and sent as the client reads. */
const LARGE_SUMMARY = '/wp-json/booking-calendar/v1/summary?start=2025-01-01&end=2026-12-31&group_by=day,service,status'

type Service = ServiceProcess

/** server/main.ts over `db`, in the site's zone of Europe/Berlin. */
const startService = (db: ServiceDatabase, env: Record<string, string>): Promise<Service> => spawnService(db, { SITE_TIMEZONE: 'Europe/Berlin', ...env })

/**
 * Asks for every booking and stops reading after the first chunk, so the answer stays in flight.
 * `_fields=id` (1.3 MB) fits in the sockets' buffers: a fast service may finish writing it before a
 * short grace runs out; the whole records (26 MB) cannot.
 */
async function startSlowRequest(port: number, path = '/wp-json/booking-calendar/v1/slots?flat&_fields=id'): Promise<{ socket: Socket; received: Buffer[]; ended: Promise<void> }> {
  const socket = connect(port, '127.0.0.1')
  const received: Buffer[] = []
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  await new Promise<void>((resolve) => {
    socket.once('data', (chunk: Buffer) => {
      received.push(chunk)
      socket.pause()
      socket.on('data', (more: Buffer) => received.push(more))
      resolve()
    })
    socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`)
  })
  return { socket, received, ended }
}

/** The niceness of each thread of a process: Linux gives each thread one of its own (V8's and libuv's too). */
function nicenessOfThreads(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((thread) => getPriority(Number(thread)))
}

/** The nicenesses found over every thread of these processes, each once, in order. */
function nicenessesOf(pids: number[]): number[] {
  return [...new Set(pids.flatMap(nicenessOfThreads))].sort((a, b) => a - b)
}

/** Waits for `condition`; on timeout, `state` says what was seen instead. */
async function until(condition: () => boolean | Promise<boolean>, ms = 10_000, state?: () => string): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting${state ? `: ${state()}` : ''}`)
    await sleep(20)
  }
}

async function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(false) })
    socket.once('error', () => resolve(true))
  })
}

/** One request on its own connection (no keep-alive), so the cluster hands each to the next worker. */
function getOnce(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: '127.0.0.1', port, path, agent: false, timeout: 10_000 }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, body }))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
  })
}

/** The sum of every sample of a metric whose labels include these. */
function metricSum(text: string, name: string, labels: string[]): number {
  return text.split('\n')
    .filter((line) => line.startsWith(`${name}{`) && labels.every((label) => line.includes(label)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
}

describe('SIGTERM', function () {
  this.timeout(60_000)
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('shutdown')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
  })
  after(async () => { await db.drop() })

  for (const workers of [1, 2]) {
    describe(`WORKERS=${workers}`, () => {
      it('finishes a large streamed answer in flight whole, refuses new connections, and exits 0', async () => {
        const service = await startService(db, { SHUTDOWN_GRACE_MS: '20000', WORKERS: String(workers) })
        try {
          // Whole records: the ids alone (1.4 MB) fit the loopback's socket buffers (tcp_rmem up to 32 MB
          // here), so a fast run wrote all of it and exited before the check below (seen once, WORKERS=1).
          const slow = await startSlowRequest(service.port, '/wp-json/booking-calendar/v1/slots?flat')
          service.child.kill('SIGTERM')
          await until(() => service.logs.filter((line) => String(line.msg).startsWith('stopping')).length === workers)
          // A worker tells the primary it stopped listening over IPC: allow that message its moment.
          await until(() => refusesConnections(service.port), 2_000)
          expect(service.child.exitCode, 'still running while the answer is in flight').to.equal(null)
          slow.socket.resume()
          await slow.ended
          const raw = Buffer.concat(slow.received)
          expect(raw.toString('latin1', 0, 15)).to.equal('HTTP/1.1 200 OK')
          const body = JSON.parse(bodyText(raw))
          expect(body.total).to.equal(BOOKINGS)
          expect(body.booked_slots).to.have.length(BOOKINGS)
          expect(await service.exited).to.equal(0)
          const request = service.logs.find((line) => line.msg === 'request')
          expect(request).to.include({ route: 'slots', status: 200, rowsSent: BOOKINGS, completed: true })
          expect(service.logs.filter((line) => line.msg === 'stopped')).to.have.length(workers)
        } finally {
          service.child.kill('SIGKILL')
        }
      })

      it('finishes a large summary/ in flight (made whole in memory, sent as its client reads) whole, though its connection counts as idle to Node at its end', async () => {
        const service = await startService(db, { SHUTDOWN_GRACE_MS: '20000', WORKERS: String(workers) })
        try {
          const slow = await startSlowRequest(service.port, LARGE_SUMMARY)
          service.child.kill('SIGTERM')
          // Past the first sweep of idle connections (1 s after SIGTERM, then every 100 ms).
          await sleep(2_500)
          expect(service.child.exitCode, 'still running while the answer is in flight').to.equal(null)
          slow.socket.resume()
          await slow.ended
          const raw = Buffer.concat(slow.received)
          expect(raw.toString('latin1', 0, 15)).to.equal('HTTP/1.1 200 OK')
          // Chunked: the last chunk says the answer is whole.
          expect(JSON.parse(dechunk(raw)).groups.length).to.be.above(10_000)
          expect(await service.exited).to.equal(0)
          const request = service.logs.find((line) => line.msg === 'request')
          expect(request).to.include({ route: 'summary', status: 200, completed: true })
        } finally {
          service.child.kill('SIGKILL')
        }
      })

      it('cuts what is still in flight when SHUTDOWN_GRACE_MS runs out, and still exits 0', async () => {
        const service = await startService(db, { SHUTDOWN_GRACE_MS: '300', WORKERS: String(workers) })
        try {
          const slow = await startSlowRequest(service.port, '/wp-json/booking-calendar/v1/slots?flat')
          const sent = Date.now()
          service.child.kill('SIGTERM')
          expect(await service.exited).to.equal(0)
          expect(Date.now() - sent).to.be.below(5_000)
          slow.socket.resume()
          await slow.ended
          expect(() => JSON.parse(bodyText(Buffer.concat(slow.received)))).to.throw()
          expect(service.logs.some((line) => line.level === 40 && String(line.msg).includes('SHUTDOWN_GRACE_MS'))).to.equal(true)
          // The cut request still has its line, before the worker's last: the process once exited first.
          const request = service.logs.findIndex((line) => line.msg === 'request')
          expect(service.logs[request], 'the cut request\'s line').to.include({ route: 'slots', status: 200, completed: false })
          expect(request).to.be.below(service.logs.findIndex((line) => line.msg === 'stopped' && line.worker === service.logs[request]!.worker))
        } finally {
          service.child.kill('SIGKILL')
        }
      })
    })
  }
})

describe('WORKERS=2 (node:cluster)', function () {
  this.timeout(90_000)
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('cluster')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: 1_000 })) await db.admin.query(statement)
  })
  after(async () => { await db.drop() })

  it('both workers answer, each log line names its worker, and /metrics counts the requests of both', async () => {
    const service = await startService(db, { WORKERS: '2' })
    try {
      const path = '/wp-json/booking-calendar/v1/slots?flat&per_page=1&_fields=id'
      for (let i = 0; i < 20; i++) expect((await getOnce(service.port, path)).status).to.equal(200)
      // A worker writes its request line once the answer is out: give the last one its moment.
      await until(() => service.logs.filter((line) => line.msg === 'request').length === 20, 5_000)
      const requestLines = service.logs.filter((line) => line.msg === 'request')
      const servedBy = new Set(requestLines.map((line) => line.worker))
      expect([...servedBy].sort()).to.deep.equal([1, 2])
      expect(service.logs.filter((line) => line.msg === 'listening').map((line) => line.worker).sort()).to.deep.equal([1, 2])
      // Whichever worker the scrape reaches, it reports the requests of both.
      for (let i = 0; i < 2; i++) {
        const res = await getOnce(service.port, '/metrics')
        expect(res.status).to.equal(200)
        expect(metricSum(res.body, 'http_requests_total', ['route="slots"', 'status="200"'])).to.equal(20)
        expect(metricSum(res.body, 'booking_calendar_rows_sent_total', ['route="slots"'])).to.equal(20)
      }
      service.child.kill('SIGTERM')
      expect(await service.exited).to.equal(0)
    } finally {
      service.child.kill('SIGKILL')
    }
  })

  it('starts every worker with WORKER_V8_FLAGS, and with the sized default when it is unset', async () => {
    const flagsOfWorkers = (service: Service) => service.logs.filter((line) => line.msg === 'worker started')
      .map((line) => readFileSync(`/proc/${line.pid as number}/cmdline`, 'utf8').split('\0').filter((arg) => /^--(max|heap)-/.test(arg)))
    for (const [setting, expected] of [[undefined, [...DEFAULT_WORKER_V8_FLAGS]], ['--max-semi-space-size=3 --max-old-space-size=200', ['--max-semi-space-size=3', '--max-old-space-size=200']]] as const) {
      const service = await startService(db, { WORKERS: '2', ...(setting === undefined ? {} : { WORKER_V8_FLAGS: setting }) })
      try {
        expect(flagsOfWorkers(service)).to.deep.equal([expected, expected])
        expect((await getOnce(service.port, '/wp-json/booking-calendar/v1/slots?flat&per_page=1&_fields=id')).status).to.equal(200)
        service.child.kill('SIGTERM')
        expect(await service.exited).to.equal(0)
      } finally {
        service.child.kill('SIGKILL')
      }
    }
  })

  it('starts another worker when one dies, logs it, and keeps answering', async () => {
    const service = await startService(db, { WORKERS: '2' })
    try {
      const started = service.logs.filter((line) => line.msg === 'worker started')
      expect(started).to.have.length(2)
      process.kill(started[0]!.pid as number, 'SIGKILL')
      await until(() => service.logs.filter((line) => line.msg === 'listening').length === 3, 20_000)
      const died = service.logs.find((line) => line.msg === 'a worker died: starting another')
      expect(died).to.include({ level: 50, workerId: started[0]!.workerId, pid: started[0]!.pid, signal: 'SIGKILL' })
      expect(service.logs.filter((line) => line.msg === 'worker started')).to.have.length(3)
      for (let i = 0; i < 4; i++) expect((await getOnce(service.port, '/healthz')).status).to.equal(200)
      // A worker stopped cleanly on its own SIGTERM is started again too, logged as a stop (warn), not a death.
      const second = service.logs.filter((line) => line.msg === 'worker started')[1]!
      process.kill(second.pid as number, 'SIGTERM')
      await until(() => service.logs.filter((line) => line.msg === 'listening').length === 4, 20_000)
      expect(service.logs.find((line) => line.msg === 'a worker stopped: starting another')).to.include({ level: 40, workerId: second.workerId, code: 0 })
      for (let i = 0; i < 4; i++) expect((await getOnce(service.port, '/healthz')).status).to.equal(200)
      service.child.kill('SIGTERM')
      // A second signal while stopping is said, and changes nothing.
      await until(() => service.logs.some((line) => String(line.msg).startsWith('primary: stopping')), 5_000)
      service.child.kill('SIGTERM')
      expect(await service.exited).to.equal(0)
      expect(service.logs.some((line) => line.msg === 'already stopping: the workers still have SHUTDOWN_GRACE_MS')).to.equal(true)
    } finally {
      service.child.kill('SIGKILL')
    }
  })

  it('a worker killed while the primary hands it a connection: that connection is closed, not left open unanswered', async () => {
    const service = await startService(db, { WORKERS: '2' })
    try {
      const [stopped] = service.logs.filter((line) => line.msg === 'worker started')
      // A stopped worker takes the next connection the primary hands it, and never says so.
      process.kill(stopped!.pid as number, 'SIGSTOP')
      const ends = Array.from({ length: 4 }, () => new Promise<string>((resolve) => {
        const socket = connect(service.port, '127.0.0.1')
        let text = ''
        socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
        socket.on('error', () => { /* seen as the close */ })
        socket.on('close', () => resolve(text.startsWith('HTTP/1.1 200') ? 'answered' : 'closed'))
        socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n')
      }))
      await new Promise((resolve) => setTimeout(resolve, 500))
      process.kill(stopped!.pid as number, 'SIGKILL')
      const outcomes = await Promise.race([
        Promise.all(ends),
        new Promise<string[]>((resolve) => setTimeout(() => resolve(['a connection still open 3 s after the kill']), 3_000)),
      ])
      expect(outcomes).to.have.length(4)
      // The one handed to the stopped worker is closed without an answer; the others are answered.
      expect(outcomes.filter((outcome) => outcome === 'closed')).to.have.length.below(4)
    } finally {
      service.child.kill('SIGKILL')
    }
  })

  it('gives up and exits 1 when workers keep dying', async () => {
    const service = await startService(db, { WORKERS: '2' })
    try {
      // Every worker killed as soon as it starts: the two first ones, then restarts until the budget runs out.
      const killed = new Set<number>()
      await until(() => {
        for (const line of service.logs.filter((l) => l.msg === 'worker started')) {
          const pid = line.pid as number
          if (!killed.has(pid)) { killed.add(pid); try { process.kill(pid, 'SIGKILL') } catch { /* already gone */ } }
        }
        return service.child.exitCode !== null
      }, 60_000)
      expect(await service.exited).to.equal(1)
      expect(service.logs.filter((line) => line.msg === 'a worker died: starting another')).to.have.length(5)
      expect(service.logs.find((line) => line.level === 60)).to.include({ msg: 'workers keep dying: giving up', restarts: 5 })
    } finally {
      service.child.kill('SIGKILL')
    }
  })

  it('answers a request that arrives on a kept-alive connection at the instant of SIGTERM, with Connection: close', async () => {
    const service = await startService(db, { SHUTDOWN_GRACE_MS: '5000', WORKERS: '1' })
    try {
      const socket = connect(service.port, '127.0.0.1')
      let received = ''
      socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
      socket.on('error', () => { /* seen as a missing answer */ })
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
      socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n')
      await until(() => received.includes('{"status":"ok"}'))
      // The connection is kept alive and idle: the client sends its next request as SIGTERM arrives.
      service.child.kill('SIGTERM')
      await until(() => service.logs.some((line) => String(line.msg).startsWith('stopping')))
      socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n')
      await closed
      const answers = received.split('HTTP/1.1 ').slice(1)
      expect(answers, 'both requests answered, none reset').to.have.length(2)
      expect(answers[1]!.startsWith('200 OK')).to.equal(true)
      expect(answers[1]).to.match(/\r\nConnection: close\r\n/i)
      expect(await service.exited).to.equal(0)
    } finally {
      service.child.kill('SIGKILL')
    }
  })
})

describe('SERVICE_NICENESS', function () {
  this.timeout(90_000)
  let db: TestDatabase

  // Enough bookings that a whole-table export (26 MB) and two years of summary/ by day outlast the sockets' buffers.
  before(async () => {
    db = await createTestDatabase('niceness')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
  })
  after(async () => { await db.drop() })

  it('steps a serving process back to SERVICE_NICENESS (10 unless set) while a report is made or sent, and back after; WORKERS=1 too', async function () {
    // What the test runner runs at: a process may raise its niceness; lowering it again needs CAP_SYS_NICE (root has it here) or an RLIMIT_NICE.
    const started = getPriority()
    if (!runnerMayLowerNiceness()) this.skip()
    const cases: { workers: number; env: Record<string, string>; reporting: number }[] = [{ workers: 2, env: {}, reporting: Math.max(10, started) },
      { workers: 2, env: { SERVICE_NICENESS: '0' }, reporting: started }, { workers: 2, env: { SERVICE_NICENESS: '19' }, reporting: 19 }, { workers: 1, env: {}, reporting: Math.max(10, started) }]
    for (const { workers, env, reporting } of cases) {
      const service = await startService(db, { WORKERS: String(workers), ...env })
      try {
        const forked = service.logs.filter((line) => line.msg === 'worker started').map((line) => line.pid as number)
        expect(forked).to.have.length(workers === 1 ? 0 : workers)
        const serving = workers === 1 ? [service.child.pid!] : forked
        const what = JSON.stringify({ workers, ...env })
        expect(nicenessOfThreads(service.child.pid!).length, what).to.be.above(4)
        // With no report, every thread of every process runs as the service was started.
        expect(nicenessesOf([service.child.pid!, ...forked]), what).to.deep.equal([started])
        expect(service.logs.find((line) => typeof line.niceness === 'number'), what).to.include(reporting === started ? { level: 30, niceness: started } : { level: 30, niceness: started, reportNiceness: reporting })
        // A whole-table export (26 MB) held for a client that stopped reading: one serving process steps back, every thread of it.
        const report = await startSlowRequest(service.port, '/wp-json/booking-calendar/v1/slots?flat')
        const runningAt = (niceness: number) => serving.filter((pid) => nicenessesOf([pid]).join() === String(niceness)).length
        const seen = () => `${what}: ${JSON.stringify([service.child.pid!, ...forked].map((pid) => nicenessOfThreads(pid)))}; the export's first bytes: ${JSON.stringify(report.received[0]?.toString('latin1', 0, 300))}; logs: ${JSON.stringify(service.logs.slice(-6))}`
        if (reporting === started) {
          // SERVICE_NICENESS=0: the answer is in flight (its first bytes came), and nothing stepped back.
          expect(nicenessesOf([service.child.pid!, ...forked]), what).to.deep.equal([started])
        } else {
          await until(() => runningAt(reporting) === 1, 5_000, seen)
          expect(runningAt(started), what).to.equal(serving.length - 1)
          if (workers > 1) expect(nicenessesOf([service.child.pid!]), `${what}: the primary`).to.deep.equal([started])
        }
        // The client hangs up: back to the niceness it was started at.
        report.socket.destroy()
        await until(() => nicenessesOf([service.child.pid!, ...forked]).join() === String(started), 5_000, seen)
        if (reporting !== started) {
          // Two years of summary/ by day (made whole, then sent as its client reads) is a report too, though it takes no permit.
          const summary = await startSlowRequest(service.port, LARGE_SUMMARY)
          await until(() => runningAt(reporting) === 1, 5_000, seen)
          summary.socket.destroy()
          await until(() => nicenessesOf([service.child.pid!, ...forked]).join() === String(started), 5_000, seen)
        }
        expect((await getOnce(service.port, '/wp-json/booking-calendar/v1/slots?flat&per_page=1&_fields=id')).status).to.equal(200)
        service.child.kill('SIGTERM')
        expect(await service.exited).to.equal(0)
      } finally {
        service.child.kill('SIGKILL')
      }
    }
  })

  it('takes SERVICE_NICENESS for good at start where a niceness cannot be lowered again (no CAP_SYS_NICE, RLIMIT_NICE 0)', async function () {
    // A runner that may lower a niceness runs the service under prlimit(1) and setpriv(1); one that may not runs it as it is.
    const under = runnerMayLowerNiceness() ? NO_LOWERING : []
    if (getPriority() !== 0 || (under.length > 0 && !noLoweringRuns())) this.skip()
    const service = await spawnService(db, { SITE_TIMEZONE: 'Europe/Berlin', WORKERS: '2' }, under)
    try {
      const forked = service.logs.filter((line) => line.msg === 'worker started').map((line) => line.pid as number)
      expect(forked).to.have.length(2)
      expect(nicenessesOf([service.child.pid!, ...forked])).to.deep.equal([10])
      expect(service.logs.find((line) => typeof line.niceness === 'number')).to.include({ level: 30, niceness: 10 }).and.not.have.property('reportNiceness')
      const report = await startSlowRequest(service.port, '/wp-json/booking-calendar/v1/slots?flat')
      report.socket.destroy()
      await report.ended
      expect((await getOnce(service.port, '/wp-json/booking-calendar/v1/slots?flat&per_page=1&_fields=id')).status).to.equal(200)
      expect(nicenessesOf([service.child.pid!, ...forked])).to.deep.equal([10])
      expect(service.logs.filter((line) => line.level === 40)).to.deep.equal([])
      service.child.kill('SIGTERM')
      expect(await service.exited).to.equal(0)
    } finally {
      service.child.kill('SIGKILL')
    }
  })
})

describeOwnServer('SIGTERM while the database hangs (a private MariaDB, SIGSTOPped)', 'it freezes a MariaDB of its own', function () {
  this.timeout(60_000)
  let privateDb: PrivateMariaDb
  const SMALL = `/wp-json/booking-calendar/v1/slots?service=${FIRST_SERVICE_ID}&start=2026-03-01&end=2026-03-31`

  before(async () => { privateDb = await startPrivateMariaDb('stopping', 2_000) })
  after(async () => { await privateDb.stop() })

  for (const workers of [1, 2]) {
    it(`WORKERS=${workers}: a request still waiting for the database when SHUTDOWN_GRACE_MS runs out is answered 503 with Retry-After, not left without an answer`, async () => {
      // The statement's own bound (QUERY_TIMEOUT_MS) far beyond the grace: only the stop can answer.
      const service = await startService({ databaseUrl: privateDb.databaseUrl, prefix: 'wp_' }, {
        SHUTDOWN_GRACE_MS: '1000', QUERY_TIMEOUT_MS: '30000', WORKERS: String(workers),
      })
      try {
        // Each worker gets a connection to the database while it answers (a new one could not be made once it hangs).
        for (let i = 0; i < 4 * workers; i++) expect((await getOnce(service.port, SMALL)).status).to.equal(200)
        process.kill(privateDb.pid(), 'SIGSTOP')
        const waiting = Array.from({ length: 2 * workers }, () => rawAnswer(service.port, SMALL))
        await sleep(300)
        const sent = Date.now()
        service.child.kill('SIGTERM')
        const answers = await Promise.all(waiting)
        expect(Date.now() - sent, 'answered once the grace ran out').to.be.below(4_000)
        for (const answer of answers) {
          expect(answer.head, 'an answer, not a connection closed without one').to.match(/^HTTP\/1\.1 503 /)
          expect(answer.head).to.match(/\r\nRetry-After: 5\r\n/i)
          expect(answer.head).to.match(/\r\nConnection: close\r\n/i)
          expect(JSON.parse(answer.body)).to.deep.equal({
            code: 'rest_service_stopping',
            message: 'The service was stopping and could not answer within its grace period. Try again shortly.',
            data: { status: 503 },
          })
        }
        expect(await service.exited).to.equal(0)
        const lines = service.logs.filter((line) => line.msg === 'request' && line.status === 503)
        expect(lines).to.have.length(2 * workers)
        for (const line of lines) expect(line).to.include({ route: 'slots', completed: true })
        // The handlers, failing afterwards as the pool closes, log nothing of an answer that was never theirs.
        expect(service.logs.filter((line) => line.msg === 'failed after the answer was sent' || line.msg === 'request failed')).to.deep.equal([])
      } finally {
        try { process.kill(privateDb.pid(), 'SIGCONT') } catch { /* gone */ }
        service.child.kill('SIGKILL')
      }
    })
  }
})

/** A GET on its own connection, read to its close: the head and the body, both empty when the connection closed without an answer. */
function rawAnswer(port: number, path: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const received: Buffer[] = []
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    socket.on('error', () => { /* seen as the close */ })
    socket.once('close', () => {
      const text = Buffer.concat(received).toString('utf8')
      const at = text.indexOf('\r\n\r\n')
      resolve(at < 0 ? { head: text, body: '' } : { head: text.slice(0, at + 2), body: text.slice(at + 4) })
    })
    socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`)
  })
}
