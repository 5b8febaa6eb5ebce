// The service's own work per booking against mysql2 alone on the same rows,
// without WordPress or the whole `npm run bench`; PROFILE=c|a|e adds node
// --cpu-prof (usage: scripts/bench/README.md; docs/performance.md, "Profiling").
// Each service runs in its own process (dist/, on 127.0.0.1 only).
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs'
import { get as httpGet, Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findFreePort } from '../mariadb.ts'
import { cpuSeconds, startBenchDatabase, waitUntilReady } from './setup.ts'
import { BENCH_DATA, BENCH_DATABASE, READER } from './dataset.ts'
import { BENCH_QUERIES } from './queries.ts'
import { streamRowsWithMysql2 } from './mysql2-floor.ts'
import { SUMMARY_PATH } from './summary.ts'
import type { Database } from '../../server/tools.ts'

const PROFILE = process.env.PROFILE as 'a' | 'b' | 'c' | 'e' | undefined
/** Profiles that measure one route, not the exports (c). */
const ONE_ROUTE = PROFILE === 'a' || PROFILE === 'b' || PROFILE === 'e'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const here = new URL('.', import.meta.url).pathname
const repo = new URL('../../', import.meta.url).pathname
const say = (line = '') => process.stdout.write(`${line}\n`)
const PREFIX = '/wp-json/booking-calendar/v1/'
const path = (key: string) => PREFIX + BENCH_QUERIES.find((q) => q.key === key)!.path

const { mariadb, children, loadMs } = await startBenchDatabase()
const readerDb = { host: mariadb.host, port: mariadb.port, user: READER.user, password: READER.password, database: BENCH_DATABASE }
say(`${BENCH_DATA.bookings.toLocaleString('en')} bookings loaded in ${(loadMs / 1000).toFixed(1)} s; Node ${process.version}`)

const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

async function startService(env: Record<string, string>, profileDir: string | undefined) {
  const port = await findFreePort()
  const eventLoopDir = mkdtempSync(join(tmpdir(), 'bc-eld-'))
  const child = spawn(process.execPath, [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    '--import', join(here, 'event-loop.mjs'), join(here, 'profile-server.mjs'),
  ], {
    env: {
      ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn', DB_POOL_SIZE: '10', BENCH_EVENT_LOOP_DIR: eventLoopDir,
      DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.add(child)
  const url = `http://127.0.0.1:${port}`
  await waitUntilReady(url)
  child.kill('SIGUSR2')
  return {
    url,
    pid: child.pid!,
    async stop(): Promise<{ maxMs: number; p99Ms: number }> {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
      children.delete(child)
      // event-loop.mjs writes eld-<pid>.json (and its trace) into the directory on exit.
      const loop = JSON.parse(readFileSync(join(eventLoopDir, `eld-${child.pid}.json`), 'utf8')) as { maxMs: number; p99Ms: number }
      rmSync(eventLoopDir, { recursive: true, force: true })
      return loop
    },
  }
}

/** One full download, read and dropped: wall seconds and the row count the service announced. */
function download(url: string): Promise<{ seconds: number; rows: number; bytes: number; status: number }> {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { timeout: 120_000 }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => resolve({
        seconds: Number(process.hrtime.bigint() - started) / 1e9, rows: Number(res.headers['x-wp-total']), bytes, status: res.statusCode!,
      }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
  })
}

/** The fastest of a few downloads, and the service's CPU time per row over all of them. */
async function bestOf(times: number, url: string, pid: number) {
  let best = { seconds: Infinity, rows: 0, bytes: 0, status: 0 }
  const cpuBefore = cpuSeconds(pid)
  let rows = 0
  for (let i = 0; i < times; i++) {
    const run = await download(url)
    if (run.status !== 200) throw new Error(`${url}: ${run.status}`)
    if (run.seconds < best.seconds) best = run
    rows += run.rows
  }
  return { ...best, cpuUsPerRow: (cpuSeconds(pid) - cpuBefore) * 1e6 / rows }
}

/** mysql2 alone streaming the (c) rows in this process (otherwise idle): wall rate and CPU per row, as raw-sql.ts stream does. */
async function rawStream(): Promise<{ rowsPerSecond: number; cpuUsPerRow: number; peakRssMb: number }> {
  const { createPool } = await import('mysql2')
  const { Kysely, MysqlDialect } = await import('kysely')
  const { TablePrefixPlugin } = await import('../../server/tools.ts')
  const pool = createPool({ ...readerDb, dateStrings: true, connectionLimit: 1, charset: 'UTF8MB4_UNICODE_520_CI' })
  const db = new Kysely<Database>({ dialect: new MysqlDialect({ pool }), plugins: [new TablePrefixPlugin('wp_')] })
  const compiled = BENCH_QUERIES.find((q) => q.key === 'c')!.sql(db)
  let best = { rowsPerSecond: 0, cpuUsPerRow: Infinity }
  for (let i = 0; i < 3; i++) {
    const started = process.hrtime.bigint()
    const cpu = process.cpuUsage()
    const rows = await streamRowsWithMysql2(pool, compiled)
    const used = process.cpuUsage(cpu)
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    best = { rowsPerSecond: Math.max(best.rowsPerSecond, rows / seconds), cpuUsPerRow: Math.min(best.cpuUsPerRow, (used.user + used.system) / rows) }
  }
  await new Promise<void>((resolve) => pool.end(() => resolve()))
  return { ...best, peakRssMb: NaN }
}

/** Requests one after another on one kept-alive connection for `seconds`: p50 in ms. */
async function serial(url: string, seconds: number): Promise<{ p50: number; rps: number; requests: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const latencies: number[] = []
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    const t = process.hrtime.bigint()
    await new Promise<void>((resolve, reject) => {
      httpGet(url, { agent }, (res) => { res.resume(); res.on('end', resolve); res.on('error', reject) }).on('error', reject)
    })
    latencies.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return { p50: latencies[Math.floor(latencies.length / 2)]!, rps: latencies.length / seconds, requests: latencies.length }
}

function autocannon(url: string, connections: number, seconds: number): number {
  const run = spawnSync(join(repo, 'node_modules/.bin/autocannon'), ['-c', String(connections), '-d', String(seconds), '-j', url], { encoding: 'utf8', maxBuffer: 64 << 20 })
  const result = JSON.parse(run.stdout) as { '2xx': number; duration: number }
  return result['2xx'] / result.duration
}

function rawSql(key: string, args: string[]): Record<string, number> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(here, 'raw-sql.ts'), key, ...args], {
    encoding: 'utf8', env: { ...process.env, BENCH_DB: JSON.stringify(readerDb) },
  })
  if (run.status !== 0) throw new Error(`raw-sql failed: ${run.stderr}`)
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, number>
}

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }

