import { readFileSync } from 'node:fs'
import mysql from 'mysql2/promise'
import { Kysely, MysqlDialect } from 'kysely'
import { createPool } from 'mysql2'
import { TablePrefixPlugin } from './db/connect.ts'
import { compileBookingsQuery, countBookings } from './db/bookings.ts'
const size = process.argv[2]
const info = JSON.parse(readFileSync(`/work/scratch/db-${size}.json`, 'utf8'))
const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: createPool(info) }), plugins: [new TablePrefixPlugin('wp_')] })
const c = mysql.createConnection({ ...info, dateStrings: true })
const conn = await c
const filter = { statuses: ['pending', 'booked'], bookingDate: { from: '2025-01-01', to: '2025-12-31' } }
const q = compileBookingsQuery(db, filter, 'booking')
const count = db.selectFrom('booking_calendar_bookings').select((eb: any) => eb.fn.countAll().as('total')).where((eb: any) => eb.and([eb('booking_calendar_bookings.status', 'in', filter.statuses), eb('booking_calendar_bookings.booking_date', '>=', '2025-01-01'), eb('booking_calendar_bookings.booking_date', '<=', '2025-12-31')])).compile()
const variants: Record<string, { sql: string; parameters: readonly unknown[] }> = {
  rows: q,
  rowsForce: { sql: q.sql.replace('from `wp_booking_calendar_bookings`', 'from `wp_booking_calendar_bookings` FORCE INDEX (bc_api_date)'), parameters: q.parameters },
  count,
}
console.log(q.sql)
for (const [name, v] of Object.entries(variants)) {
  const [ex] = await conn.query(`EXPLAIN ${v.sql}`, v.parameters as unknown[])
  console.log(name, (ex as any[]).map((r) => `${r.table} ${r.type} ${r.key} rows=${r.rows} ${r.Extra}`).join(' | '))
  const times: number[] = []
  for (let i = 0; i < 7; i++) { const t = process.hrtime.bigint(); await conn.query(v.sql, v.parameters as unknown[]); times.push(Number(process.hrtime.bigint() - t) / 1e6) }
  times.sort((a, b) => a - b); console.log(name, 'median ms', times[3]!.toFixed(1))
}
await conn.end(); await db.destroy()
