// Issue 12, (a) at 10 connections: CPU per request under load, where the
// bench's req/s only shows the sum of everything on two cores. The service
// (dist/, one process) and the bench's floor (node:http + the statement,
// http-floor.mjs), and optionally the service of another built checkout
// (OTHER=<its directory>), each loaded in turn by autocannon at 10 connections,
// the order rotating every round. Per round and server: req/s and the CPU per
// request of the server, of MariaDB and of this process (the load).
//
//   BENCH_BOOKINGS=100000 npx tsx scripts/bench/load-cpu.ts   (builds dist/ first, as startBenchDatabase does)
//   OTHER=/tmp/old ...   a second build beside this one (in /tmp/old: npm ci && npm run build)
//   ALLOC=1 ...          + each server's allocations over the rounds, by function (alloc-sampling.mjs)
//   CPU_PROF=<dir> ...   + each server under node --cpu-prof (1 ms samples), its profile in <dir>; each
//                        server's number of requests is printed for profile-by-package.mjs
//
// BENCH_ROUNDS (4) rounds of BENCH_SECONDS (6) each, after 3 s of the same load unmeasured.
import { spawn, spawnSync } from 'node:child_process'
import http from 'node:http'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { findFreePort } from '../mariadb.ts'
import { benchStatement, cpuSeconds, startBenchDatabase } from './setup.ts'
import { BENCH_DATABASE, READER } from './dataset.ts'
import { BENCH_QUERIES } from './queries.ts'
import { DEFAULT_WORKER_V8_FLAGS } from '../../server/config.ts'

const here = new URL('.', import.meta.url).pathname
const say = (line = '') => process.stdout.write(`${line}\n`)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6)
const ALLOC = process.env.ALLOC === '1'
const CPU_PROF = process.env.CPU_PROF
const path = `/wp-json/booking-calendar/v1/${BENCH_QUERIES.find((q) => q.key === 'a')!.path}`

const { mariadb, children } = await startBenchDatabase()
const mariadbPid = Number(readFileSync(join(mariadb.dataDir, 'mariadbd.pid'), 'utf8').trim())
const readerDb = { host: mariadb.host, port: mariadb.port, user: READER.user, password: READER.password, database: BENCH_DATABASE }
const serviceEnv = {
  ...process.env, WORKERS: '1', LOG_LEVEL: 'warn', DB_POOL_SIZE: '10',
  DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
}
const dir = mkdtempSync(join(tmpdir(), 'bc-load-cpu-'))

/** CPU µs (user + system) a process has used so far. */
const cpuMicros = (pid: number) => cpuSeconds(pid) * 1e6

interface Server { name: string; url: string; pid: number; allocFile: string; stop(): Promise<void> }

