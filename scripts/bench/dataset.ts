// The benchmark's database: 1,000,000 bookings over five years in
// every status across 50 services, and 200 disabled-time rules, made by the
// demo's set-based generator in a private MariaDB; and the indexes an operator
// would add, which only this script applies, to its own private database.
import type { MariaDbServer } from '../mariadb.ts'
import { schemaSql } from '../../db/schema.ts'
import { demoDataSql } from '../../db/demo-data.ts'

/** BENCH_BOOKINGS sets the size (the README's 100,000 row: BENCH_BOOKINGS=100000); a million by default. */
export const BENCH_DATA = { bookings: benchBookings(), years: 5, services: 50, rulesPerService: 3, rules: 200, firstDay: '2024-01-01' }

function benchBookings(): number {
  const text = process.env.BENCH_BOOKINGS?.trim() || '1000000'
  if (!/^\d+$/.test(text) || Number(text) < 1000) throw new Error('BENCH_BOOKINGS must be a whole number of at least 1000.')
  return Number(text)
}

/** Where the results go: results.md for the million, results-<n>.md for another size. */
export const RESULTS_FILE = BENCH_DATA.bookings === 1_000_000 ? 'results.md' : `results-${BENCH_DATA.bookings}.md`
export const BENCH_DATABASE = 'wordpress'
export const READER = { user: 'booking_api', password: 'bench-reader' }

/**
 * The indexes we recommend (README, "Sizing"). The plugin ships only
 * service_id; these let the typical queries read in order instead of sorting.
 * InnoDB appends the primary key (id) to each, which completes the ORDER BY.
 * bc_api_date names id, then status, so a deep page with a status filter is
 * cut from the index alone, in its order (scripts/bench/status-deep-page.ts).
 * bc_api_summary holds every column summary/ reads, in the order it groups by:
 * MariaDB counts a year from the index alone, without a temporary table.
 */
export function recommendedIndexesSql(prefix: string): string {
  return `ALTER TABLE ${prefix}booking_calendar_bookings
  ADD INDEX bc_api_service_date (service_id, booking_date, time_from),
  ADD INDEX bc_api_date (booking_date, time_from, id, status),
  ADD INDEX bc_api_created (created_at),
  ADD INDEX bc_api_summary (booking_date, service_id, status, time_from, time_to);`
}

export async function createBenchDatabase(server: MariaDbServer, prefix = 'wp_'): Promise<number> {
  const started = Date.now()
  await server.adminQuery(`
    CREATE DATABASE ${BENCH_DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
    CREATE USER '${READER.user}'@'%' IDENTIFIED BY '${READER.password}';
    GRANT SELECT ON ${BENCH_DATABASE}.* TO '${READER.user}'@'%';
    USE ${BENCH_DATABASE};
    ${schemaSql(prefix)}`)
  for (const statement of demoDataSql({ ...BENCH_DATA, prefix })) await server.adminQuery(`USE ${BENCH_DATABASE}; ${statement}`)
  await server.adminQuery(`USE ${BENCH_DATABASE}; ANALYZE TABLE ${prefix}booking_calendar_bookings`)
  return Date.now() - started
}

export async function addRecommendedIndexes(server: MariaDbServer, prefix = 'wp_'): Promise<number> {
  const started = Date.now()
  await server.adminQuery(`USE ${BENCH_DATABASE}; ${recommendedIndexesSql(prefix)} ANALYZE TABLE ${prefix}booking_calendar_bookings;`)
  return Date.now() - started
}
