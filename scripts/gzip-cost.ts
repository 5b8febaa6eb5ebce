// What nginx's gzip (docker/nginx/templates/default.conf.template) saves and
// costs on a year's report: the bench's data (scripts/bench/dataset.ts,
// BENCH_BOOKINGS, a million by default) in a private MariaDB, the built service
// on loopback, and Debian's nginx with the compose stack's template in front.
// Prints, for the bench's year report (query (b)) as JSON and as CSV, the bytes
// on the wire with and without gzip, the time to the last byte of each (median
// of GZIP_COST_RUNS, on loopback, where bandwidth costs nothing: the time gzip
// adds, never what it saves on a real link), and the nginx worker's CPU per answer.
// Usage: npx tsx scripts/gzip-cost.ts   (BENCH_BOOKINGS=100000 for a quicker run)
import { spawn } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { findFreePort } from './mariadb.ts'
import { cpuSeconds, startBenchDatabase, waitUntilReady } from './bench/setup.ts'
import { BENCH_DATA, BENCH_DATABASE, READER } from './bench/dataset.ts'
import { BENCH_QUERIES } from './bench/queries.ts'
import { nginxWorkerPids, startNginx } from '../tests/support/nginx.ts'

const RUNS = Number(process.env.GZIP_COST_RUNS ?? 5)
const here = new URL('.', import.meta.url).pathname
const say = (line = '') => process.stdout.write(`${line}\n`)

interface Download { ms: number; wireBytes: number; encoding: string | undefined; status: number }

/** One GET read to its end as fast as the client can; the bytes as they came over the wire. */
function download(url: string, headers: Record<string, string>): Promise<Download> {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, timeout: 300_000 }, (res) => {
      let wireBytes = 0
      res.on('data', (chunk: Buffer) => { wireBytes += chunk.length })
      res.on('end', () => resolve({
        ms: Number(process.hrtime.bigint() - started) / 1e6, wireBytes, encoding: res.headers['content-encoding'], status: res.statusCode!,
      }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no whole answer from ${url} within 300 s`)))
    req.on('error', reject)
    req.end()
  })
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const { mariadb, children, loadMs } = await startBenchDatabase()
say(`${BENCH_DATA.bookings.toLocaleString('en')} bookings (bench data) loaded in ${(loadMs / 1000).toFixed(1)} s; Node ${process.version}`)

const port = await findFreePort()
const service = spawn(process.execPath, [join(here, 'bench/profile-server.mjs')], {
  env: {
    ...process.env, PORT: String(port), LOG_LEVEL: 'warn',
    DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
  },
  stdio: ['ignore', 'ignore', 'inherit'],
})
children.add(service)
const serviceUrl = `http://127.0.0.1:${port}`
await waitUntilReady(serviceUrl)
const proxy = await startNginx({ api: `127.0.0.1:${port}`, wordpress: '127.0.0.1:9' })
const [worker] = nginxWorkerPids(proxy.pid)
if (worker === undefined) throw new Error('nginx started no worker')

const report = BENCH_QUERIES.find((q) => q.key === 'b')!.path
say(`year report: GET /wp-json/booking-calendar/v1/${report} (and &format=csv); ${RUNS} runs each, median`)
say('')
say('| answer | path | bytes on the wire | time to last byte | nginx CPU per answer |')
say('|---|---|---:|---:|---:|')
try {
  for (const [label, query] of [['JSON', report], ['CSV', `${report}&format=csv`]] as const) {
    const path = `/wp-json/booking-calendar/v1/${query}`
    const rows: Record<string, { ms: number; bytes: number; cpuMs: number }> = {}
    for (const [how, base, headers] of [
      ['service alone', serviceUrl, {}],
      ['nginx, identity', proxy.url, {}],
      ['nginx, gzip', proxy.url, { 'Accept-Encoding': 'gzip' }],
    ] as const) {
      await download(base + path, headers) // warm: the rows in MariaDB's buffer pool, the service's code compiled
      const times: number[] = []
      let bytes = 0
      const cpuBefore = cpuSeconds(worker)
      for (let run = 0; run < RUNS; run++) {
        const answer = await download(base + path, headers)
        if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`)
        if ((answer.encoding === 'gzip') !== ('Accept-Encoding' in headers)) throw new Error(`${how}: Content-Encoding ${answer.encoding}`)
        times.push(answer.ms)
        bytes = answer.wireBytes
      }
      const cpuMs = base === proxy.url ? ((cpuSeconds(worker) - cpuBefore) * 1000) / RUNS : Number.NaN
      rows[how] = { ms: median(times), bytes, cpuMs }
      say(`| ${label} | ${how} | ${bytes.toLocaleString('en')} | ${median(times).toFixed(0)} ms | ${Number.isNaN(cpuMs) ? '—' : `${cpuMs.toFixed(0)} ms`} |`)
    }
    const identity = rows['nginx, identity']!
    const gzip = rows['nginx, gzip']!
    say(`| ${label} | gzip against identity | ${(gzip.bytes / identity.bytes * 100).toFixed(1)} % of the bytes | ${(gzip.ms - identity.ms) >= 0 ? '+' : ''}${(gzip.ms - identity.ms).toFixed(0)} ms | +${(gzip.cpuMs - identity.cpuMs).toFixed(0)} ms |`)
  }
} finally {
  await proxy.stop()
  service.kill('SIGTERM')
}
process.exit(0)
