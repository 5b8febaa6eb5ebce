// npm run faults:slow-readers: 40 clients read the full export at
// 20 KB/s while small one-service requests keep coming, against the service
// with DB_POOL_SIZE=10 on a private MariaDB. Prints the issue's targets: small
// requests' p99 < 1 s; each export either streams or is refused with 503
// within 2 s; the database connections free within 2 s of the readers leaving.
// Loopback only; bounded in time (READ_SECONDS) and count.
import { spawn } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { startMariaDb, stopOnExit, findFreePort } from '../mariadb.ts'
import { FIRST_SERVICE_ID } from '../../db/demo-data.ts'
import { FAULTS_READER as READER, seedFaultsDatabase } from './faults-database.ts'

const BOOKINGS = Number(process.env.FAULTS_BOOKINGS ?? 100_000)
const READERS = 40
const READ_BYTES_PER_SECOND = 20 * 1024
const READ_SECONDS = Number(process.env.READ_SECONDS ?? 15)
const SMALL_WORKERS = 4
const say = (line = '') => process.stdout.write(`${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const mariadb = await startMariaDb({ bufferPoolMb: 512 })
let service: ReturnType<typeof spawn> | undefined
stopOnExit(mariadb, () => { service?.kill('SIGKILL') })
try {
  const seededMs = await seedFaultsDatabase(mariadb, BOOKINGS)
  say(`${BOOKINGS.toLocaleString('en')} bookings with the recommended indexes: ${(seededMs / 1000).toFixed(1)} s`)

  const port = await findFreePort()
  const env = { DB_POOL_SIZE: '10', LOG_LEVEL: 'warn' }
  service = spawn(process.execPath, ['--import', 'tsx', new URL('../../server/main.ts', import.meta.url).pathname], {
    env: {
      PATH: process.env.PATH, PORT: String(port), SITE_TIMEZONE: 'UTC', ...env,
      DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/faults`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; !(await fetch(`${base}/readyz`).then((r) => r.ok, () => false)); i++) {
    if (i > 200) throw new Error('the service did not start within 20 s')
    await sleep(100)
  }
  say(`service: ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}, the rest default; ${READERS} readers at ${READ_BYTES_PER_SECOND / 1024} KB/s for ${READ_SECONDS} s`)

  // --- the readers -----------------------------------------------------------
  interface Reader { socket: Socket; started: number; statusAt?: number; status?: number; bytes: number }
  const readers: Reader[] = []
  for (let i = 0; i < READERS; i++) {
    const reader: Reader = { socket: connect(port, '127.0.0.1'), started: Date.now(), bytes: 0 }
    let head = ''
    reader.socket.on('error', () => { /* the end of the scenario */ })
    reader.socket.on('data', (chunk: Buffer) => {
      reader.bytes += chunk.length
      if (reader.status === undefined) {
        head += chunk.toString('latin1', 0, Math.min(chunk.length, 64))
        const match = /^HTTP\/1\.1 (\d{3})/.exec(head)
        if (match) { reader.status = Number(match[1]); reader.statusAt = Date.now() }
      }
      // 20 KB/s: pause until the bytes read fit the time spent.
      const ahead = reader.bytes / READ_BYTES_PER_SECOND * 1000 - (Date.now() - reader.started)
      if (ahead > 0) {
        reader.socket.pause()
        setTimeout(() => reader.socket.resume(), ahead)
      }
    })
    reader.socket.write('GET /wp-json/booking-calendar/v1/slots HTTP/1.1\r\nHost: faults\r\nConnection: close\r\n\r\n')
    readers.push(reader)
  }

  // --- small requests alongside -----------------------------------------------
  const small: { ms: number; status: number }[] = []
  const until = Date.now() + READ_SECONDS * 1000
  const day = (n: number) => `2026-03-${String(n).padStart(2, '0')}`
  await Promise.all(Array.from({ length: SMALL_WORKERS }, async (_, worker) => {
    for (let n = worker; Date.now() < until; n += SMALL_WORKERS) {
      const started = Date.now()
      const status = await fetch(`${base}/wp-json/booking-calendar/v1/slots?service=${FIRST_SERVICE_ID + (n % 5)}&start=${day(1 + (n % 20))}&end=${day(7 + (n % 20))}`,
        { signal: AbortSignal.timeout(30_000) }).then(async (r) => { await r.arrayBuffer(); return r.status }, () => 0)
      small.push({ ms: Date.now() - started, status })
      await sleep(50)
    }
  }))

  // --- the readers leave --------------------------------------------------------
  const inUse = async () => {
    const text = await (await fetch(`${base}/metrics`)).text()
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN)
    return value('booking_calendar_db_pool_connections\\{state="in_use"\\}') + value('booking_calendar_db_stream_connections')
  }
  const heldBefore = await inUse()
  const left = Date.now()
  for (const reader of readers) reader.socket.destroy()
  let freeAfterMs = NaN
  while (Date.now() - left < 10_000) {
    if ((await inUse()) === 0) { freeAfterMs = Date.now() - left; break }
    await sleep(20)
  }

  // --- figures -------------------------------------------------------------------
  const streamed = readers.filter((r) => r.status === 200)
  const refused = readers.filter((r) => r.status === 503)
  const silent = readers.filter((r) => r.status === undefined)
  const statusMs = readers.filter((r) => r.statusAt !== undefined).map((r) => r.statusAt! - r.started)
  const smallOk = small.filter((s) => s.status === 200)
  say()
  say(`exports: ${streamed.length} streaming (200), ${refused.length} refused (503), ${silent.length} without a status line; ` +
    `status line after at most ${Math.max(...statusMs)} ms (target: 200 or 503 within 2000 ms)`)
  const spread = (list: Reader[]) => list.map((r) => r.statusAt! - r.started).sort((a, b) => a - b)
  say(`  ms to the status line, streaming: ${JSON.stringify(spread(streamed))}; refused: p50 ${percentile(spread(refused), 50)}, max ${Math.max(...spread(refused))}`)
  say(`small requests: ${small.length} sent, ${smallOk.length} answered 200, others ${JSON.stringify(small.filter((s) => s.status !== 200).map((s) => s.status))}; ` +
    `p50 ${percentile(small.map((s) => s.ms), 50)} ms, p99 ${percentile(small.map((s) => s.ms), 99)} ms, max ${Math.max(...small.map((s) => s.ms))} ms (target: p99 < 1000 ms)`)
  say(`database connections held by the readers when they left: ${heldBefore}; all free after ${freeAfterMs} ms (target: within 2000 ms)`)
  const pass = silent.length === 0 && Math.max(...statusMs) < 2000 && percentile(small.map((s) => s.ms), 99) < 1000 && freeAfterMs < 2000
  say(pass ? 'all targets met' : 'TARGETS MISSED')
  process.exitCode = pass ? 0 : 1
} finally {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service!.once('exit', resolve))
    service.kill('SIGTERM')
    await Promise.race([exited, sleep(15_000)])
    service.kill('SIGKILL')
  }
  await mariadb.stop()
}
