// Issue 12: where (a)'s time goes, one request at a time. Six servers answer
// (a) from the same database: node:http running its statement and dropping the
// rows (the bench's floor, http-floor.mjs), the rungs of narrow-rungs.mjs, each
// doing one thing more, and the service. Requests go to each in turn, the order
// rotating every cycle, so every cycle sees the same machine; per round, each
// server's p50 and the median over the cycles of its time minus the floor's.
// Each is one process (WORKERS=1) with the workers' V8 flags.
//
//   BENCH_BOOKINGS=1000000 npx tsx scripts/bench/narrow-ladder.ts
//
// BENCH_ROUNDS (3) rounds of BENCH_SECONDS (8) each. On two cores, a server
// and MariaDB may share one while the rows arrive: BENCH_PIN=1 pins MariaDB to
// the first core and the servers and this client to the second, to see what that costs.
import { spawn, spawnSync } from 'node:child_process'
import http from 'node:http'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findFreePort } from '../mariadb.ts'
import { benchStatement, startBenchDatabase } from './setup.ts'
import { BENCH_DATABASE, READER } from './dataset.ts'
import { BENCH_QUERIES } from './queries.ts'
import { DEFAULT_WORKER_V8_FLAGS } from '../../server/config.ts'

const here = new URL('.', import.meta.url).pathname
const repo = new URL('../../', import.meta.url).pathname
const say = (line = '') => process.stdout.write(`${line}\n`)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const path = `/wp-json/booking-calendar/v1/${BENCH_QUERIES.find((q) => q.key === 'a')!.path}`

const { mariadb, children } = await startBenchDatabase()
if (process.env.BENCH_PIN === '1') {
  const pinned = [
    spawnSync('taskset', ['-a', '-p', '-c', '0', readFileSync(join(mariadb.dataDir, 'mariadbd.pid'), 'utf8').trim()]),
    // Every thread of this process: the servers started from here inherit it.
    spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)]),
  ]
  if (pinned.some((run) => run.status !== 0)) throw new Error('taskset failed: BENCH_PIN needs two cores and util-linux')
}
const readerDb = { host: mariadb.host, port: mariadb.port, user: READER.user, password: READER.password, database: BENCH_DATABASE }
const serviceEnv = {
  ...process.env, WORKERS: '1', LOG_LEVEL: 'warn', DB_POOL_SIZE: '10',
  DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
}
const dir = mkdtempSync(join(tmpdir(), 'bc-ladder-'))

/** Starts `script` with the workers' flags on a free port; its URL once it answers (a) with 200. */
async function start(script: string, env: Record<string, string>): Promise<string> {
  const port = await findFreePort()
  const child = spawn(process.execPath, [...DEFAULT_WORKER_V8_FLAGS, script], { env: { ...serviceEnv, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] })
  children.add(child)
  const url = `http://127.0.0.1:${port}${path}`
  for (let i = 0; (await timed(url).catch(() => undefined)) === undefined; i++) {
    if (i > 200) throw new Error(`${script} ${JSON.stringify(env)} did not answer`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return url
}

/** One GET to its last byte, in µs, on `agent`; a status other than 200 fails. */
function timed(url: string, agent: http.Agent | false = false, into?: Buffer[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    http.get(url, { agent }, (res) => {
      res.on('data', (chunk: Buffer) => into?.push(chunk))
      res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1e3) : reject(new Error(`${url}: ${res.statusCode}`))))
      res.on('error', reject)
    }).on('error', reject)
  })
}

try {
  const serviceUrl = await start(join(repo, 'dist/server/main.js'), {})
  const chunks: Buffer[] = []
  await timed(serviceUrl, false, chunks)
  const bodyFile = join(dir, 'body.json')
  writeFileSync(bodyFile, Buffer.concat(chunks))
  const statement = benchStatement('a', readerDb)
  const floorUrl = await start(join(here, 'http-floor.mjs'), {
    FLOOR_KIND: 'http+sql', BENCH_BODY_FILE: bodyFile,
    BENCH_DB: JSON.stringify(readerDb), BENCH_SQL: statement.sql, BENCH_SQL_VALUES: JSON.stringify(statement.values),
  })
  const rung = (name: string) => start(join(here, 'narrow-rungs.mjs'), { RUNG: name, BENCH_BODY_FILE: bodyFile })
  const servers = [
    { label: 'node:http + the statement, rows dropped (the floor)', url: floorUrl },
    { label: '+ answerSlots (pool, lease, row packets), rows dropped', url: await rung('dropped') },
    { label: '+ rows written into the body (SlotsBody, sendWhole)', url: await rung('written') },
    { label: '+ the parameters parsed (zod) on each request', url: await rung('parsed') },
    { label: '+ Express 5, one route, no middleware', url: await rung('express') },
    { label: 'the service (every middleware, the route as it is)', url: serviceUrl },
  ]
  const agents = servers.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }))
  for (let i = 0; i < 300; i++) for (const [k, server] of servers.entries()) await timed(server.url, agents[k])
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  say(`(a) ${path}, one request at a time, each server in turn (the order rotating), ${SECONDS} s a round; µs`)
  say()
  say(`| server | ${Array.from({ length: ROUNDS }, (_, r) => `round ${r + 1}: p50 (− floor)`).join(' | ')} |`)
  say(`|---|${'---:|'.repeat(ROUNDS)}`)
  const cells: string[][] = servers.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    const times: number[][] = servers.map(() => [])
    const overFloor: number[][] = servers.map(() => [])
    const deadline = Date.now() + SECONDS * 1000
    for (let cycle = 0; Date.now() < deadline; cycle++) {
      const took: number[] = []
      for (let j = 0; j < servers.length; j++) {
        const k = (j + cycle) % servers.length
        took[k] = await timed(servers[k]!.url, agents[k])
      }
      for (let k = 0; k < servers.length; k++) {
        times[k]!.push(took[k]!)
        overFloor[k]!.push(took[k]! - took[0]!)
      }
    }
    for (let k = 0; k < servers.length; k++) cells[k]!.push(`${Math.round(median(times[k]!))} (${k === 0 ? '—' : `+${Math.round(median(overFloor[k]!))}`})`)
  }
  for (const [k, server] of servers.entries()) say(`| ${server.label} | ${cells[k]!.join(' | ')} |`)
  for (const agent of agents) agent.destroy()
} finally {
  rmSync(dir, { recursive: true, force: true })
  for (const child of children) child.kill('SIGKILL')
  await mariadb.stop()
}
