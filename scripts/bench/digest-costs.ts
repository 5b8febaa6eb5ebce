// What a digest of the year report's rows costs MariaDB, by the per-row
// function it uses, beside the floor (MariaDB reading each shown column of the
// same rows, nothing hashed or sent) and the rows statement sent to mysql2; and
// what the same per-row function costs a worker over the rows a 200 reads.
// The figures behind decision 0034 (docs/decisions/0034-a-304-is-digested-by-the-database.md).
// Usage: npx tsx scripts/bench/digest-costs.ts (a private MariaDB, a million bookings, about 3 minutes).
import { createHash, hash as oneShotHash } from 'node:crypto'
import mysql from 'mysql2/promise'
import { startBenchDatabase } from './setup.ts'
import { BENCH_DATABASE } from './dataset.ts'
import { crc32, parseServerVersion, rowPacketCrcs, rowsInTableOrder } from '../../server/tools.ts'

const RUNS = Number(process.env.DIGEST_RUNS ?? 9)
const say = (line = '') => process.stdout.write(`${line}\n`)

const { mariadb } = await startBenchDatabase()
const connection = await mysql.createConnection({ socketPath: mariadb.socketPath, user: 'root', database: BENCH_DATABASE })

const YEAR = `FROM wp_booking_calendar_bookings FORCE INDEX (bc_api_date) WHERE status IN ('pending', 'booked') AND booking_date BETWEEN '2025-01-01' AND '2025-12-31'`
/** The cells of a row as the digest joins them (db/row-digest.ts), the customer's hidden: text cast to its bytes, NULL as 0xFE where it may be. */
const ROW = "CONCAT_WS(_binary X'FF', id, service_id, CAST(status AS BINARY), booking_date, IFNULL(time_from, _binary X'FE'), IFNULL(time_to, _binary X'FE'), " +
  "CAST('' AS BINARY), CAST('' AS BINARY), CAST('' AS BINARY), IFNULL(CAST(note AS BINARY), _binary X'FE'), created_at, _binary X'FE')"
/** Every cell tested for NULL and cast, as the first version did. */
const ROW_UNIFORM = `CONCAT_WS(_binary X'FF', ${['id', 'service_id', 'status', 'booking_date', 'time_from', 'time_to', "''", "''", "''", 'note', 'created_at', 'NULL']
  .map((cell) => `IFNULL(CAST(${cell} AS BINARY), _binary X'FE')`).join(', ')})`
const first64 = (digest: string) => `CAST(CONV(LEFT(${digest}, 16), 16, 10) AS UNSIGNED)`
const MRR = "SET STATEMENT optimizer_switch = 'mrr=on,mrr_sort_keys=on,mrr_cost_based=off' FOR "
/** The service's own: MRR with a larger buffer (db/server-dialect.ts). */
const SERVICE = (sql: string) => rowsInTableOrder(parseServerVersion('10.11.0-MariaDB'), sql)

