// Issue 12: the bench's phases against one service (WORKERS=2, customer data
// shown), without WordPress or raw SQL, to see per phase where event-loop
// stalls and memory come from (phase-report.ts). Quicker than `npm run bench`.
//
//   BENCH_BOOKINGS=100000 npx tsx scripts/bench/phases.ts
//   CPU_PROF=1 ...                       node --cpu-prof in every process; names the functions of each long stall
//   BENCH_NODE_ARGS='--max-semi-space-size=4' ...   extra node flags for the service (A/B of heap flags)
//   BENCH_PHASES=c4,ics ...              some phases only (idle, a, b, d, c, c4, summary, ics)
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { get as httpGet, Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findFreePort } from '../mariadb.ts'
import { cpuSeconds, startBenchDatabase, waitUntilReady } from './setup.ts'
import { BENCH_DATA, BENCH_DATABASE, READER } from './dataset.ts'
import { BENCH_QUERIES } from './queries.ts'
import { SUMMARY_PATH } from './summary.ts'
import { PhaseClock, phaseTable, readTraces, stallCulprits } from './phase-report.ts'

const here = new URL('.', import.meta.url).pathname
const repo = new URL('../../', import.meta.url).pathname
const say = (line = '') => process.stdout.write(`${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const PREFIX = '/wp-json/booking-calendar/v1/'
const path = (key: string) => PREFIX + BENCH_QUERIES.find((q) => q.key === key)!.path
const WORKERS = Number(process.env.WORKERS ?? 2)
const ONLY = (process.env.BENCH_PHASES ?? 'idle,a,b,d,c,c4,summary,ics').split(',')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)

const { mariadb, children, loadMs } = await startBenchDatabase()
say(`${BENCH_DATA.bookings.toLocaleString('en')} bookings loaded in ${(loadMs / 1000).toFixed(1)} s; Node ${process.version}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)

const traceDir = mkdtempSync(join(tmpdir(), 'bc-phases-'))
const profileDir = join(traceDir, 'profiles')
const port = await findFreePort()
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
const child = spawn(process.execPath, [
  ...nodeArgs, ...(process.env.CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
  '--import', join(here, 'event-loop.mjs'), join(repo, 'dist/server/main.js'),
], {
  env: {
    ...process.env, PORT: String(port), LOG_LEVEL: 'warn', DB_POOL_SIZE: '10', DB_STREAM_CONNECTIONS: '5', WORKERS: String(WORKERS),
    EXPOSE_CUSTOMER_DATA: 'true', BENCH_EVENT_LOOP_DIR: traceDir,
    DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
  },
  stdio: ['ignore', 'ignore', 'inherit'],
})
children.add(child)
const url = `http://127.0.0.1:${port}`
const pids = () => (WORKERS > 1 ? [child.pid!, ...spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number)] : [child.pid!])
await waitUntilReady(url, () => pids().length === (WORKERS > 1 ? WORKERS + 1 : 1))
await sleep(1_000)
for (const pid of pids()) process.kill(pid, 'SIGUSR2')
const cpuOfService = () => pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0)

function download(target: string, agent: Agent | false = false): Promise<{ status: number; ms: number; bytes: number }> {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const req = httpGet(target, { agent, timeout: 300_000 }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => resolve({ status: res.statusCode!, ms: Number(process.hrtime.bigint() - started) / 1e6, bytes }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
  })
}
function autocannon(target: string, connections: number, seconds: number): string {
  const run = spawnSync(join(repo, 'node_modules/.bin/autocannon'), ['-c', String(connections), '-d', String(seconds), '-t', '120', '-j', target], { encoding: 'utf8', maxBuffer: 64 << 20 })
  const result = JSON.parse(run.stdout) as { '2xx': number; duration: number; non2xx: number; errors: number; timeouts: number }
  return `${(result['2xx'] / result.duration).toFixed(1)} req/s, ${result.non2xx + result.errors + result.timeouts} failed`
}

