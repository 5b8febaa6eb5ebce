// npm run bench (issue 5): the service side by side with what a user would use
// instead, the raw SQL through mysql2 and a WordPress REST route in PHP, on a
// million bookings, once without and once with the indexes we recommend.
// Loopback only; every load is bounded in time. Prints one table and writes it,
// with the machine's cores and memory, to scripts/bench/results.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { get as httpGet } from 'node:http'
import { join } from 'node:path'
import { startMariaDb, stopOnExit, findFreePort } from '../mariadb.ts'
import { installSitePhp, prepareWordPress } from '../wordpress.ts'
import { pluginTablesSql } from '../../db/schema.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { addRecommendedIndexes, BENCH_DATA, BENCH_DATABASE, READER, RESULTS_FILE } from './dataset.ts'
import { BENCH_QUERIES, type BenchQuery } from './queries.ts'
import { deepPageLine } from './deep-page.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
/** BENCH_ONLY=a,d runs some queries; BENCH_PHASES=indexes only the indexed phase (for quick comparisons, not for results.md). */
const ONLY = (process.env.BENCH_ONLY ?? 'a,b,c,d').split(',')
const PHASES = process.env.BENCH_PHASES === 'indexes' ? ['with the recommended indexes'] as const : ['without indexes', 'with the recommended indexes'] as const
const PARTIAL = process.env.BENCH_ONLY !== undefined || process.env.BENCH_PHASES !== undefined
const CONCURRENCY = 10
const here = new URL('.', import.meta.url).pathname
const repo = new URL('../../', import.meta.url).pathname
const bin = (name: string) => join(repo, 'node_modules', '.bin', name)
const say = (line = '') => process.stdout.write(`${line}\n`)

interface Load { rows: number; rps: number; p50: number; p99: number; failures: number }
interface Bulk { status: string; rows: number; seconds: number; rowsPerSecond: number; peakRssMb: number }

const peakRssMb = (pid: number) => {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
  } catch {
    return NaN
  }
}

/** autocannon from a second process, loopback only, bounded by -d. */
function autocannon(url: string, connections: number, seconds: number): Load {
  const run = spawnSync(bin('autocannon'), ['-c', String(connections), '-d', String(seconds), '-t', '120', '-j', url], {
    encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  })
  const result = JSON.parse(run.stdout) as { '2xx': number; duration: number; latency: { p50: number; p99: number }; non2xx: number; errors: number; timeouts: number }
  // Only whole, successful answers count: a 500 from an exhausted memory limit is not an answer.
  return { rows: NaN, rps: result['2xx'] / result.duration, p50: result.latency.p50, p99: result.latency.p99, failures: result.non2xx + result.errors + result.timeouts }
}

async function rowsOf(url: string): Promise<number> {
  const res = await fetch(url)
  return Number(res.headers.get('x-wp-total') ?? (await res.json() as { total?: number }).total ?? NaN)
}

function rawSql(key: string, args: string[], db: object): Record<string, number> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(here, 'raw-sql.ts'), key, ...args], {
    encoding: 'utf8', env: { ...process.env, BENCH_DB: JSON.stringify(db) }, maxBuffer: 16 * 1024 * 1024,
  })
  if (run.status !== 0) throw new Error(`raw-sql failed: ${run.stderr}`)
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!)
}

/** One full download of a large answer, read and dropped as it comes (the client should cost little): wall time. */
function download(url: string, timeoutMs: number): Promise<{ status: string; bytes: number; seconds: number }> {
  const started = process.hrtime.bigint()
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9
  return new Promise((resolve) => {
    const req = httpGet(url, { timeout: timeoutMs }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => resolve({ status: String(res.statusCode), bytes, seconds: seconds() }))
      res.on('error', () => resolve({ status: 'cut off', bytes, seconds: seconds() }))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', (error) => resolve({ status: error.message, bytes: 0, seconds: seconds() }))
  })
}

// --- set-up ---------------------------------------------------------------
say(`booking-calendar-api benchmark: ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${SECONDS} s per load`)
if (spawnSync(bin('tsc'), ['-p', join(repo, 'tsconfig.build.json')], { stdio: 'inherit' }).status !== 0) throw new Error('build failed')

const mariadb = await startMariaDb({ bufferPoolMb: 2048 })
let wordpressClose: (() => Promise<void>) | undefined
const children = new Set<ChildProcess>()
stopOnExit(mariadb, async () => {
  for (const child of children) child.kill('SIGKILL')
  await wordpressClose?.()
})

const started = Date.now()
await mariadb.adminQuery(`
  CREATE DATABASE ${BENCH_DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
  CREATE USER '${READER.user}'@'%' IDENTIFIED BY '${READER.password}';
  GRANT SELECT ON ${BENCH_DATABASE}.* TO '${READER.user}'@'%';
  CREATE USER 'wp_bench'@'%' IDENTIFIED BY 'wp-bench';
  GRANT ALL ON ${BENCH_DATABASE}.* TO 'wp_bench'@'%';`)
