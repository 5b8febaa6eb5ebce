// Deep pages with a status filter: the EXPLAIN and the SQL time of page 1 and
// of the last page (per_page=1), as the service sends them (db/bookings.ts,
// compileBookingsPage), under each candidate for the date index. It is how
// bc_api_date came to hold status (README, "Sizing"). A private MariaDB with
// BENCH_BOOKINGS bookings (200,000 unless set); prints only.
//   BENCH_BOOKINGS=200000 npx tsx scripts/bench/status-deep-page.ts
process.env.BENCH_BOOKINGS ??= '200000'
const { createPool } = await import('mysql2')
const mysql = (await import('mysql2/promise')).default
const { Kysely, MysqlDialect } = await import('kysely')
const { startMariaDb, stopOnExit } = await import('../mariadb.ts')
const { addRecommendedIndexes, BENCH_DATA, BENCH_DATABASE, createBenchDatabase, READER } = await import('./dataset.ts')
const { compileBookingsPage, countBookings } = await import('../../db/bookings.ts')
const { TablePrefixPlugin } = await import('../../db/connect.ts')
type Database = import('../../db/database.ts').Database
type BookingFilter = import('../../db/bookings.ts').BookingFilter

const SAMPLES = 7
const say = (line = '') => process.stdout.write(`${line}\n`)

/** Each variant: the ALTER that makes it from whatever the previous one left. */
const VARIANTS: Array<{ name: string; alter: string }> = [
  {
    name: 'bc_api_date (booking_date, time_from), as recommended before',
    alter: 'ALTER TABLE wp_booking_calendar_bookings DROP INDEX bc_api_date, ADD INDEX bc_api_date (booking_date, time_from)',
  },
  {
    name: 'bc_api_date (booking_date, time_from, id, status), as recommended now',
    alter: 'ALTER TABLE wp_booking_calendar_bookings DROP INDEX bc_api_date, ADD INDEX bc_api_date (booking_date, time_from, id, status)',
  },
  {
    name: 'bc_api_date (booking_date, time_from) plus bc_api_status (status, booking_date, time_from)',
    alter: 'ALTER TABLE wp_booking_calendar_bookings DROP INDEX bc_api_date, ADD INDEX bc_api_date (booking_date, time_from), ADD INDEX bc_api_status (status, booking_date, time_from)',
  },
]

const FILTERS: Array<{ name: string; filter: BookingFilter }> = [
  { name: 'no filter', filter: {} },
  { name: 'status=booked', filter: { statuses: ['booked'] } },
  { name: 'status=pending,booked', filter: { statuses: ['pending', 'booked'] } },
]

const server = await startMariaDb({ bufferPoolMb: 512 })
stopOnExit(server)
try {
  say(`${BENCH_DATA.bookings.toLocaleString('en')} bookings generated in ${((await createBenchDatabase(server)) / 1000).toFixed(1)} s; recommended indexes in ${((await addRecommendedIndexes(server)) / 1000).toFixed(1)} s.`)
  const url = { host: server.host, port: server.port, user: READER.user, password: READER.password, database: BENCH_DATABASE }
  const compiler = new Kysely<Database>({ dialect: new MysqlDialect({ pool: createPool({ ...url }) }), plugins: [new TablePrefixPlugin('wp_')] })
  const connection = await mysql.createConnection({ ...url, dateStrings: true })
  const snapshot = { rows: async <R>(q: { sql: string; parameters: readonly unknown[] }) => (await connection.query(q.sql, q.parameters as unknown[]))[0] as R[] }
  try {
    for (const variant of VARIANTS) {
      const started = Date.now()
      await server.adminQuery(`USE ${BENCH_DATABASE}; ${variant.alter}; ANALYZE TABLE wp_booking_calendar_bookings;`)
      say(`\n## ${variant.name} (applied in ${((Date.now() - started) / 1000).toFixed(1)} s)`)
      const sizes = await server.adminQuery(`SELECT index_name, ROUND(stat_value * @@innodb_page_size / 1048576, 1) AS mb FROM mysql.innodb_index_stats WHERE table_name = 'wp_booking_calendar_bookings' AND stat_name = 'size'`)
      if ((sizes as unknown[]).length) say(`index sizes (MB): ${(sizes as Array<{ index_name: string; mb: number }>).map((s) => `${s.index_name} ${s.mb}`).join(', ')}`)
      for (const { name, filter } of FILTERS) {
        const total = await countBookings(compiler, snapshot as never, filter)
        for (const [label, offset] of [['page 1', 0], [`page ${total.toLocaleString('en')}`, total - 1]] as const) {
          const query = compileBookingsPage(compiler, filter, 1, offset)
          const [plan] = await connection.query(`EXPLAIN ${query.sql}`, query.parameters as unknown[])
          const times: number[] = []
          for (let i = 0; i < SAMPLES; i++) {
            const started = process.hrtime.bigint()
            await connection.query(query.sql, query.parameters as unknown[])
            times.push(Number(process.hrtime.bigint() - started) / 1e6)
          }
          const p50 = times.sort((a, b) => a - b)[Math.floor(SAMPLES / 2)]!
          say(`- ${name}, ${label}: p50 ${p50.toFixed(1)} ms`)
          for (const row of plan as Record<string, unknown>[]) {
            say(`    ${row.table}: type=${row.type} key=${row.key ?? 'NULL'} rows=${row.rows} ${row.Extra ?? ''}`)
          }
        }
      }
    }
  } finally {
    await connection.end()
    await compiler.destroy()
  }
} finally {
  await server.stop()
}
