// The benchmark's typical queries, each as a URL of the service and
// as the SQL the service sends for it, compiled by db/, so all three contenders
// answer the same question.
import type { CompiledQuery } from 'kysely'
import { compileBookingsQuery, type Db } from '../../server/tools.ts'
import { FIRST_SERVICE_ID } from '../../db/demo-data.ts'

export interface BenchQuery {
  key: 'a' | 'b' | 'c' | 'd'
  name: string
  /** Path and query of the service's route (and of the PHP competitor's, under its own namespace). */
  path: string
  sql: (db: Db) => CompiledQuery
}

const SERVICE = FIRST_SERVICE_ID
// The statement the service (customer data hidden) sends for each: (a) is one
// statement with the slug joined; (b) streams, with the slugs read beside it.
// (c) is also the floor of the full export, so it reads every column and the slug.
const HIDDEN = { customer: false }
const STREAMED = false

export const BENCH_QUERIES: BenchQuery[] = [
  {
    key: 'a', name: 'one service, one month, grouped',
    path: `slots?service=${SERVICE}&start=2026-03-01&end=2026-03-31`,
    sql: (db) => compileBookingsQuery(db, { serviceId: SERVICE, bookingDate: { from: '2026-03-01', to: '2026-03-31' } }, 'service', HIDDEN),
  },
  {
    key: 'b', name: 'pending and booked over a year, flat',
    path: 'slots?status=pending,booked&start=2025-01-01&end=2025-12-31&flat',
    sql: (db) => compileBookingsQuery(db, { statuses: ['pending', 'booked'], bookingDate: { from: '2025-01-01', to: '2025-12-31' } }, 'booking', HIDDEN, STREAMED),
  },
  {
    key: 'c', name: 'everything (no parameters)',
    path: 'slots',
    sql: (db) => compileBookingsQuery(db, {}, 'service'),
  },
  {
    key: 'd', name: 'disabled-time, default range, one service',
    path: `disabled-time?service=${SERVICE}`,
    sql: (db) => db.selectFrom('booking_calendar_disabled_times').selectAll()
      .where('booking_calendar_disabled_times.service_id', 'in', [SERVICE, 0]).compile(),
  },
]