/** The functions with the most self time in a .cpuprofile, as table rows. */
function topFunctions(file: string, count: number): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const byFunction = new Map<string, number>()
  let total = 0
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0
    total += us
    const { functionName, url, lineNumber } = node.callFrame
    const where = url ? `${url.replace(/^.*\/(node_modules|dist|scripts)\//, '$1/').replace(/^node:/, '')}:${lineNumber + 1}` : ''
    const key = `${functionName || '(anonymous)'} ${where}`.trim()
    byFunction.set(key, (byFunction.get(key) ?? 0) + us)
  }
  const idle = ['(idle)', '(program)', '(garbage collector)']
  return [...byFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, count)
    .map(([name, us]) => `| ${idle.includes(name) ? name : `\`${name}\``} | ${(us / 1000).toFixed(0)} | ${(100 * us / total).toFixed(1)}% |`)
}

const rows: string[] = []
const line = (text: string) => { say(text); rows.push(text) }
line('| measurement | service | raw SQL (mysql2) | service ÷ raw |')
line('|---|---:|---:|---:|')

const raw = ONE_ROUTE ? { rowsPerSecond: NaN, cpuUsPerRow: NaN, peakRssMb: NaN } : await rawStream()
if (!PROFILE) line(`| (c) mysql2 alone: CPU µs per row | | ${raw.cpuUsPerRow.toFixed(2)} | |`)
for (const shown of ONE_ROUTE ? [false] : [false, true]) {
  const profileDir = PROFILE ? mkdtempSync(join(tmpdir(), 'bc-prof-')) : undefined
  const service = await startService({ EXPOSE_CUSTOMER_DATA: String(shown) }, profileDir)
  const who = shown ? 'customer shown' : 'customer hidden'
  for (const format of ONE_ROUTE ? [] : ['json', 'csv']) {
    const run = await bestOf(PROFILE ? 2 : 3, `${service.url}${path('c')}${format === 'csv' ? '?format=csv' : ''}`, service.pid)
    line(`| (c) ${format.toUpperCase()}, ${who}: rows/s | ${Math.round(run.rows / run.seconds).toLocaleString('en')} | ${Math.round(raw.rowsPerSecond).toLocaleString('en')} | ${((run.rows / run.seconds) / raw.rowsPerSecond).toFixed(2)} |`)
    line(`| (c) ${format.toUpperCase()}, ${who}: CPU µs per row | ${run.cpuUsPerRow.toFixed(2)} | ${raw.cpuUsPerRow.toFixed(2)} | ${(run.cpuUsPerRow / raw.cpuUsPerRow).toFixed(2)} |`)
  }
  if (PROFILE === 'e') {
    const cpuBefore = cpuSeconds(service.pid)
    const e1 = await serial(`${service.url}${SUMMARY_PATH}`, SECONDS)
    line(`| (e) summary/ one at a time: p50 ms / service CPU ms per request | ${e1.p50.toFixed(1)} / ${((cpuSeconds(service.pid) - cpuBefore) * 1000 / e1.requests).toFixed(1)} | | |`)
  }
  if (PROFILE === 'b') {
    const cpuBefore = cpuSeconds(service.pid)
    const b1 = await serial(`${service.url}${path('b')}`, SECONDS)
    line(`| (b) one at a time: p50 ms / service CPU ms per request | ${b1.p50.toFixed(1)} / ${((cpuSeconds(service.pid) - cpuBefore) * 1000 / b1.requests).toFixed(1)} | | |`)
    const rawB1 = rawSql('b', ['load', '1', String(SECONDS)])
    line(`| (b) one at a time: p50 ms | ${b1.p50.toFixed(1)} | ${rawB1.p50!.toFixed(1)} | ${(b1.p50 / rawB1.p50!).toFixed(2)} |`)
  }
  if (!shown && PROFILE === 'a') line(`| (a) 10 connections: req/s | ${autocannon(`${service.url}${path('a')}`, 10, SECONDS).toFixed(0)} | | |`)
  if (!shown && !PROFILE) {
    const cpuBefore = cpuSeconds(service.pid)
    const a1 = await serial(`${service.url}${path('a')}`, SECONDS)
    line(`| (a) one at a time: service CPU ms per request | ${((cpuSeconds(service.pid) - cpuBefore) * 1000 / a1.requests).toFixed(3)} | | |`)
    const rawA1 = rawSql('a', ['load', '1', String(SECONDS)])
    line(`| (a) one at a time: p50 ms | ${a1.p50.toFixed(2)} | ${rawA1.p50!.toFixed(2)} | ${(a1.p50 / rawA1.p50!).toFixed(2)} |`)
    const a10 = autocannon(`${service.url}${path('a')}`, 10, SECONDS)
    const rawA10 = rawSql('a', ['load', '10', String(SECONDS)])
    line(`| (a) 10 connections: req/s | ${a10.toFixed(0)} | ${rawA10.rps!.toFixed(0)} | ${(a10 / rawA10.rps!).toFixed(2)} |`)
    const b1 = await serial(`${service.url}${path('b')}`, SECONDS)
    const rawB1 = rawSql('b', ['load', '1', String(SECONDS)])
    line(`| (b) one at a time: p50 ms | ${b1.p50.toFixed(1)} | ${rawB1.p50!.toFixed(1)} | ${(b1.p50 / rawB1.p50!).toFixed(2)} |`)
  }
  const rss = peakRssMb(service.pid)
  const loop = await service.stop()
  line(`| ${who}: peak RSS MB / event loop max ms | ${rss.toFixed(0)} / ${loop.maxMs.toFixed(1)} | | |`)
  if (profileDir) {
    const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'))
    if (file) {
      say(`\nTop self time, ${who} (${PROFILE === 'a' ? '(a) at 10 connections' : PROFILE === 'b' ? '(b) one at a time' : PROFILE === 'e' ? 'summary/ one at a time' : 'JSON and CSV exports, twice each'}):\n\n| function | ms | share |\n|---|---:|---:|`)
      for (const text of topFunctions(join(profileDir, file), 25)) say(text)
      say(`\n(profile: ${join(profileDir, file)})\n`)
    }
  }
}
await mariadb.stop()