const database = { name: BENCH_DATABASE, host: mariadb.host, port: mariadb.port, user: 'wp_bench', password: 'wp-bench' }
const wordpress = await prepareWordPress({
  database, prefix: 'wp_', workers: 2,
  muPlugins: { 'booking-calendar-bench.php': readFileSync(join(here, 'booking-calendar-bench.php'), 'utf8') },
  // OPcache on, and the memory limit of a stock php.ini (128M), as a real site has.
  ini: { 'opcache.enable': '1', 'opcache.enable_cli': '1', memory_limit: '128M' },
})
wordpressClose = wordpress.close
wordpress.php(`<?php ${installSitePhp(wordpress.root)}`)
await mariadb.adminQuery(`USE ${BENCH_DATABASE}; ${pluginTablesSql('wp_')}`)
for (const statement of demoDataSql({ ...BENCH_DATA, prefix: 'wp_' })) await mariadb.adminQuery(`USE ${BENCH_DATABASE}; ${statement}`)
await mariadb.adminQuery(`USE ${BENCH_DATABASE}; ANALYZE TABLE wp_booking_calendar_bookings`)
say(`database: ${BENCH_DATA.bookings.toLocaleString('en')} bookings, ${BENCH_DATA.services} services, ${BENCH_DATA.rules} rules, WordPress installed: ${((Date.now() - started) / 1000).toFixed(1)} s`)
const readerDb = { host: mariadb.host, port: mariadb.port, user: READER.user, password: READER.password, database: BENCH_DATABASE }

