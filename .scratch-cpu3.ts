import { readFileSync } from 'node:fs'
import { execSync } from 'node:child_process'
import mysql from 'mysql2/promise'
import { Kysely, MysqlDialect } from 'kysely'
import { createPool } from 'mysql2'
import { TablePrefixPlugin } from './db/connect.ts'
import { compileBookingsQuery } from './db/bookings.ts'
const size = process.argv[2]
const info = JSON.parse(readFileSync(`/work/scratch/db-${size}.json`, 'utf8'))
const pid = /pid=(\d+)/.exec(execSync(`ss -ltnp "sport = :${info.port}"`, { encoding: "utf8" }))![1]
const ticks = () => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10 }
const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: createPool(info) }), plugins: [new TablePrefixPlugin('wp_')] })
const conn = await mysql.createConnection({ ...info, dateStrings: true })
const filter = { statuses: ['pending', 'booked'], bookingDate: { from: '2025-01-01', to: '2025-12-31' } }
const q = compileBookingsQuery(db, filter, 'booking')
const [[{ n }]] = await conn.query('select count(*) n from wp_booking_calendar_bookings where status in (?,?) and booking_date between ? and ?', ['pending','booked','2025-01-01','2025-12-31']) as any
const force = (x: string) => x.replace('from `wp_booking_calendar_bookings`', 'from `wp_booking_calendar_bookings` FORCE INDEX (bc_api_date)')
const noCustomer = (x: string) => x.replace(', `wp_booking_calendar_bookings`.`customer_name`, `wp_booking_calendar_bookings`.`customer_email`, `wp_booking_calendar_bookings`.`customer_phone`', '')
const noJoin = (x: string) => x.replace(/ left join `wp_posts` on `wp_posts`.`ID` = `wp_booking_calendar_bookings`.`service_id` and `wp_posts`.`post_type` = \?/, '').replace(', `wp_posts`.`post_name` as `service_post_name`', '')
const variants: Record<string, string> = {
  force: force(q.sql),
  forceNoCustomer: force(noCustomer(q.sql)),
  forceNoJoin: force(noJoin(q.sql)),
  forceNoJoinNoCustomer: force(noJoin(noCustomer(q.sql))),
}
for (const [name, sql] of Object.entries(variants)) {
  const [ex] = await conn.query(`EXPLAIN ${sql}`, sql.includes('wp_posts') ? q.parameters as unknown[] : (q.parameters as unknown[]).slice(1))
  console.log(name, (ex as any[]).map((r) => `${r.table} ${r.type} ${r.key} ${r.Extra}`).join(' | '))
  const N = size === '100000' ? 30 : 5
  const m0 = ticks(); const c0 = process.cpuUsage(); const t0 = Date.now()
  for (let i = 0; i < N; i++) await conn.query(sql, sql.includes('wp_posts') ? q.parameters as unknown[] : (q.parameters as unknown[]).slice(1))
  const c1 = process.cpuUsage(c0)
  console.log(name, `wall ${((Date.now() - t0) / N).toFixed(1)} ms, mariadb cpu ${((ticks() - m0) / N).toFixed(1)} ms, client cpu ${((c1.user + c1.system) / 1000 / N).toFixed(1)} ms per query`)
}
await conn.end(); await db.destroy()
