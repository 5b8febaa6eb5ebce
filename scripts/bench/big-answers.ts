// Issue 12's event loop and memory, for the largest answers the service makes
// whole in memory: a two-year summary/ by day, service and status (JSON and
// CSV) and two years of disabled-time/ (JSON and its calendar feed). Each is
// asked BENCH_ROUNDS (3) times of one service process (WORKERS=1, the workers'
// V8 flags), while a client asks /healthz of the same process every 2 ms: its
// slowest answer is how long other requests on that worker waited. Then the
// process's peak RSS.
//
//   BENCH_BOOKINGS=1000000 npx tsx scripts/bench/big-answers.ts
//   OTHER=<a built copy's dist/> ...   the same of that build, in turn with this one (say, a `cp -r dist`
//                                      of an earlier commit, with a node_modules link beside it)
//   CPU_PROF=<dir> ...   each service under node --cpu-prof, its profile written to <dir> when it stops
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { findFreePort } from '../mariadb.ts'
import { startBenchDatabase, waitUntilReady } from './setup.ts'
import { BENCH_DATABASE, READER } from './dataset.ts'
import { DEFAULT_WORKER_V8_FLAGS } from '../../server/config.ts'

const repo = new URL('../../', import.meta.url).pathname
const say = (line = '') => process.stdout.write(`${line}\n`)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const PREFIX = '/wp-json/booking-calendar/v1'
const ANSWERS = [
  ['summary/ JSON', `${PREFIX}/summary?start=2025-01-01&end=2026-12-31&group_by=day,service,status`],
  ['summary/ CSV', `${PREFIX}/summary?start=2025-01-01&end=2026-12-31&group_by=day,service,status&format=csv`],
  ['disabled-time/', `${PREFIX}/disabled-time?start=2025-01-01&end=2026-12-31`],
  ['disabled-time/ feed (ICS)', `${PREFIX}/disabled-time?start=2025-01-01&end=2026-12-31&format=ics`],
] as const

const { mariadb, children } = await startBenchDatabase()
const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

async function startService(dist: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await findFreePort()
  const profile = process.env.CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROF}`] : []
  const child = spawn(process.execPath, [...profile, ...DEFAULT_WORKER_V8_FLAGS, join(dist, 'server/main.js')], {
    env: {
      ...process.env, PORT: String(port), LOG_LEVEL: 'warn', WORKERS: '1',
      DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.add(child)
  const url = `http://127.0.0.1:${port}`
  await waitUntilReady(url)
  return { url, child }
}

/** One answer, read as fast as it comes, with /healthz asked beside it; the slowest /healthz in ms. */
async function askWithProbe(url: string, path: string): Promise<{ bytes: number; ms: number; slowestProbeMs: number; status: number }> {
  let asking = true
  let slowestProbeMs = 0
  const probing = (async () => {
    while (asking) {
      const started = performance.now()
      await (await fetch(`${url}/healthz`)).arrayBuffer()
      slowestProbeMs = Math.max(slowestProbeMs, performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  })()
  const started = performance.now()
  const res = await fetch(url + path)
  const bytes = (await res.arrayBuffer()).byteLength
  const ms = performance.now() - started
  asking = false
  await probing
  return { bytes, ms, slowestProbeMs, status: res.status }
}

try {
  const builds = [['this build (dist/)', join(repo, 'dist')], ...(process.env.OTHER ? [[`OTHER (${process.env.OTHER})`, process.env.OTHER]] : [])] as const
  say('| build | answer | status | MB | ms, rounds | slowest /healthz beside it, ms, rounds |')
  say('|---|---|---:|---:|---|---|')
  const peaks: string[] = []
  for (const [label, dist] of builds) {
    const service = await startService(dist)
    for (const [name, path] of ANSWERS) {
      const runs = []
      for (let round = 0; round < ROUNDS; round++) runs.push(await askWithProbe(service.url, path))
      say(`| ${label} | ${name} | ${runs[0]!.status} | ${(runs[0]!.bytes / 1e6).toFixed(1)} | ${runs.map((run) => run.ms.toFixed(0)).join(', ')} | ${runs.map((run) => run.slowestProbeMs.toFixed(0)).join(', ')} |`)
    }
    peaks.push(`${label}: ${peakRssMb(service.child.pid!).toFixed(0)} MB`)
    const exited = new Promise((resolve) => service.child.once('exit', resolve))
    service.child.kill('SIGTERM')
    await exited
  }
  say()
  say(`Peak RSS of the process over its answers: ${peaks.join('; ')}`)
} finally {
  for (const child of children) child.kill('SIGKILL')
  await mariadb.stop()
}
