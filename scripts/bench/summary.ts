// The benchmark of GET summary/: a year grouped by month and service,
// one request at a time, against fetching the same year's bookings from slots/.
// A small client of its own: serial requests timed with hrtime, each body read
// whole, p50 over N. The bench's runner starts the service and passes its URL.
import { get as httpGet } from 'node:http'
import { createPool, type Pool } from 'mysql2'
import { Kysely, MysqlDialect } from 'kysely'
import {
  bookingFilter, compileAllServicesQuery, compileRulesQuery, compileSummaryQuery, splitByBookingDate, TablePrefixPlugin, takeRowPackets, type Database,
} from '../../server/tools.ts'

/** What the runner hands every measurement module (scripts/bench/context.ts, when it exists, has at least this). */
export interface SummaryBenchContext {
  /** The service's base URL, e.g. http://127.0.0.1:41234 (loopback only). */
  serviceUrl: string
  say(line: string): void
  /** The SELECT-only account the service uses: with it, the summary's own statements are timed alone too (its limit). */
  readerDb?: { host: string; port: number; user: string; password: string; database: string }
}

const PREFIX = '/wp-json/booking-calendar/v1'
export const SUMMARY_PATH = `${PREFIX}/summary?start=2025-01-01&end=2025-12-31&group_by=month,service`
export const SLOTS_YEAR_PATH = `${PREFIX}/slots?start=2025-01-01&end=2025-12-31&flat`
const SUMMARY_RUNS = Number(process.env.BENCH_SUMMARY_RUNS ?? 30)
/** At least one: the requests of summary/ are shared out between those of slots/. */
const SLOTS_RUNS = Math.max(1, Number(process.env.BENCH_SUMMARY_SLOTS_RUNS ?? 5))
const TIMEOUT_MS = 120_000

/** One GET, its body read whole and dropped: milliseconds to the last byte, or an error for anything but 200. */
function timeOne(url: string): Promise<number> {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { timeout: TIMEOUT_MS }, (res) => {
      res.on('data', () => {})
      res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`${url}: ${res.statusCode}`))))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer in ${TIMEOUT_MS} ms`)))
    req.on('error', reject)
  })
}

function p50(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * Measures both, one request at a time, and returns the markdown lines of the
 * result. After one warm-up request of each, they take turns: each request of
 * slots/ follows its share of summary/'s, so that the machine's drift over the
 * run (its speed varies up to 2× within minutes) falls on both alike, as the
 * ratio needs (scripts/bench/README.md, eighteenth pass).
 */
export async function benchSummary(ctx: SummaryBenchContext): Promise<string[]> {
  const summaryUrl = `${ctx.serviceUrl}${SUMMARY_PATH}`
  const slotsUrl = `${ctx.serviceUrl}${SLOTS_YEAR_PATH}`
  const statements = ctx.readerDb && summaryStatements(ctx.readerDb)
  await timeOne(summaryUrl)
  await timeOne(slotsUrl)
  await statements?.timeOnce()
  const summaryTimes: number[] = []
  const statementTimes: number[] = []
  const slotsTimes: number[] = []
  for (let round = 0; round < SLOTS_RUNS; round++) {
    const until = Math.round((SUMMARY_RUNS * (round + 1)) / SLOTS_RUNS)
    while (summaryTimes.length < until) {
      summaryTimes.push(await timeOne(summaryUrl))
      if (statements) statementTimes.push(await statements.timeOnce())
    }
    slotsTimes.push(await timeOne(slotsUrl))
  }
  await statements?.end()
  const summary = p50(summaryTimes)
  const slots = p50(slotsTimes)
  const alone = statementTimes.length > 0 ? p50(statementTimes) : NaN
  const lines = [
    '',
    '| (e) a year by month and service, 1 at a time, the two in turn | requests | p50 ms |',
    '|---|---:|---:|',
    `| summary/ (\`${SUMMARY_PATH.slice(PREFIX.length + 1)}\`) | ${SUMMARY_RUNS} | ${summary.toFixed(1)} |`,
    `| slots/, the same year's bookings (\`${SLOTS_YEAR_PATH.slice(PREFIX.length + 1)}\`) | ${SLOTS_RUNS} | ${slots.toFixed(1)} |`,
    ...(statementTimes.length > 0 ? [`| summary/'s own statements alone through mysql2 (its two halves, the rules and the services, at once; row packets dropped), each after a summary/ | ${statementTimes.length} | ${alone.toFixed(1)} |`] : []),
    '',
    `- (e) summary/ p50: **${summary.toFixed(1)} ms** (target ≤ 300 ms); slots/ ÷ summary/: **${(slots / summary).toFixed(1)}×** (target ≥ 20×)`,
    ...(statementTimes.length > 0 ? [`  - limit, measured: MariaDB answers summary/'s statements alone in ${alone.toFixed(1)} ms (p50): slots/ ÷ that is **${(slots / alone).toFixed(1)}×**${slots / alone < 20 ? ', under the target: no service running these statements can reach 20× in this run' : ', so MariaDB alone does not rule the target out'}`] : []),
  ]
  for (const line of lines) ctx.say(line)
  return lines
}

/**
 * summary/'s statements for SUMMARY_PATH, as answerSummary sends them at once
 * (the two halves of the year, the rules, the services), run through mysql2
 * with each row packet dropped: what MariaDB's side of that answer takes.
 */
function summaryStatements(readerDb: NonNullable<SummaryBenchContext['readerDb']>): { timeOnce(): Promise<number>; end(): Promise<void> } {
  const pool: Pool = createPool({ ...readerDb, connectionLimit: 4, charset: 'UTF8MB4_UNICODE_520_CI' })
  // Kysely only compiles here; it never connects.
  const db = new Kysely<Database>({ dialect: new MysqlDialect({ pool }), plugins: [new TablePrefixPlugin('wp_')] })
  const query = new URLSearchParams(SUMMARY_PATH.slice(SUMMARY_PATH.indexOf('?') + 1))
  const filter = bookingFilter({ status: undefined, start: query.get('start')!, end: query.get('end')!, filter_by: 'booking_date' }, undefined)
  const compiled = [
    ...splitByBookingDate({ filter, dateOf: 'booking_date', byStatus: false, blocking: ['pending', 'booked', 'completed'] }).map((part) => compileSummaryQuery(db, part)),
    compileRulesQuery(db, undefined),
    compileAllServicesQuery(db),
  ]
  const run = (statement: { sql: string; parameters: readonly unknown[] }) => new Promise<void>((resolve, reject) => {
    const sent = pool.query(statement.sql, statement.parameters as unknown[], (error) => (error ? reject(error) : resolve()))
    takeRowPackets(sent, { accepts: () => true, row: () => {} })
  })
  return {
    async timeOnce() {
      const started = process.hrtime.bigint()
      await Promise.all(compiled.map(run))
      return Number(process.hrtime.bigint() - started) / 1e6
    },
    end: () => new Promise<void>((resolve) => pool.end(() => resolve())),
  }
}
