// npm run faults:held-exports (issue 52): what slow clients and a flood of
// conditional requests cost everyone else, at the service's defaults (WORKERS,
// DB_STREAM_CONNECTIONS, DB_QUEUE_*) on a private MariaDB with the demo data:
//
// (i) 40 clients read the full export at 2 KB/s. Meanwhile a quarter's export
//     and a quarter's calendar feed are each timed against their time alone
//     (three rounds: each on its own, then both at the same moment),
//     small requests' p99 against their p99 idle (beside the readers alone for
//     5 s, the target; then beside the rounds too); the workers' largest RSS and
//     the largest size of the service's temporary files (its TMPDIR, a private
//     directory) are sampled every 250 ms.
// (ii) 24 clients send If-None-Match on the whole table at once, for
//     FLOOD_SECONDS: the most statements on the bookings table running at once
//     (information_schema.PROCESSLIST, every 20 ms) against
//     DB_STREAM_CONNECTIONS; then the same flood with small requests beside it,
//     their p99, and the flood's statuses.
//
// It builds this checkout and runs dist/server/main.js, so it measures whichever
// branch is checked out, as an operator runs it. Loopback only; bounded in time and count. Targets (issue 52):
// the quarter and the feed within 2× alone, small p99 unchanged (here: within
// 1.5× idle plus 20 ms), worker RSS ≤ 150 MB, temporary files within
// FAULTS_DISK_BOUND_MB when given, and never more statements than permits.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'
import { startMariaDb, stopOnExit, findFreePort } from '../mariadb.ts'
import { FIRST_SERVICE_ID } from '../../db/demo-data.ts'
import { DEFAULT_STREAM_CONNECTIONS } from '../../server/tools.ts'
import { DEFAULT_SERVICE_NICENESS } from '../../server/config.ts'
import { FAULTS_READER as READER, seedFaultsDatabase } from './faults-database.ts'

