// The Node floor of the concurrent-reports load (concurrent-reports.ts): N
// mysql2 connections running the service's own statement back to back for S
// seconds, each row read as mysql2's object and dropped. What any Node service
// on mysql2 (the stack's driver) could reach at most; the `mariadb` clients
// beside it read with MariaDB's own C library. Prints {"done": n} as its last line.
import mysql from 'mysql2'

const [clients, seconds] = [Number(process.argv[2] ?? 16), Number(process.argv[3] ?? 30)]
const db = JSON.parse(process.env.BENCH_DB ?? '{}') as mysql.ConnectionOptions
const sql = process.env.BENCH_SQL ?? ''
const until = Date.now() + seconds * 1000
let done = 0
await Promise.all(Array.from({ length: clients }, async () => {
  const connection = mysql.createConnection({ ...db, dateStrings: true })
  while (Date.now() < until) {
    await new Promise<void>((resolve, reject) => {
      const query = connection.query(sql)
      query.on('result', () => {})
      query.on('end', () => resolve())
      query.on('error', reject)
    })
    if (Date.now() <= until) done++
  }
  connection.destroy()
}))
process.stdout.write(`${JSON.stringify({ done })}\n`)