/** Starts `script` with the workers' flags on a free port; once it answers (a) with 200. */
async function start(name: string, script: string, env: Record<string, string> = {}): Promise<Server> {
  const port = await findFreePort()
  const allocFile = join(dir, `${name.replace(/\W+/g, '-')}.heapprofile`)
  const profiling = CPU_PROF ? ['--cpu-prof', '--cpu-prof-interval', '1000', `--cpu-prof-dir=${join(CPU_PROF, name.replace(/\W+/g, '-'))}`] : []
  const child = spawn(process.execPath, [...DEFAULT_WORKER_V8_FLAGS, ...profiling, ...(ALLOC ? ['--import', join(here, 'alloc-sampling.mjs')] : []), script], {
    env: { ...serviceEnv, ...env, PORT: String(port), ALLOC_OUT: allocFile }, stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.add(child)
  const url = `http://127.0.0.1:${port}${path}`
  for (let i = 0; !(await get(url).then(() => true, () => false)); i++) {
    if (i > 200) throw new Error(`${name} did not answer (a) with 200`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { name, url, pid: child.pid!, allocFile, stop: () => new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.kill('SIGTERM') }) }
}

/** One GET; its body's chunks into `into`; a status other than 200 fails. */
function get(url: string, into?: Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      res.on('data', (chunk: Buffer) => into?.push(chunk))
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: ${res.statusCode}`))))
    }).on('error', reject)
  })
}

interface LoadResult { requests: { total: number }; non2xx: number; errors: number }
/** autocannon in this process (its CPU is the load's column); it has no types of its own. */
const autocannon = createRequire(import.meta.url)('autocannon') as (options: { url: string; connections: number; duration: number }) => Promise<LoadResult>

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

try {
  const service = await start('the service (dist/)', join(here, 'profile-server.mjs'))
  const chunks: Buffer[] = []
  await get(service.url, chunks)
  const bodyFile = join(dir, 'body.json')
  writeFileSync(bodyFile, Buffer.concat(chunks))
  const statement = benchStatement('a', readerDb)
  const floor = await start('node:http + the statement (the floor)', join(here, 'http-floor.mjs'), {
    FLOOR_KIND: 'http+sql', BENCH_BODY_FILE: bodyFile, BENCH_DB: JSON.stringify(readerDb), BENCH_SQL: statement.sql, BENCH_SQL_VALUES: JSON.stringify(statement.values),
  })
  const servers = [floor, service]
  if (process.env.OTHER) servers.push(await start(`the service of ${process.env.OTHER}`, join(process.env.OTHER, 'scripts/bench/profile-server.mjs')))
  const warmUpRequests = []
  for (const server of servers) warmUpRequests.push((await autocannon({ url: server.url, connections: 10, duration: 3 })).requests.total)
  if (ALLOC) for (const server of servers) process.kill(server.pid, 'SIGUSR2')

  say(`(a) ${path} at 10 connections, ${SECONDS} s a round, each server alone in turn (WORKERS=1, the workers' V8 flags)`)
  say()
  say('| round | server | req/s | server CPU µs/req | MariaDB CPU µs/req | load CPU µs/req |')
  say('|---:|---|---:|---:|---:|---:|')
  const requests = servers.map(() => 0)
  const cpuPerRequest: number[][] = servers.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    for (let j = 0; j < servers.length; j++) {
      const k = (j + round) % servers.length
      const server = servers[k]!
      const [serverBefore, mariadbBefore, loadBefore] = [cpuMicros(server.pid), cpuMicros(mariadbPid), process.cpuUsage()]
      const result = await autocannon({ url: server.url, connections: 10, duration: SECONDS })
      const load = process.cpuUsage(loadBefore)
      const n = result.requests.total
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name}: ${result.non2xx} answers not 2xx, ${result.errors} errors`)
      requests[k]! += n
      const serverCpu = (cpuMicros(server.pid) - serverBefore) / n
      cpuPerRequest[k]!.push(serverCpu)
      say(`| ${round + 1} | ${server.name} | ${Math.round(n / SECONDS)} | ${Math.round(serverCpu)} | ${Math.round((cpuMicros(mariadbPid) - mariadbBefore) / n)} | ${Math.round((load.user + load.system) / n)} |`)
    }
  }
  say()
  for (const [k, server] of servers.entries()) say(`- ${server.name}: median server CPU **${Math.round(median(cpuPerRequest[k]!))} µs** a request`)
  if (servers.length > 2) {
    const differences = cpuPerRequest[2]!.map((cpu, round) => Math.round(cpu - cpuPerRequest[1]![round]!))
    say(`- ${servers[2]!.name} − the service (dist/), per round: ${differences.map((d) => `${d > 0 ? '+' : ''}${d}`).join(', ')} µs`)
  }
  if (ALLOC) {
    for (const server of servers) process.kill(server.pid, 'SIGUSR2')
    for (let i = 0; i < 100 && servers.some((server) => !readable(server.allocFile)); i++) await new Promise((resolve) => setTimeout(resolve, 200))
    for (const [k, server] of servers.entries()) {
      say()
      say(`#### Allocations, ${server.name}`)
      say()
      say('```')
      say(spawnSync(process.execPath, [join(here, 'alloc-by-function.mjs'), server.allocFile, String(requests[k]), '25'], { encoding: 'utf8' }).stdout.trimEnd())
      say('```')
    }
  }
  if (CPU_PROF) {
    // node --cpu-prof writes its profile as the process exits: both servers exit on SIGTERM.
    await Promise.all(servers.map((server) => Promise.race([server.stop(), new Promise((resolve) => setTimeout(resolve, 10_000))])))
    say()
    for (const [k, server] of servers.entries()) say(`- ${server.name}: ${requests[k]! + warmUpRequests[k]!} requests in its profile (the warm-up's included), in ${join(CPU_PROF, server.name.replace(/\W+/g, '-'))}`)
  }
} finally {
  for (const child of children) child.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
  await mariadb.stop()
}

function readable(file: string): boolean {
  try {
    JSON.parse(readFileSync(file, 'utf8'))
    return true
  } catch {
    return false
  }
}
