// SIGTERM (issue 6, "Operations"): the real process (server/main.ts) stops
// accepting, lets a large streamed answer in flight finish whole within
// SHUTDOWN_GRACE_MS, closes the pool and exits 0; past the grace period it cuts
// what is left and still exits 0.
import { expect } from 'chai'
import { spawn, type ChildProcess } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { createTestDatabase, testServer, type TestDatabase } from '../support/database.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { findFreePort } from '../../scripts/mariadb.ts'

const BOOKINGS = 100_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Service {
  child: ChildProcess
  port: number
  logs: Record<string, unknown>[]
  exited: Promise<number | null>
}

async function startService(db: TestDatabase, env: Record<string, string>): Promise<Service> {
  const server = testServer()
  const port = await findFreePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      DATABASE_URL: `mysql://${server.readerUser}:${server.readerPassword}@${server.host}:${server.port}/${db.name}`,
      TABLE_PREFIX: db.prefix,
      SITE_TIMEZONE: 'Europe/Berlin',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const logs: Record<string, unknown>[] = []
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) if (line.trim()) logs.push(JSON.parse(line))
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const deadline = Date.now() + 20_000
  while (!logs.some((line) => line.msg === 'listening')) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before listening`)
    if (Date.now() > deadline) throw new Error('the service did not listen within 20 s')
    await sleep(50)
  }
  return { child, port, logs, exited }
}

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

/** The body of a chunked HTTP/1.1 answer. */
function dechunk(raw: Buffer): string {
  const text = raw.toString('latin1')
  let at = text.indexOf('\r\n\r\n') + 4
  const parts: Buffer[] = []
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at)
    const size = parseInt(text.slice(at, lineEnd), 16)
    if (!(size > 0)) break
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
  return Buffer.concat(parts).toString('utf8')
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
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

describe('SIGTERM', function () {
  this.timeout(60_000)
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('shutdown')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
  })
  after(async () => { await db.drop() })

  it('finishes a large streamed answer in flight whole, refuses new connections, and exits 0', async () => {
    const service = await startService(db, { SHUTDOWN_GRACE_MS: '20000' })
    try {
      const slow = await startSlowRequest(service.port)
      service.child.kill('SIGTERM')
      await until(() => service.logs.some((line) => String(line.msg).startsWith('stopping')))
      expect(await refusesConnections(service.port), 'a new connection after SIGTERM').to.equal(true)
      expect(service.child.exitCode, 'still running while the answer is in flight').to.equal(null)
      slow.socket.resume()
      await slow.ended
      const raw = Buffer.concat(slow.received)
      expect(raw.toString('latin1', 0, 15)).to.equal('HTTP/1.1 200 OK')
      const body = JSON.parse(dechunk(raw))
      expect(body.total).to.equal(BOOKINGS)
      expect(body.booked_slots).to.have.length(BOOKINGS)
      expect(await service.exited).to.equal(0)
      const request = service.logs.find((line) => line.msg === 'request')
      expect(request).to.include({ route: 'slots', status: 200, rowsSent: BOOKINGS, completed: true })
      expect(service.logs.map((line) => line.msg)).to.include('stopped')
    } finally {
      service.child.kill('SIGKILL')
    }
  })

  it('cuts what is still in flight when SHUTDOWN_GRACE_MS runs out, and still exits 0', async () => {
    const service = await startService(db, { SHUTDOWN_GRACE_MS: '300' })
    try {
      const slow = await startSlowRequest(service.port, '/wp-json/booking-calendar/v1/slots?flat')
      const sent = Date.now()
      service.child.kill('SIGTERM')
      expect(await service.exited).to.equal(0)
      expect(Date.now() - sent).to.be.below(5_000)
      slow.socket.resume()
      await slow.ended
      expect(() => JSON.parse(dechunk(Buffer.concat(slow.received)))).to.throw()
      expect(service.logs.some((line) => line.level === 40 && String(line.msg).includes('SHUTDOWN_GRACE_MS'))).to.equal(true)
    } finally {
      service.child.kill('SIGKILL')
    }
  })
})