async function startService(eventLoopFile: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await findFreePort()
  const child = spawn(process.execPath, ['--import', join(here, 'event-loop.mjs'), join(repo, 'dist/server/main.js')], {
    env: {
      ...process.env, PORT: String(port), LOG_LEVEL: 'warn', DB_POOL_SIZE: '10', BENCH_EVENT_LOOP_FILE: eventLoopFile,
      DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.add(child)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; !(await fetch(`${url}/readyz`).then((r) => r.ok, () => false)); i++) {
    if (i > 100) throw new Error('the service did not start')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill('SIGUSR2') // event-loop.mjs: count from here
  return {
    url, pid: child.pid!,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
      children.delete(child)
    },
  }
}

const SERVICE_PREFIX = '/wp-json/booking-calendar/v1/'
const WORDPRESS_PREFIX = '/wp-json/booking-calendar-bench/v1/'
const results: string[] = []
const table = (line: string) => { say(line); results.push(line) }

for (const phase of PHASES) {
  if (phase !== 'without indexes') say(`\nindexes added in ${((await addRecommendedIndexes(mariadb)) / 1000).toFixed(1)} s`)
  await wordpress.start()
  const eventLoopFiles = [join(mariadb.dataDir, `eld-${results.length}-1.json`), join(mariadb.dataDir, `eld-${results.length}-2.json`)]
  const service = await startService(eventLoopFiles[0]!)

  table('')
  table(`### ${phase}`)
  table('')
  table('| query | contender | rows | req/s (2xx) | p50 ms | p99 ms | failed |')
  table('|---|---|---:|---:|---:|---:|---:|')
  const loads: Record<string, Load> = {}
  const row = (query: BenchQuery, contender: string, load: Load) => {
    loads[`${query.key}:${contender}`] = load
    table(`| (${query.key}) ${query.name} | ${contender} | ${load.rows.toLocaleString('en')} | ${load.rps.toFixed(1)} | ${load.p50.toFixed(1)} | ${load.p99.toFixed(1)} | ${load.failures} |`)
  }
  for (const query of BENCH_QUERIES.filter((q) => q.key !== 'c' && ONLY.includes(q.key))) {
    const rows = await rowsOf(`${service.url}${SERVICE_PREFIX}${query.path}`)
    row(query, `service, ${CONCURRENCY} conn.`, { ...autocannon(`${service.url}${SERVICE_PREFIX}${query.path}`, CONCURRENCY, SECONDS), rows })
    const raw = rawSql(query.key, ['load', String(CONCURRENCY), String(SECONDS)], readerDb)
    row(query, `raw SQL, ${CONCURRENCY} conn.`, { rows: raw.rows!, rps: raw.rps!, p50: raw.p50!, p99: raw.p99!, failures: 0 })
    const wpRows = await rowsOf(`${wordpress.url}${WORDPRESS_PREFIX}${query.path}`).catch(() => NaN)
    row(query, `WordPress, ${CONCURRENCY} conn.`, { ...autocannon(`${wordpress.url}${WORDPRESS_PREFIX}${query.path}`, CONCURRENCY, SECONDS), rows: wpRows })
    if (query.key === 'a') {
      row(query, 'service, 1 at a time', { ...autocannon(`${service.url}${SERVICE_PREFIX}${query.path}`, 1, SECONDS), rows })
      const single = rawSql(query.key, ['load', '1', String(SECONDS)], readerDb)
      row(query, 'raw SQL, 1 at a time', { rows: single.rows!, rps: single.rps!, p50: single.p50!, p99: single.p99!, failures: 0 })
    }
  }
  if (phase !== 'without indexes') table(await deepPageLine(service.url, BENCH_DATA.bookings))
  await service.stop()
  const a = (contender: string) => loads[`a:${contender}`]
  const b = (contender: string) => loads[`b:${contender}`]
  table('')
  if (ONLY.includes('a')) {
    table(`- (a) service ÷ WordPress, req/s at ${CONCURRENCY} connections: **${(a(`service, ${CONCURRENCY} conn.`)!.rps / a(`WordPress, ${CONCURRENCY} conn.`)!.rps).toFixed(1)}×** (target ≥ 10×)`)
    table(`- (a) one at a time, service p50 ÷ raw SQL p50: **${(a('service, 1 at a time')!.p50 / a('raw SQL, 1 at a time')!.p50).toFixed(2)}×** (target ≤ 2×)`)
  }
  if (ONLY.includes('b')) {
    table(`- (b) service ÷ WordPress, req/s: **${(b(`service, ${CONCURRENCY} conn.`)!.rps / b(`WordPress, ${CONCURRENCY} conn.`)!.rps).toFixed(1)}×** (target ≥ 2×)`)
  }
  if (!ONLY.includes('c')) {
    await wordpress.stop()
    continue
  }

  // (c): a fresh service process, so its peak RSS is this answer's.
  const query = BENCH_QUERIES.find((q) => q.key === 'c')!
  const fresh = await startService(eventLoopFiles[1]!)
  const bulk: Record<string, Bulk> = {}
  let serviceRun = { status: '', bytes: 0, seconds: Infinity }
  for (let i = 0; i < 2; i++) {
    const run = await download(`${fresh.url}${SERVICE_PREFIX}${query.path}`, 300_000)
    if (run.seconds < serviceRun.seconds) serviceRun = run
  }
  bulk.service = { status: serviceRun.status, rows: BENCH_DATA.bookings, seconds: serviceRun.seconds, rowsPerSecond: BENCH_DATA.bookings / serviceRun.seconds, peakRssMb: peakRssMb(fresh.pid) }
  await fresh.stop()
  const raw = rawSql('c', ['stream'], readerDb)
  bulk['raw SQL'] = { status: 'streamed', rows: raw.rows!, seconds: raw.seconds!, rowsPerSecond: raw.rowsPerSecond!, peakRssMb: raw.peakRssMb! }
  const workers = spawnSync('pgrep', ['-f', '--', `-S ${new URL(wordpress.url).host}`], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number)
  const wpRun = await download(`${wordpress.url}${WORDPRESS_PREFIX}${query.path}`, 300_000)
  bulk.WordPress = { status: wpRun.status, rows: wpRun.status === '200' ? BENCH_DATA.bookings : 0, seconds: wpRun.seconds, rowsPerSecond: wpRun.status === '200' ? BENCH_DATA.bookings / wpRun.seconds : 0, peakRssMb: Math.max(...workers.map(peakRssMb)) }
  table('')
  table(`| (c) ${query.name} | answer | rows | wall s | rows/s | peak RSS MB |`)
  table('|---|---|---:|---:|---:|---:|')
  for (const [contender, result] of Object.entries(bulk)) {
    table(`| | ${contender}: ${result.status} | ${result.rows.toLocaleString('en')} | ${result.seconds.toFixed(2)} | ${Math.round(result.rowsPerSecond).toLocaleString('en')} | ${result.peakRssMb.toFixed(0)} |`)
  }
  const loops = eventLoopFiles.filter(existsSync).map((file) => JSON.parse(readFileSync(file, 'utf8')) as { maxMs: number; p99Ms: number })
  table('')
  table(`- event loop of the service, over this phase: max delay **${Math.max(...loops.map((l) => l.maxMs)).toFixed(1)} ms**, p99 ${Math.max(...loops.map((l) => l.p99Ms)).toFixed(1)} ms (target: no stall over 50 ms)`)
  for (const file of eventLoopFiles) rmSync(file, { force: true })
  await wordpress.stop()
}

const header = `# Benchmark results

\`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version},
MariaDB ${spawnSync('mariadbd', ['--version'], { encoding: 'utf8' }).stdout.trim().split(/\s+/)[2] ?? ''}, ${BENCH_DATA.bookings.toLocaleString('en')} bookings over ${BENCH_DATA.years} years, ${BENCH_DATA.services} services, ${BENCH_DATA.rules} rules.
Loads by autocannon from a second process, ${SECONDS} s each; WordPress ${'6.1 (Debian)'} under \`php -S\` with 2 workers, OPcache on, memory_limit 128M.
`
if (!PARTIAL) {
  writeFileSync(join(here, RESULTS_FILE), `${header}${results.join('\n')}\n`)
  say(`\nwritten to scripts/bench/${RESULTS_FILE}`)
}
await wordpress.close()
await mariadb.stop()
