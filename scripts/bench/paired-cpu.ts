// Issue 12: two variants of the service under (a)'s load at the same time, so
// that the machine's drift (2× from day to day, ±30% from minute to minute)
// falls on both alike. Each variant is one service (WORKERS=1, so its flags
// reach the serving process), each gets BENCH_CONNECTIONS clients of its own;
// per round, the CPU per answer of each (every thread, from
// /proc/<pid>/task/*/schedstat, in ns) over the same seconds. Two copies of
// one build differ by about 10% (the first started uses more), so the pair
// runs in both orders, and the ratio is taken over both.
//
// A variant is node flags, optionally after `@<dir>`, a built copy of the
// service other than dist/ (say, a `cp -r dist` of an earlier commit):
//   BENCH_BOOKINGS=1000000 npx tsx scripts/bench/paired-cpu.ts '--heap-growing-percent=50 --max-semi-space-size=4' ''
//   BENCH_BOOKINGS=1000000 npx tsx scripts/bench/paired-cpu.ts '@/tmp/dist-before --heap-growing-percent=50 --max-semi-space-size=4' '--heap-growing-percent=50 --max-semi-space-size=4'
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { findFreePort } from '../mariadb.ts'
import { startBenchDatabase, waitUntilReady } from './setup.ts'
import { BENCH_DATABASE, READER } from './dataset.ts'
import { BENCH_QUERIES } from './queries.ts'

const repo = new URL('../../', import.meta.url).pathname
const say = (line = '') => process.stdout.write(`${line}\n`)
const [first, second] = process.argv.slice(2)
if (first === undefined || second === undefined) throw new Error('give two variants: node flags, optionally after @<dir>')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 5)
const path = `/wp-json/booking-calendar/v1/${BENCH_QUERIES.find((q) => q.key === 'a')!.path}`

const { mariadb, children } = await startBenchDatabase()

/** CPU time of every thread of a process so far, in ns. */
function cpuNs(pid: number): number {
  let total = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0])
  return total
}

interface Service { label: string; url: string; pid: number; child: ChildProcess }

async function startService(variant: string, label: string): Promise<Service> {
  const [, dir, flags] = /^(?:@(\S+)\s*)?(.*)$/.exec(variant)!
  const port = await findFreePort()
  const child = spawn(process.execPath, [...flags!.split(' ').filter(Boolean), join(dir ?? join(repo, 'dist'), 'server/main.js')], {
    env: {
      ...process.env, PORT: String(port), WORKERS: '1', LOG_LEVEL: 'warn', DB_POOL_SIZE: '10',
      DATABASE_URL: `mysql://${READER.user}:${READER.password}@${mariadb.host}:${mariadb.port}/${BENCH_DATABASE}`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.add(child)
  const url = `http://127.0.0.1:${port}`
  await waitUntilReady(url)
  return { label, url, pid: child.pid!, child }
}

/** autocannon on every service at once; answers (2xx) per service. */
async function loadAll(services: Service[], seconds: number): Promise<number[]> {
  return Promise.all(services.map((service) => new Promise<number>((resolve, reject) => {
    const run = spawn(join(repo, 'node_modules/.bin/autocannon'), ['-c', String(CONNECTIONS), '-d', String(seconds), '-j', `${service.url}${path}`], { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    run.stdout.on('data', (chunk: Buffer) => { out += chunk })
    run.on('error', reject)
    run.on('close', () => resolve((JSON.parse(out) as { '2xx': number })['2xx']))
  })))
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** One order of the pair: medians of CPU µs per answer, [first, second]. */
async function pair(variants: [string, string], labels: [string, string]): Promise<[number, number]> {
  const services = [await startService(variants[0], labels[0]), await startService(variants[1], labels[1])]
  await loadAll(services, 6)
  const perAnswer: number[][] = [[], []]
  for (let round = 1; round <= ROUNDS; round++) {
    const before = services.map((service) => cpuNs(service.pid))
    const answers = await loadAll(services, SECONDS)
    const us = services.map((service, i) => (cpuNs(service.pid) - before[i]!) / 1000 / answers[i]!)
    us.forEach((value, i) => perAnswer[i]!.push(value))
    say(`  round ${round}: ${services.map((service, i) => `${service.label} ${answers[i]} answers, ${us[i]!.toFixed(0)} µs each`).join(' | ')}`)
  }
  await Promise.all(services.map(({ child }) => new Promise((resolve) => {
    child.once('exit', resolve)
    child.kill('SIGTERM')
  })))
  for (const { child } of services) children.delete(child)
  return [median(perAnswer[0]!), median(perAnswer[1]!)]
}

say(`(a) \`${path}\`, ${CONNECTIONS} clients per service, ${ROUNDS} rounds of ${SECONDS} s; A = ${JSON.stringify(first)}, B = ${JSON.stringify(second)}`)
say('A started first:')
const [a1, b1] = await pair([first, second], ['A', 'B'])
say('B started first:')
const [b2, a2] = await pair([second, first], ['B', 'A'])
say()
say(`median CPU per answer: A ${a1.toFixed(0)} and ${a2.toFixed(0)} µs, B ${b1.toFixed(0)} and ${b2.toFixed(0)} µs`)
say(`B ÷ A over both orders: ${Math.sqrt((b1 / a1) * (b2 / a2)).toFixed(3)}`)
await mariadb.stop()
