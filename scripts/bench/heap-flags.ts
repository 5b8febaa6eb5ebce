// Issue 12: V8 heap flags side by side. One service per variant (WORKERS=1, so
// the flags reach the serving process itself) on one private MariaDB; rounds
// alternate between the variants, each round a (c) JSON export alone and then
// four (BENCH_CONCURRENT) at once. Reports per variant the service's CPU per row (less disturbed
// by a busy machine than wall time), the wall rate, and its peak RSS.
//
//   BENCH_BOOKINGS=100000 npx tsx scripts/bench/heap-flags.ts '' '--max-semi-space-size=4 --heap-growing-percent=50'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { get as httpGet } from 'node:http'
import { join } from 'node:path'
import { findFreePort } from '../mariadb.ts'
import { cpuSeconds, startBenchDatabase, waitUntilReady } from './setup.ts'
import { BENCH_DATA, BENCH_DATABASE, READER } from './dataset.ts'
import { BENCH_QUERIES } from './queries.ts'

const repo = new URL('../../', import.meta.url).pathname
const say = (line = '') => process.stdout.write(`${line}\n`)
const variants = process.argv.slice(2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
/** Exports at once in the second half of each round (BENCH_CONCURRENT). */
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 4)
const exportPath = `/wp-json/booking-calendar/v1/${BENCH_QUERIES.find((q) => q.key === 'c')!.path}`

const { mariadb, children } = await startBenchDatabase()

const peakMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

function download(url: string): Promise<number> {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { timeout: 300_000 }, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1e9) : reject(new Error(`${res.statusCode}`))))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
  })
}

const services = []
for (const flags of variants) {
  const port = await findFreePort()
  const child = spawn(process.execPath, [...flags.split(' ').filter(Boolean), join(repo, 'dist/server/main.js')], {
    env: {
      ...process.env, PORT: String(port), LOG_LEVEL: 'warn', WORKERS: '1', EXPOSE_CUSTOMER_DATA: 'true', DB_STREAM_CONNECTIONS: String(CONCURRENT),
      DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.add(child)
  const url = `http://127.0.0.1:${port}`
  await waitUntilReady(url)
  services.push({ flags, url, pid: child.pid!, single: [] as number[], together: [] as number[], singleCpu: [] as number[], togetherCpu: [] as number[] })
}
for (let round = 0; round < ROUNDS; round++) {
  for (const service of services) {
    let cpu = cpuSeconds(service.pid)
    service.single.push(BENCH_DATA.bookings / await download(service.url + exportPath))
    service.singleCpu.push((cpuSeconds(service.pid) - cpu) * 1e6 / BENCH_DATA.bookings)
    cpu = cpuSeconds(service.pid)
    const seconds = Math.max(...await Promise.all(Array.from({ length: CONCURRENT }, () => download(service.url + exportPath))))
    service.together.push(CONCURRENT * BENCH_DATA.bookings / seconds)
    service.togetherCpu.push((cpuSeconds(service.pid) - cpu) * 1e6 / (CONCURRENT * BENCH_DATA.bookings))
  }
}
const list = (values: number[], digits: number) => values.map((v) => (digits === 0 ? Math.round(v).toLocaleString('en') : v.toFixed(digits))).join(' ')
say(`\n${BENCH_DATA.bookings.toLocaleString('en')} bookings, (c) JSON with customer data, ${ROUNDS} rounds alternating; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`)
say(`| node flags | one export: CPU µs per row | rows/s | ${CONCURRENT} at once: CPU µs per row | rows/s together | peak RSS MB |`)
say('|---|---|---|---|---|---:|')
for (const s of services) {
  say(`| ${s.flags || '(V8 defaults)'} | ${list(s.singleCpu, 2)} | ${list(s.single, 0)} | ${list(s.togetherCpu, 2)} | ${list(s.together, 0)} | ${peakMb(s.pid).toFixed(0)} |`)
}
for (const child of children) child.kill('SIGTERM')
await mariadb.stop()