const BOOKINGS = Number(process.env.FAULTS_BOOKINGS ?? process.env.BENCH_BOOKINGS ?? 100_000)
const READERS = 40
const READ_BYTES_PER_SECOND = 2 * 1024
const READ_SECONDS = Number(process.env.READ_SECONDS ?? 20)
const FLOOD_CLIENTS = 24
const FLOOD_SECONDS = Number(process.env.FLOOD_SECONDS ?? 10)
const SMALL_WORKERS = 4
const STREAM_PERMITS = Number(process.env.DB_STREAM_CONNECTIONS ?? DEFAULT_STREAM_CONNECTIONS)
const DISK_BOUND_MB = process.env.FAULTS_DISK_BOUND_MB === undefined ? undefined : Number(process.env.FAULTS_DISK_BOUND_MB)
const PREFIX = '/wp-json/booking-calendar/v1'
const EVERYTHING = `${PREFIX}/slots`
const QUARTER = `${PREFIX}/slots?start=2026-01-01&end=2026-03-31&flat`
const FEED = `${PREFIX}/slots?format=ics&start=2026-01-01&end=2026-03-31`
const say = (line = '') => process.stdout.write(`${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
const median = (values: number[]) => percentile(values, 50)
const tally = (statuses: number[]) => {
  const counts = new Map<number, number>()
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1)
  return [...counts].sort((a, b) => a[0] - b[0]).map(([status, n]) => `${n} × ${status === 0 ? 'no answer' : status}`).join(', ')
}

/** One GET, its body read and dropped: status (0 without an answer) and ms to the last byte. */
async function timedGet(url: string, headers: Record<string, string> = {}, timeoutMs = 90_000): Promise<{ status: number; ms: number }> {
  const started = Date.now()
  const status = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) }).then(async (r) => { await r.arrayBuffer(); return r.status }, () => 0)
  return { status, ms: Date.now() - started }
}

/** Small one-service requests from SMALL_WORKERS clients, 50 ms apart, until `done()`. */
async function smallRequests(base: string, done: () => boolean): Promise<Array<{ ms: number; status: number }>> {
  const small: Array<{ ms: number; status: number }> = []
  const day = (n: number) => `2026-03-${String(n).padStart(2, '0')}`
  await Promise.all(Array.from({ length: SMALL_WORKERS }, async (_, worker) => {
    for (let n = worker; !done(); n += SMALL_WORKERS) {
      small.push(await timedGet(`${base}${PREFIX}/slots?service=${FIRST_SERVICE_ID + (n % 5)}&start=${day(1 + (n % 20))}&end=${day(7 + (n % 20))}`, {}, 30_000))
      await sleep(50)
    }
  }))
  return small
}
const smallLine = (small: Array<{ ms: number; status: number }>) =>
  `${small.length} answers (${tally(small.map((s) => s.status))}), p50 ${median(small.map((s) => s.ms))} ms, p99 ${percentile(small.map((s) => s.ms), 99)} ms`

/** Bytes of every file under `dir`, now; at the top, tsx's own cache (tsx-<uid>) left out: it is no answer's. */
function bytesUnder(dir: string, top = true): number {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (top && entry.name.startsWith('tsx-')) continue
    const path = join(dir, entry.name)
    try {
      total += entry.isDirectory() ? bytesUnder(path, false) : statSync(path).size
    } catch { /* removed meanwhile */ }
  }
  return total
}

/** Resident MB of a process (VmRSS), or 0 when it is gone. */
function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

const mariadb = await startMariaDb({ bufferPoolMb: 512 })
const serviceTmp = mkdtempSync(join(tmpdir(), 'bc-held-exports-'))
let service: ReturnType<typeof spawn> | undefined
stopOnExit(mariadb, () => { service?.kill('SIGKILL') })
try {
  const seededMs = await seedFaultsDatabase(mariadb, BOOKINGS)
  say(`${BOOKINGS.toLocaleString('en')} bookings with the recommended indexes: ${(seededMs / 1000).toFixed(1)} s`)

  // The build an operator runs (`npm start`, the Dockerfile): under tsx each worker's RSS was about
  // 30 MB larger (its compiler and source maps), which is no answer's memory.
  const built = spawnSync('npm', ['run', 'build'], { cwd: new URL('../../', import.meta.url).pathname, encoding: 'utf8' })
  if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr}`)
  const port = await findFreePort()
  service = spawn(process.execPath, [new URL('../../dist/server/main.js', import.meta.url).pathname], {
    env: {
      PATH: process.env.PATH, PORT: String(port), SITE_TIMEZONE: 'UTC', LOG_LEVEL: 'warn', TMPDIR: serviceTmp,
      DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/faults`,
      ...Object.fromEntries(['DB_STREAM_CONNECTIONS', 'SERVICE_NICENESS'].flatMap((name) => process.env[name] === undefined ? [] : [[name, process.env[name]]])),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; !(await fetch(`${base}/readyz`).then((r) => r.ok, () => false)); i++) {
    if (i > 1200) throw new Error('the service did not start within 120 s')
    await sleep(100)
  }
  // The cluster's workers run main.js too.
  const workerPids = () => spawnSync('pgrep', ['-P', String(service!.pid)], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number)
    .filter((pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main.js') } catch { return false } })
  const setting = (name: string, fallback: number) => `${name}=${process.env[name] ?? `${fallback} (default)`}`
  say(`service: ${setting('DB_STREAM_CONNECTIONS', DEFAULT_STREAM_CONNECTIONS)}, ${setting('SERVICE_NICENESS', DEFAULT_SERVICE_NICENESS)}, ${workerPids().length || 1} worker(s), TMPDIR ${serviceTmp}`)

  // --- (i) alone -------------------------------------------------------------------
  const alone = { quarter: [] as number[], feed: [] as number[] }
  for (let i = 0; i < 3; i++) {
    alone.quarter.push((await timedGet(`${base}${QUARTER}`)).ms)
    alone.feed.push((await timedGet(`${base}${FEED}`)).ms)
  }
  const idleUntil = Date.now() + 5_000
  const idle = await smallRequests(base, () => Date.now() > idleUntil)
  const idleP99 = percentile(idle.map((s) => s.ms), 99)
  say()
  say(`(i) alone: quarter export median ${median(alone.quarter)} ms, feed median ${median(alone.feed)} ms; small requests idle: ${smallLine(idle)}`)
  // For reference, no slow reader: clients downloading the full export as fast as they can, again
  // and again, beside the small requests: one, then as many as there are stream permits. With
  // those, one export is made while the other is sent, so the database and a worker make whole-table
  // exports without a pause (they hold every permit but one, decision 0031), as they do below with
  // forty readers waiting. What is left of the small requests' p99 with forty slow readers, beyond
  // the second reference, is what slow readers cost.
  const besideFastClients = async (clients: number) => {
    const until = Date.now() + 5_000
    let exports = 0
    // By curl, in a process of its own: read by this process, the export's 30 MB took this event
    // loop from the small requests it times (their p99 read 189 ms; by curl, 31 to 57 ms).
    const loop = async () => {
      while (Date.now() < until) {
        const status = await new Promise<string>((resolve) => {
          const curl = spawn('curl', ['-s', '-o', '/dev/null', '--max-time', '60', '-w', '%{http_code}', `${base}${EVERYTHING}`], { stdio: ['ignore', 'pipe', 'ignore'] })
          let out = ''
          curl.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
          curl.on('close', () => resolve(out))
        })
        if (status === '200') exports++
      }
    }
    const loops = Promise.all(Array.from({ length: clients }, loop))
    const small = await smallRequests(base, () => Date.now() > until)
    await loops
    const p99 = percentile(small.map((s) => s.ms), 99)
    say(`(i) reference: ${clients === 1 ? 'one fast client' : `${clients} fast clients`} (curl) downloading the full export in a loop (${exports} × 200): small requests ${smallLine(small)}; p99 ${(p99 / idleP99).toFixed(2)}× idle`)
    return p99
  }
  await besideFastClients(1)
  const permitsFastP99 = await besideFastClients(STREAM_PERMITS)

  // --- (i) with 40 slow readers ---------------------------------------------------------
  let peakRssMb = 0
  let peakTmpBytes = 0
  // The workers' pids once: pgrep run every 250 ms (spawnSync) held this process's event loop, in
  // which the small requests are timed, for its every run. A worker forked again meanwhile is not
  // sampled; its RSS starts over anyway.
  const sampledPids = workerPids()
  const sampler = setInterval(() => {
    for (const pid of sampledPids) peakRssMb = Math.max(peakRssMb, rssMb(pid))
    peakTmpBytes = Math.max(peakTmpBytes, bytesUnder(serviceTmp))
  }, 250)
  interface Reader { socket: Socket; started: number; status?: number; bytes: number }
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
        if (match) reader.status = Number(match[1])
      }
      // 2 KB/s: pause until the bytes read fit the time spent.
      const ahead = reader.bytes / READ_BYTES_PER_SECOND * 1000 - (Date.now() - reader.started)
      if (ahead > 0) {
        reader.socket.pause()
        setTimeout(() => reader.socket.resume(), ahead)
      }
    })
    reader.socket.write(`GET ${EVERYTHING} HTTP/1.1\r\nHost: faults\r\nConnection: close\r\n\r\n`)
    readers.push(reader)
  }
  await sleep(3_000)
  // Small requests beside the readers alone for 5 s: what slow readers cost them (the target). Beside
  // the rounds below they also share the cores with a quarter's or a feed's export: shown apart.
  const readersOnlyUntil = Date.now() + 5_000
  const readersOnly = await smallRequests(base, () => Date.now() > readersOnlyUntil)
  const since = Date.now()
  // Three rounds while the readers' exports are still being read out of the database: the
  // quarter, then the feed, each on its own (the targets); then both asked at the same moment,
  // which share the one permit the full exports leave (decision 0031), shown beside them.
  type Timed = { status: number; ms: number }
  const during = { quarter: [] as Timed[], feed: [] as Timed[], quarterAtOnce: [] as Timed[], feedAtOnce: [] as Timed[] }
  let timed = false
  const smallDone = smallRequests(base, () => timed && Date.now() > since + READ_SECONDS * 1000)
  for (let round = 0; round < 3; round++) {
    during.quarter.push(await timedGet(`${base}${QUARTER}`))
    during.feed.push(await timedGet(`${base}${FEED}`))
    const [q, f] = await Promise.all([timedGet(`${base}${QUARTER}`), timedGet(`${base}${FEED}`)])
    during.quarterAtOnce.push(q)
    during.feedAtOnce.push(f)
  }
  // Readers with no byte yet: their exports still wait for the database, so the rounds ran beside its work.
  const readersStillWaiting = readers.filter((r) => r.status === undefined).length
  timed = true
  const duringRounds = await smallDone
  clearInterval(sampler)
  const busyP99 = percentile(readersOnly.map((s) => s.ms), 99)
  const roundsP99 = percentile(duringRounds.map((s) => s.ms), 99)
  const readerStatuses = readers.map((r) => r.status ?? 0)
  for (const reader of readers) reader.socket.destroy()
  // The median of the rounds against the median alone; a round that was not a 200 fails the figure.
  const ratio = (times: Timed[], aloneTimes: number[]) => (times.every((t) => t.status === 200) ? median(times.map((t) => t.ms)) / median(aloneTimes) : Infinity)
  const line = (times: Timed[]) => `${tally(times.map((t) => t.status))}, ${times.map((t) => t.ms).join(' / ')} ms`
  const quarterRatio = ratio(during.quarter, alone.quarter)
  const feedRatio = ratio(during.feed, alone.feed)
  say(`(i) with ${READERS} readers of the full export at ${READ_BYTES_PER_SECOND / 1024} KB/s (their answers: ${tally(readerStatuses)}; ${readersStillWaiting} still waiting for the database when the rounds ended):`)
  say(`  quarter export, on its own: ${line(during.quarter)}; median ${quarterRatio.toFixed(2)}× alone (target ≤ 2×)`)
  say(`  feed, on its own: ${line(during.feed)}; median ${feedRatio.toFixed(2)}× alone (target ≤ 2×)`)
  say(`  both asked at the same moment: quarter ${line(during.quarterAtOnce)} (${ratio(during.quarterAtOnce, alone.quarter).toFixed(2)}×), feed ${line(during.feedAtOnce)} (${ratio(during.feedAtOnce, alone.feed).toFixed(2)}×)`)
  say(`  small requests beside the readers alone: ${smallLine(readersOnly)}; p99 ${(busyP99 / idleP99).toFixed(2)}× idle (target: within 1.5× idle + 20 ms)`)
  say(`    beside ${STREAM_PERMITS} fast client(s) asking for the same exports, no slow reader: p99 ${permitsFastP99} ms; the slow readers' own share: ${busyP99 - permitsFastP99} ms`)
  say(`  small requests beside the rounds too: ${smallLine(duringRounds)}; p99 ${(roundsP99 / idleP99).toFixed(2)}× idle`)
  say(`  largest worker RSS: ${peakRssMb.toFixed(0)} MB (target ≤ 150 MB); temporary files at most: ${(peakTmpBytes / 1e6).toFixed(1)} MB${DISK_BOUND_MB === undefined ? '' : ` (bound ${DISK_BOUND_MB} MB)`}`)
  await sleep(2_000)

  // --- (ii) a flood of If-None-Match on the whole table ------------------------------------------------
  const whole = await fetch(`${base}${EVERYTHING}`)
  await whole.arrayBuffer()
  const etag = whole.headers.get('etag')
  say()
  say(`(ii) the whole table: ${whole.status}, ETag ${etag === null ? 'none (untagged: every If-None-Match is a full answer)' : etag}`)
  const watcher = await mysql.createConnection({ host: mariadb.host, port: mariadb.port, user: READER.user, password: READER.password, database: 'faults' })
  const flood = async (withSmall: boolean) => {
    const until = Date.now() + FLOOD_SECONDS * 1000
    let most = 0
    let watching = true
    const watch = (async () => {
      while (watching) {
        const [rows] = await watcher.query(`SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
          WHERE USER = ? AND COMMAND = 'Query' AND INFO LIKE '%booking_calendar_bookings%' AND ID <> CONNECTION_ID()`, [READER.user])
        most = Math.max(most, Number((rows as Array<{ n: number }>)[0]!.n))
        await sleep(20)
      }
    })()
    const statuses: number[] = []
    const times: number[] = []
    const clients = Promise.all(Array.from({ length: FLOOD_CLIENTS }, async () => {
      while (Date.now() < until) {
        const answer = await timedGet(`${base}${EVERYTHING}`, etag === null ? {} : { 'If-None-Match': etag }, 60_000)
        statuses.push(answer.status)
        times.push(answer.ms)
      }
    }))
    const small = withSmall ? smallRequests(base, () => Date.now() > until) : Promise.resolve([])
    const [, smallDone] = await Promise.all([clients, small])
    watching = false
    await watch
    return { most, statuses, times, small: smallDone }
  }
  const alone2 = await flood(false)
  say(`  ${FLOOD_CLIENTS} clients for ${FLOOD_SECONDS} s: ${tally(alone2.statuses)}, p50 ${median(alone2.times)} ms; ` +
    `the most statements on the bookings table at once: ${alone2.most} (DB_STREAM_CONNECTIONS ${STREAM_PERMITS}; target ≤ ${STREAM_PERMITS})`)
  await sleep(2_000)
  const beside = await flood(true)
  say(`  again, with small requests beside: flood ${tally(beside.statuses)}; the most at once ${beside.most}; small requests: ${smallLine(beside.small)} (idle p99 ${idleP99} ms)`)
  await watcher.end()

  const met = [
    quarterRatio <= 2, feedRatio <= 2, busyP99 <= 1.5 * idleP99 + 20, peakRssMb <= 150,
    DISK_BOUND_MB === undefined || peakTmpBytes <= DISK_BOUND_MB * 1e6, Math.max(alone2.most, beside.most) <= STREAM_PERMITS,
  ]
  say()
  say(met.every(Boolean) ? 'all targets met' : `TARGETS MISSED (${met.filter((ok) => !ok).length} of ${met.length})`)
  process.exitCode = met.every(Boolean) ? 0 : 1
} finally {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service!.once('exit', resolve))
    service.kill('SIGTERM')
    await Promise.race([exited, sleep(15_000)])
    service.kill('SIGKILL')
  }
  rmSync(serviceTmp, { recursive: true, force: true })
  await mariadb.stop()
}
