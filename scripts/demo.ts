// npm run demo: a private MariaDB (installed from Debian's packages when
// missing) filled with generated demo data, and the service on it, on port
// 8080 (PORT to change). Ctrl-C stops the service and the database.
import type { Server } from 'node:http'
import { startMariaDb, stopOnExit } from './mariadb.ts'
import { schemaSql } from '../db/schema.ts'
import { demoDataSql, DEMO_DEFAULTS } from '../db/demo-data.ts'
import { createDb } from '../db/connect.ts'
import { createApp } from '../server/app.ts'
import { dbSettings, loadConfig } from '../server/config.ts'
import { createDemoLogger } from './demo-log.ts'

const say = (line: string) => process.stdout.write(`${line}\n`)

const mariadb = await startMariaDb()
let server: Server | undefined
let closeDb: (() => Promise<void>) | undefined
stopOnExit(mariadb, async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server?.closeAllConnections()
  await closeDb?.()
})

const started = Date.now()
const password = 'demo-reader-password'
await mariadb.adminQuery(`
  CREATE DATABASE wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
  CREATE USER 'booking_api'@'%' IDENTIFIED BY '${password}';
  GRANT SELECT ON wordpress.* TO 'booking_api'@'%';
  USE wordpress;
  ${schemaSql(DEMO_DEFAULTS.prefix)}
`)
for (const statement of demoDataSql()) await mariadb.adminQuery(`USE wordpress; ${statement}`)
say(`[demo] MariaDB on 127.0.0.1:${mariadb.port}: ${DEMO_DEFAULTS.bookings.toLocaleString('en')} bookings generated in ${((Date.now() - started) / 1000).toFixed(1)} s`)

const config = loadConfig({
  ...process.env,
  DATABASE_URL: `mysql://booking_api:${password}@127.0.0.1:${mariadb.port}/wordpress`,
  TABLE_PREFIX: DEMO_DEFAULTS.prefix,
})
const log = createDemoLogger(config.logLevel)
const handle = createDb(dbSettings(config))
closeDb = handle.close
const app = createApp({ db: handle.db, pool: handle.pool, config, log })
server = app.listen(config.port, '127.0.0.1', () => {
  const base = `http://localhost:${config.port}`
  say('')
  say(`[demo] booking-calendar-api on ${base} (Ctrl-C stops it and the database). Try:`)
  for (const path of [
    '/wp-json/booking-calendar/v1',
    '/wp-json/booking-calendar/v1/slots?service=haircut&start=2026-11-01&end=2026-11-30',
    '/wp-json/booking-calendar/v1/slots?status=pending,booked&flat&per_page=5',
    '/wp-json/booking-calendar/v1/slots?service=%D1%81%D1%82%D1%80%D0%B8%D0%B6%D0%BA%D0%B0&start=2026-03-28&end=2026-03-30&flat',
    '/wp-json/booking-calendar/v1/slots?format=csv&start=2026-12-01&end=2026-12-07',
    '/wp-json/booking-calendar/v1/disabled-time?service=haircut',
    '/?rest_route=/booking-calendar/v1/disabled-time&start=2026-12-20&end=2027-01-02',
  ]) say(`  curl -s '${base}${path}'`)
  say('')
})
server.on('error', async (error) => {
  process.stderr.write(`[demo] cannot listen on port ${config.port}: ${error.message}. Set PORT to another port.\n`)
  await handle.close()
  await mariadb.stop()
  process.exit(1)
})
