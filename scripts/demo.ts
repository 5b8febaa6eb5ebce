// npm run demo: a private MariaDB (installed from Debian's packages when
// missing) filled with generated demo data, and the service on it, on port
// 8080 (PORT to change). The service is the real server/main.ts, with a worker
// per core (WORKERS to change), its JSON log turned into readable lines.
// Ctrl-C stops the service and the database.
import { spawn, type ChildProcess } from 'node:child_process'
import { startMariaDb, stopOnExit } from './mariadb.ts'
import { schemaSql } from '../db/schema.ts'
import { demoDataSql, DEMO_SITE } from '../db/demo-data.ts'
import { loadConfig } from '../server/config.ts'
import { demoPrettyStream } from './demo-log.ts'

const say = (line: string) => process.stdout.write(`${line}\n`)

const mariadb = await startMariaDb()
// eslint-disable-next-line prefer-const -- set once the service starts; the exit hook below may run before
let service: ChildProcess | undefined
stopOnExit(mariadb, async () => {
  if (!service || service.exitCode !== null) return
  // Ctrl-C reaches the service too (same process group); SIGTERM covers a kill of the demo alone.
  const exited = new Promise((resolve) => service!.once('exit', resolve))
  service.kill('SIGTERM')
  await exited
})

const started = Date.now()
const password = 'demo-reader-password'
await mariadb.adminQuery(`
  CREATE DATABASE wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
  CREATE USER 'booking_api'@'%' IDENTIFIED BY '${password}';
  GRANT SELECT ON wordpress.* TO 'booking_api'@'%';
  USE wordpress;
  ${schemaSql(DEMO_SITE.prefix)}
`)
for (const statement of demoDataSql(DEMO_SITE)) await mariadb.adminQuery(`USE wordpress; ${statement}`)
say(`[demo] MariaDB on 127.0.0.1:${mariadb.port}: ${DEMO_SITE.bookings.toLocaleString('en')} bookings generated in ${((Date.now() - started) / 1000).toFixed(1)} s`)
// The demo's own throwaway account, so a second instance (another PORT, AUTH_MODE, ...) can read the same data.
say(`[demo] its read-only account, for an instance of your own: DATABASE_URL=mysql://booking_api:${password}@127.0.0.1:${mariadb.port}/wordpress TABLE_PREFIX=${DEMO_SITE.prefix}`)

const env = {
  ...process.env,
  DATABASE_URL: `mysql://booking_api:${password}@127.0.0.1:${mariadb.port}/wordpress`,
  TABLE_PREFIX: DEMO_SITE.prefix,
}
const config = loadConfig(env)
service = spawn(process.execPath, ['--import', 'tsx', new URL('../server/main.ts', import.meta.url).pathname], { env, stdio: ['ignore', 'pipe', 'pipe'] })
service.stdout!.pipe(demoPrettyStream())
let stderr = ''
// The example calls once the service answers /healthz (its "listening" lines may
// be below LOG_LEVEL, so the demo asks instead of reading the log).
void (async () => {
  for (let tries = 0; tries < 600; tries++) {
    if (service?.exitCode !== null) return
    const up = await fetch(`http://127.0.0.1:${config.port}/healthz`).then((res) => res.ok, () => false)
    if (up) return printExamples()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
})()

/** What each example must send to be let in (a placeholder: credentials are never printed); nothing in AUTH_MODE=none, the demo's default. */
function credentials(): string {
  if (config.authMode === 'token') return " -H 'Authorization: Bearer <one of API_TOKENS>'"
  if (config.authMode === 'wordpress') return " -u '<user>:<application password>'"
  return ''
}

function printExamples(): void {
  const base = `http://localhost:${config.port}`
  say('')
  say(`[demo] booking-calendar-api on ${base}, ${config.workers} worker${config.workers === 1 ? '' : 's'} (Ctrl-C stops it and the database). Try:`)
  for (const path of [
    '/wp-json/booking-calendar/v1',
    '/wp-json/booking-calendar/v1/slots?service=haircut&start=2026-11-01&end=2026-11-30',
    '/wp-json/booking-calendar/v1/slots?status=pending,booked&flat&per_page=5',
    '/wp-json/booking-calendar/v1/slots?service=%D1%81%D1%82%D1%80%D0%B8%D0%B6%D0%BA%D0%B0&start=2026-03-28&end=2026-03-30&flat',
    '/wp-json/booking-calendar/v1/slots?format=csv&start=2026-12-01&end=2026-12-07',
    '/wp-json/booking-calendar/v1/disabled-time?service=haircut',
    '/?rest_route=/booking-calendar/v1/disabled-time&start=2026-12-20&end=2027-01-02',
  ]) say(`  curl -s${credentials()} '${base}${path}'`)
  say('')
}
service.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); process.stderr.write(chunk) })
// Set when the demo itself is asked to stop (Ctrl-C), which stops the service first.
let demoStopping = false
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => { demoStopping = true })
service.once('exit', (code) => void onServiceExit(code))
async function onServiceExit(code: number | null): Promise<void> {
  if (demoStopping) return
  if (code === 0) {
    // Stopped on its own (a SIGTERM to it alone): the database has nothing left to serve.
    say('[demo] the service stopped: stopping the database too.')
    process.kill(process.pid, 'SIGTERM')
    return
  }
  if (stderr.includes('EADDRINUSE')) process.stderr.write(`[demo] cannot listen on port ${config.port}. Set PORT to another port.\n`)
  await mariadb.stop()
  process.exit(1)
}
