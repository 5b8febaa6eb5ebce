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
 * The indexes we recommend (docs/operations.md, "Sizing and indexes"). The plugin ships only
 * service_id; these let the typical queries read in order instead of sorting.
 * InnoDB appends the primary key (id) to each, which completes the ORDER BY.
 * bc_api_date names id, then status, so a deep page with a status filter is
 * cut from the index alone, in its order (docs/performance.md, "Indexes").
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

/**
 * Waits until InnoDB has written the pages that loading the data left dirty
 * (at most `maxMs`): a freshly loaded million bookings leave about 190 MB, which
 * MariaDB writes out in the background over a minute or more, using a good
 * part of a core, while the first measurements run (node:http alone answered
 * 100 to 150 µs slower one request at a time until it was done; scripts/bench/README.md,
 * thirteenth pass). Every contender is measured after it. Returns the ms waited
 * and the dirty pages left.
 */
export async function writeDirtyPages(server: MariaDbServer, maxMs = 180_000): Promise<{ ms: number; left: number }> {
  const started = Date.now()
  const dirty = async () => {
    const [row] = await server.adminQuery("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'") as Array<{ Value: string }>
    return Number(row?.Value ?? 0)
  }
  const [setting] = await server.adminQuery(
    'SELECT @@GLOBAL.innodb_max_dirty_pages_pct AS pct, @@GLOBAL.innodb_io_capacity AS io, @@GLOBAL.innodb_io_capacity_max AS ioMax',
  ) as Array<{ pct: number | string; io: number | string; ioMax: number | string }>
  // All of them, as fast as the disk takes them (InnoDB paces its writes by innodb_io_capacity, 200 by default).
  await server.adminQuery('SET GLOBAL innodb_io_capacity_max = 100000; SET GLOBAL innodb_io_capacity = 50000; SET GLOBAL innodb_max_dirty_pages_pct = 0')
  try {
    let left = await dirty()
    while (left > 100 && Date.now() - started < maxMs) {
      await new Promise((resolve) => setTimeout(resolve, 500))
      left = await dirty()
    }
    return { ms: Date.now() - started, left }
  } finally {
    await server.adminQuery(`SET GLOBAL innodb_max_dirty_pages_pct = ${Number(setting?.pct ?? 90)}; ` +
      `SET GLOBAL innodb_io_capacity = ${Number(setting?.io ?? 200)}; SET GLOBAL innodb_io_capacity_max = ${Number(setting?.ioMax ?? 2000)}`)
  }
}

export async function addRecommendedIndexes(server: MariaDbServer, prefix = 'wp_'): Promise<number> {
  const started = Date.now()
  await server.adminQuery(`USE ${BENCH_DATABASE}; ${recommendedIndexesSql(prefix)} ANALYZE TABLE ${prefix}booking_calendar_bookings;`)
  return Date.now() - started
}
