// npm run indexes: the indexes we recommend, as SQL for the operator to apply
// (the service never applies them: it only reads), with the EXPLAIN of the
// typical queries before and after, on a private MariaDB holding the
// benchmark's million bookings. With DATABASE_URL set, it explains those queries
// on that database as it is, and applies nothing.
import mysql from 'mysql2/promise'
import { Kysely, MysqlDialect } from 'kysely'
import { createPool } from 'mysql2'
import { startMariaDb, stopOnExit } from './mariadb.ts'
import { addRecommendedIndexes, BENCH_DATABASE, createBenchDatabase, READER, recommendedIndexesSql } from './bench/dataset.ts'
import { BENCH_QUERIES } from './bench/queries.ts'
import { compileBookingsPage, compileBookingsQuery, compileSummaryQuery, readBookingIndexes, settledTarget, TablePrefixPlugin, type Database, type MysqlTarget } from '../server/tools.ts'
import { loadConfig } from '../server/config.ts'

const say = (line = '') => process.stdout.write(`${line}\n`)

async function explainAll(url: MysqlTarget, prefix: string) {
  const compiler = new Kysely<Database>({ dialect: new MysqlDialect({ pool: createPool({ ...url }) }), plugins: [new TablePrefixPlugin(prefix)] })
  const connection = await mysql.createConnection({ ...url })
  // The queries as the service sends them, with the index hint it adds when it finds the index.
  await readBookingIndexes(compiler, `${prefix}booking_calendar_bookings`)
  try {
    for (const query of BENCH_QUERIES.filter((q) => q.key !== 'd')) {
      const compiled = query.sql(compiler)
      const [rows] = await connection.query(`EXPLAIN ${compiled.sql}`, compiled.parameters as unknown[])
      say(`(${query.key}) ${query.name}`)
      for (const row of rows as Record<string, unknown>[]) {
        say(`    ${explainLine(row)}`)
      }
    }
    const explain = async (name: string, compiled: { sql: string; parameters: readonly unknown[] }) => {
      const [rows] = await connection.query(`EXPLAIN ${compiled.sql}`, compiled.parameters as unknown[])
      say(name)
      for (const row of rows as Record<string, unknown>[]) say(`    ${explainLine(row)}`)
    }
    // (c) as the service streams it, the slugs read beside it: grouped in service order, flat or CSV in booking order.
    // (The (c) above is the bench's floor, which joins the slugs; MariaDB sorts it whatever the hint.)
    await explain('(c) everything, grouped, as the service streams it: slots/', compileBookingsQuery(compiler, {}, 'service', { customer: false }, false))
    await explain('(c) everything, flat or CSV, as the service streams it: slots/?flat', compileBookingsQuery(compiler, {}, 'booking', { customer: false }, false))
    // (f) a deep page: the ids of the last page of a year of booked bookings, then those rows.
    await explain('(f) a deep page: slots/?status=booked&start=2025-01-01&end=2025-12-31&per_page=1&page=40000',
      compileBookingsPage(compiler, { statuses: ['booked'], bookingDate: { from: '2025-01-01', to: '2025-12-31' } }, 1, 39_999))
    await explain('(f) a deep page without filters: slots/?per_page=1&page=1000000', compileBookingsPage(compiler, {}, 1, 999_999))
    // (e) summary/: a year by month and service, as its benchmark asks for it.
    const summary = compileSummaryQuery(compiler, { filter: { bookingDate: { from: '2025-01-01', to: '2025-12-31' } }, dateOf: 'booking_date', byStatus: false, blocking: ['pending', 'booked', 'completed'] })
    const [summaryRows] = await connection.query(`EXPLAIN ${summary.sql}`, summary.parameters as unknown[])
    say('(e) summary/, a year by month and service')
    for (const row of summaryRows as Record<string, unknown>[]) say(`    ${explainLine(row)}`)
  } finally {
    await connection.end()
    await compiler.destroy()
  }
}

if (process.env.DATABASE_URL || process.env.WORDPRESS_DB_HOST) {
  const config = loadConfig()
  say('-- Recommended indexes (apply with an account that may ALTER; the service never does):')
  say(recommendedIndexesSql(config.tablePrefix))
  say()
  say('EXPLAIN of the typical queries on this database, as it is:')
  await explainAll(await settledTarget(config.database), config.tablePrefix)
} else {
  const server = await startMariaDb({ bufferPoolMb: 1024 })
  stopOnExit(server)
  try {
    say(`A private MariaDB with the benchmark's data: generated in ${((await createBenchDatabase(server)) / 1000).toFixed(1)} s.`)
    const url = { host: server.host, port: server.port, user: READER.user, password: READER.password, database: BENCH_DATABASE }
    say()
    say('EXPLAIN before (the plugin\'s own indexes only):')
    await explainAll(url, 'wp_')
    say()
    say(`Applied the recommended indexes in ${((await addRecommendedIndexes(server)) / 1000).toFixed(1)} s:`)
    say(recommendedIndexesSql('wp_'))
    say()
    say('EXPLAIN after:')
    await explainAll(url, 'wp_')
  } finally {
    await server.stop()
  }
}

/** One row of EXPLAIN, as MariaDB gives it (its cells are text, numbers or NULL). */
function explainLine(row: Record<string, unknown>): string {
  const cell = (value: unknown) => (value === null || value === undefined ? '' : `${value as string | number}`)
  return `${cell(row.table)}: type=${cell(row.type)} key=${cell(row.key) || 'NULL'} rows=${cell(row.rows)} ${cell(row.Extra)}`
}