const clock = new PhaseClock()
const notes: string[] = []
const phase = async (name: string, work: () => Promise<string>) => {
  if (!ONLY.includes(name.split(' ')[0]!)) return
  const cpu = cpuOfService()
  const note = await clock.run(name, work)
  notes.push(`- ${name}: ${note}; service CPU ${(cpuOfService() - cpu).toFixed(2)} s`)
  say(notes.at(-1))
}
await phase('idle', async () => { await sleep(3_000); return '3 s' })
await phase('a 10 connections', async () => autocannon(url + path('a'), 10, SECONDS))
await phase('b 10 connections', async () => autocannon(url + path('b'), 10, SECONDS))
await phase('d 10 connections', async () => autocannon(url + path('d'), 10, SECONDS))
await phase('c JSON', async () => { const d = await download(url + path('c')); return `${d.status}, ${(BENCH_DATA.bookings / d.ms * 1000).toFixed(0)} rows/s` })
await phase('c CSV', async () => { const d = await download(`${url + path('c')}?format=csv`); return `${d.status}, ${(BENCH_DATA.bookings / d.ms * 1000).toFixed(0)} rows/s` })
await phase('c4 concurrent with (a) beside', async () => {
  let over = false
  const all = Promise.all(Array.from({ length: 4 }, () => download(url + path('c'))))
  void all.then(() => { over = true })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const times: number[] = []
  // With --expose-gc: at the height of the exports, what is live (event-loop.mjs, SIGHUP).
  const fullGc = process.env.BENCH_NODE_ARGS?.includes('--expose-gc') ? setTimeout(() => { for (const pid of pids().slice(1)) process.kill(pid, 'SIGHUP') }, 1_000) : undefined
  while (!over) times.push((await download(url + path('a'), agent)).ms)
  clearTimeout(fullGc)
  agent.destroy()
  const done = await all
  times.sort((x, y) => x - y)
  return `${done.map((d) => d.status).join(',')} in ${(Math.max(...done.map((d) => d.ms)) / 1000).toFixed(2)} s; (a) beside: ${times.length}, p50 ${times[times.length >> 1]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms`
})
await phase('summary x20', async () => {
  for (let i = 0; i < 20; i++) await download(url + SUMMARY_PATH)
  return 'done'
})
await phase('ics 731 days', async () => { const d = await download(`${url}${PREFIX}slots?format=ics&start=2025-01-01&end=2026-12-31`); return `${d.status}, ${(d.bytes / 1e6).toFixed(1)} MB in ${(d.ms / 1000).toFixed(2)} s` })
await phase('idle after', async () => { await sleep(2_000); return '2 s' })

const peaks = pids().map((pid) => `${pid}: ${(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024).toFixed(0)} MB`)
const stopped = Date.now()
const exited = new Promise((resolve) => child.once('exit', resolve))
child.kill('SIGTERM')
await exited
clock.phases.push({ name: 'stop', from: stopped, to: Date.now() })
children.delete(child)

const traces = readTraces(traceDir)
const eld = traces.map((t) => `${t.worker === 0 ? 'primary' : `worker ${t.worker}`} ${t.pid}: max ${(JSON.parse(readFileSync(join(traceDir, `eld-${t.pid}.json`), 'utf8')) as { maxMs: number }).maxMs.toFixed(1)} ms`)
say(`\npeak RSS (VmHWM): ${peaks.join(', ')}\nevent loop max: ${eld.join(', ')}\n`)
for (const line of phaseTable(traces, clock.phases)) say(line)
say('')
for (const line of stallCulprits(traces, clock.phases, profileDir)) say(line)
say(`\nload average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
for (const trace of traces) {
  for (const { before, after } of (trace as unknown as { afterFullGc?: Array<{ before: NodeJS.MemoryUsage; after: NodeJS.MemoryUsage }> }).afterFullGc ?? []) {
    const m = (n: number) => (n / 2 ** 20).toFixed(0)
    say(`full GC in worker ${trace.worker}: heap used ${m(before.heapUsed)} -> ${m(after.heapUsed)} MB, external ${m(before.external)} -> ${m(after.external)} MB, rss ${m(before.rss)} -> ${m(after.rss)} MB`)
  }
}
if (process.env.KEEP_TRACES) say(`traces kept in ${traceDir}`)
else rmSync(traceDir, { recursive: true, force: true })
await mariadb.stop()
