// A late joiner of a shared answer (server/http/log-answers.ts), on its own:
// the log source's service (dist/, WORKERS=1 so both requests reach the one
// worker), the whole export at BENCH_BOOKINGS (100,000: 26 MB), read by a
// first request; a second, identical one sent once the first has received
// 2 to 20 MB. Prints what each received. Found by BENCH_ONLY=x: 9 of 248 of
// the 16 clients' year reports at 1,000,000 were cut (curl exit 18).
//   npm run build && BENCH_BOOKINGS=100000 npx tsx scripts/bench/late-joiner.ts
import { spawn } from 'node:child_process'
import { request } from 'node:http'
import { startMariaDb, findFreePort } from '../mariadb.ts'
import { createBenchDatabase, BENCH_DATABASE } from './dataset.ts'
import { BINLOG_OPTIONS } from './changes-log.ts'
const m = await startMariaDb({ bufferPoolMb: 1024, serverOptions: BINLOG_OPTIONS })
let child: ReturnType<typeof spawn> | undefined
try {
  await createBenchDatabase(m)
  await m.adminQuery(`CREATE USER 'lr'@'%' IDENTIFIED BY 'lr'; GRANT SELECT ON ${BENCH_DATABASE}.* TO 'lr'@'%'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'lr'@'%';`)
  const port = await findFreePort()
  child = spawn(process.execPath, [new URL('../../dist/server/main.js', import.meta.url).pathname], { env: { ...process.env, PORT: String(port), WORKERS: '1', LOG_LEVEL: 'warn', DATABASE_URL: `mysql://lr:lr@127.0.0.1:${m.port}/${BENCH_DATABASE}` }, stdio: ['ignore', 'ignore', 'inherit'] })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 300; i++) {
    const r = await fetch(`${base}/readyz`).then((res) => res.json(), () => ({})) as { changes?: { source?: string; reader?: { connected?: boolean } } }
    if (r.changes?.source === 'log' && r.changes.reader?.connected) break
    await new Promise((res) => setTimeout(res, 100))
  }
  const url = `${base}/wp-json/booking-calendar/v1/slots`
  const get = (onBytes?: (n: number) => void) => new Promise<{ status: number; bytes: number; complete: boolean; error?: string }>((resolve) => {
    request(url, { agent: false }, (res) => {
      let bytes = 0
      res.on('data', (c: Buffer) => { bytes += c.length; onBytes?.(bytes) })
      res.on('end', () => resolve({ status: res.statusCode!, bytes, complete: res.complete }))
      res.on('error', (e) => resolve({ status: res.statusCode!, bytes, complete: false, error: e.message }))
      res.on('aborted', () => resolve({ status: res.statusCode!, bytes, complete: false, error: 'aborted' }))
    }).on('error', (e) => resolve({ status: 0, bytes: 0, complete: false, error: e.message })).end()
  })
  const alone = await get()
  console.log('alone', alone)
  for (const joinAtMb of [2, 8, 12, 17, 18, 20]) {
    let joined: Promise<unknown> | undefined
    const first = get((n) => { if (!joined && n > joinAtMb * 1e6) joined = get() })
    const [a, b] = [await first, await joined]
    console.log(`join after ${joinAtMb} MB received by the first:`, JSON.stringify({ first: a, joiner: b }))
  }
} finally {
  child?.kill('SIGTERM')
  await m.stop()
}
process.exit(0)
