// The writer of BENCH_ONLY=x's lag phase (changes-log.ts): single-row writes
// to the bookings table at a fixed rate, as the site's administrator (root
// over the socket), each a transaction of its own (autocommit), for a fixed
// time. Mostly updates of random rows (a shown column, `note`), some inserts
// (a copy of a random row) and deletes (of rows it inserted itself, so the
// data set the other phases read keeps its size).
//   npx tsx scripts/bench/log-writes.ts <writes per second> <seconds>
// env: BENCH_ROOT_SOCKET, BENCH_DATABASE. Prints one JSON line at the end.
import mysql from 'mysql2/promise'

const rate = Number(process.argv[2] ?? 500)
const seconds = Number(process.argv[3] ?? 30)
const table = 'wp_booking_calendar_bookings'
/** Writes in flight at most: enough that one slow commit does not hold the rate back. */
const IN_FLIGHT = 4
const INSERT_SHARE = 0.05
const DELETE_SHARE = 0.05

const pool = mysql.createPool({ socketPath: process.env.BENCH_ROOT_SOCKET, user: 'root', database: process.env.BENCH_DATABASE, connectionLimit: IN_FLIGHT })
const [[range]] = await pool.query('SELECT MIN(id) AS lo, MAX(id) AS hi FROM ' + table) as unknown as [[{ lo: number; hi: number }]]
const randomId = () => Number(range.lo) + Math.floor(Math.random() * (Number(range.hi) - Number(range.lo) + 1))
const inserted: number[] = []
const done = { updates: 0, inserts: 0, deletes: 0, failed: 0 }
let issued = 0
let inFlight = 0
/** The most writes that were due and not yet issued at any tick. */
let mostBehind = 0

const write = async (n: number) => {
  const pick = Math.random()
  try {
    if (pick < INSERT_SHARE) {
      const [result] = await pool.query(`INSERT INTO ${table} (service_id, status, booking_date, time_from, time_to, customer_name, customer_email, customer_phone, note, created_at)
        SELECT service_id, status, booking_date, time_from, time_to, customer_name, customer_email, customer_phone, 'bench insert', NOW() FROM ${table} WHERE id = ?`, [randomId()]) as unknown as [{ insertId: number; affectedRows: number }]
      if (result.affectedRows > 0) inserted.push(result.insertId)
      done.inserts++
    } else if (pick < INSERT_SHARE + DELETE_SHARE && inserted.length > 0) {
      await pool.query(`DELETE FROM ${table} WHERE id = ?`, [inserted.shift()])
      done.deletes++
    } else {
      await pool.query(`UPDATE ${table} SET note = ? WHERE id = ?`, [`bench write ${n}`, randomId()])
      done.updates++
    }
  } catch {
    done.failed++
  }
}

const started = performance.now()
const total = Math.round(rate * seconds)
const running = new Set<Promise<void>>()
while (issued < total) {
  const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate))
  mostBehind = Math.max(mostBehind, due - issued)
  while (issued < due && inFlight < IN_FLIGHT) {
    inFlight++
    const p: Promise<void> = write(issued++).finally(() => { inFlight--; running.delete(p) })
    running.add(p)
  }
  await new Promise((resolve) => setTimeout(resolve, 1))
}
await Promise.all(running)
const elapsed = (performance.now() - started) / 1000
// What it inserted and did not delete goes again: the next phases read the data set as it was.
while (inserted.length > 0) await pool.query(`DELETE FROM ${table} WHERE id IN (?)`, [inserted.splice(0, 1000)])
await pool.end()
process.stdout.write(`${JSON.stringify({ ...done, writes: done.updates + done.inserts + done.deletes, seconds: elapsed, perSecond: (done.updates + done.inserts + done.deletes) / elapsed, mostBehind })}\n`)
