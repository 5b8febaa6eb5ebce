// A child process of the benchmark: the raw database time of one benchmark
// query, the very SQL the service sends, through mysql2 with no HTTP.
// argv: <key> load <concurrency> <seconds> [<warm-up seconds>]  |  <key> stream '' '' [<warm-up seconds>]
//   |  c packets <hidden|shown> <service|booking> [<warm-up seconds>]  |  <key> sql
//   |  c statements <hidden|shown> <service|booking>
// `packets`: the export's count and rows as the service sends them, each row packet
// dropped undecoded. Prints one JSON line (`sql`: the statement, for http-floor.mjs).
import { readFileSync } from 'node:fs'
import { createPool } from 'mysql2'
import { Kysely, MysqlDialect } from 'kysely'
import { compileBookingsQuery, compileCountQuery, readBookingIndexes, TablePrefixPlugin, type Database } from '../../server/tools.ts'
import { BENCH_QUERIES } from './queries.ts'
import { dropRowPackets, streamRowsWithMysql2 } from './mysql2-floor.ts'

const [key, mode, concurrencyText, secondsText, warmupText] = process.argv.slice(2)
const settings = JSON.parse(process.env.BENCH_DB!) as { host: string; port: number; user: string; password: string; database: string }
const pool = createPool({ ...settings, dateStrings: true, connectionLimit: Number(concurrencyText ?? 1), charset: 'UTF8MB4_UNICODE_520_CI' })
const db = new Kysely<Database>({ dialect: new MysqlDialect({ pool }), plugins: [new TablePrefixPlugin('wp_')] })
// The service reads booking-date ranges through the index it finds (db/booking-indexes.ts): so does the raw SQL.
await readBookingIndexes(db, 'wp_booking_calendar_bookings')
const compiled = BENCH_QUERIES.find((query) => query.key === key)!.sql(db)
const peakRssMb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024

const query = () => new Promise<number>((resolve, reject) => {
  pool.query(compiled.sql, compiled.parameters as unknown[], (error, rows) => (error ? reject(error) : resolve((rows as unknown[]).length)))
})

/** `packets` and `statements`: the export's rows as the service reads them, and its count. */
const exportRows = () => compileBookingsQuery(db, {}, secondsText === 'booking' ? 'booking' : 'service', { customer: concurrencyText === 'shown' }, false)

if (mode === 'sql') {
  // For the bench's HTTP floor that runs this statement itself (http-floor.mjs, http+sql).
  console.log(JSON.stringify({ sql: compiled.sql, values: compiled.parameters }))
} else if (mode === 'statements') {
  // For the bench's HTTP floor of an export (http-floor.mjs, http+export).
  const rows = exportRows()
  const count = compileCountQuery(db, {})
  console.log(JSON.stringify({ sql: rows.sql, values: rows.parameters, countSql: count.sql, countValues: count.parameters }))
} else if (mode === 'stream' || mode === 'packets') {
  const stream = mode === 'stream'
    ? () => streamRowsWithMysql2(pool, compiled)
    : () => dropRowPackets(pool, exportRows(), compileCountQuery(db, {}))
  // Warmed up as the service is: whole streams for the warm-up seconds, unmeasured, at least one.
  const warmUntil = Date.now() + Number(warmupText ?? 0) * 1000
  if (Number(warmupText ?? 0) > 0) do await stream(); while (Date.now() < warmUntil)
  const started = process.hrtime.bigint()
  const rows = await stream()
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  console.log(JSON.stringify({ rows, seconds, rowsPerSecond: rows / seconds, peakRssMb: peakRssMb() }))
} else {
  const concurrency = Number(concurrencyText)
  const warmUntil = Date.now() + Number(warmupText ?? 0) * 1000
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < warmUntil) await query()
  }))
  const deadline = Date.now() + Number(secondsText) * 1000
  const latencies: number[] = []
  let rows = 0
  const started = Date.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < deadline) {
      const t = process.hrtime.bigint()
      rows = await query()
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
  }))
  latencies.sort((a, b) => a - b)
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!
  const mean = latencies.reduce((sum, t) => sum + t, 0) / latencies.length
  // One at a time, the latencies too: the bench merges rounds taken in turn with the service's.
  console.log(JSON.stringify({ rows, requests: latencies.length, rps: latencies.length / ((Date.now() - started) / 1000), p50: at(0.5), p99: at(0.99), mean, ...(concurrency === 1 ? { latencies } : {}) }))
}
// Kysely's destroy() would leave this pool open: it was made here, not by Kysely.
await new Promise<void>((resolve) => pool.end(() => resolve()))