const STATEMENTS: Array<[string, string]> = [
  ['the rows, sent to mysql2 (in answer order)', `SELECT id, service_id, status, booking_date, time_from, time_to, '' AS customer_name, '' AS customer_email, '' AS customer_phone, note, created_at, NULL AS service_post_name ${YEAR} ORDER BY booking_date, time_from, id`],
  ['floor: each shown column read, nothing hashed or sent (MRR)', `${MRR}SELECT COUNT(*), MAX(id), MAX(service_id), MAX(status), MAX(booking_date), MAX(time_from), MAX(time_to), MAX(note), MAX(created_at) ${YEAR}`],
  ['floor without MRR', `SELECT COUNT(*), MAX(id), MAX(service_id), MAX(status), MAX(booking_date), MAX(time_from), MAX(time_to), MAX(note), MAX(created_at) ${YEAR}`],
  ['SUM(CRC32(row)), SUM(CRC32(REVERSE(row))): 64 bits, MRR with a 4 MiB buffer: the service\'s (decision 0035)', SERVICE(`SELECT COUNT(*), SUM(CRC32(${ROW})), SUM(CRC32(REVERSE(${ROW}))) ${YEAR}`)],
  ['SUM(CRC32(row)), MRR with a 4 MiB buffer: the service\'s before decision 0035', SERVICE(`SELECT COUNT(*), SUM(CRC32(${ROW})) ${YEAR}`)],
  ['SUM(CRC32(row)), MRR', `${MRR}SELECT COUNT(*), SUM(CRC32(${ROW})) ${YEAR}`],
  ['SUM(CRC32(row)), every cell tested for NULL and cast, MRR', `${MRR}SELECT COUNT(*), SUM(CRC32(${ROW_UNIFORM})) ${YEAR}`],
  ['SUM(CRC32(row)) without MRR', `SELECT COUNT(*), SUM(CRC32(${ROW})) ${YEAR}`],
  ['SUM(CRC32(row)), SUM(CRC32(HEX(row))): 64 bits, MRR with a 4 MiB buffer', SERVICE(`SELECT COUNT(*), SUM(CRC32(${ROW})), SUM(CRC32(HEX(${ROW}))) ${YEAR}`)],
  ['SUM(first 64 bits of SHA1(row)), MRR with a 4 MiB buffer', SERVICE(`SELECT COUNT(*), SUM(${first64(`SHA1(${ROW})`)}) ${YEAR}`)],
  ['SUM(first 64 bits of MD5(row)), MRR with a 4 MiB buffer', SERVICE(`SELECT COUNT(*), SUM(${first64(`MD5(${ROW})`)}) ${YEAR}`)],
]

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
const times = new Map<string, number[]>()
for (let run = 0; run < RUNS; run++) {
  // In turn, so that every statement sees the same machine.
  for (const [name, sql] of STATEMENTS) {
    const started = process.hrtime.bigint()
    await connection.query(sql)
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    times.set(name, [...(times.get(name) ?? []), ms])
  }
}
const rowsMs = median(times.get(STATEMENTS[0]![0])!)
say(`The year report ((b), 2025, pending and booked), ${RUNS} runs each, in turn; ms:`)
say()
say('| statement | best | median | median ÷ the rows sent |')
say('|---|---:|---:|---:|')
for (const [name, ms] of times) say(`| ${name} | ${Math.min(...ms).toFixed(1)} | ${median(ms).toFixed(1)} | ${(median(ms) / rowsMs).toFixed(2)} |`)

// The worker's side: each row's cells, joined as the digest joins them, hashed one row at a time.
const [rows] = await connection.query(`SELECT HEX(${ROW}) AS joined ${YEAR}`) as unknown as [Array<{ joined: string }>]
const joined = rows.map((row) => Buffer.from(row.joined, 'hex'))
const bytes = joined.reduce((sum, row) => sum + row.length, 0)
// The same rows as the text protocol's packets a 200 reads (each cell length-coded, NULL 0xFB).
const ROW_CELLS = 12
const packets = joined.map((row) => {
  const parts: Buffer[] = []
  let start = 0
  const cells: Array<Buffer | null> = []
  for (let i = 0; i <= row.length; i++) {
    if (i === row.length || row[i] === 0xff) {
      const cell = row.subarray(start, i)
      cells.push(cell.length === 1 && cell[0] === 0xfe ? null : cell)
      start = i + 1
    }
  }
  for (const cell of cells) {
    if (cell === null) parts.push(Buffer.from([0xfb]))
    else parts.push(cell.length < 0xfb ? Buffer.from([cell.length]) : Buffer.from([0xfc, cell.length & 0xff, cell.length >> 8]), cell)
  }
  return Buffer.concat(parts)
})
const worker: Array<[string, () => void]> = [
  ['one SHA-256 over every row (v2\'s tag)', () => { const h = createHash('sha256'); for (const row of joined) h.update(row); h.digest() }],
  ['CRC-32 per row (before decision 0035)', () => { let sum = 0; for (const row of joined) sum += crc32(row); return sum }],
  ['CRC-32 of the row and of its reversed bytes, from its packet (db/row-digest.ts)', () => {
    const out = { crc: 0, reversed: 0 }
    let sum = 0
    for (const packet of packets) {
      rowPacketCrcs(packet, 0, packet.length, ROW_CELLS, out)
      sum += out.crc + out.reversed
    }
    return sum
  }],
  ['SHA-1 per row, crypto.hash', () => { for (const row of joined) oneShotHash('sha1', row, 'buffer') }],
  ['SHA-1 per row, createHash', () => { for (const row of joined) createHash('sha1').update(row).digest() }],
]
say()
say(`The worker, over the same ${joined.length.toLocaleString('en')} rows (${(bytes / 1e6).toFixed(1)} MB joined), ms:`)
say()
say('| per-row work | median |')
say('|---|---:|')
for (const [name, work] of worker) {
  const ms: number[] = []
  for (let run = 0; run < RUNS; run++) {
    const started = process.hrtime.bigint()
    work()
    ms.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  say(`| ${name} | ${median(ms).toFixed(1)} |`)
}
await connection.end()
// Stopped here, not by exiting: the private MariaDB and its data directory go with it.
await mariadb.stop()
