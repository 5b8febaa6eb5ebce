// The compose stack's seed: the plugin's tables and the demo data of
// `npm run demo` (demo-data.ts), written through an account that may write
// (WordPress's own) into an installed WordPress. WordPress refuses to install
// into a database that holds its tables but no siteurl, so the seed never
// creates WordPress's own tables: scripts/seed.ts has WordPress install itself first.
import mysql from 'mysql2/promise'
import { pluginTablesSql } from './schema.ts'
import { demoDataSql, type DemoOptions } from './demo-data.ts'
import { settledTarget, type DatabaseSettings } from './connection-options.ts'

export interface SeedState {
  /** WordPress's own test (is_blog_installed): a siteurl option. */
  wordpressInstalled: boolean
  /** Rows in the bookings table; 0 when it is missing. */
  bookings: number
}

async function withConnection<T>(settings: DatabaseSettings, work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection({ ...await settledTarget(settings), multipleStatements: true, charset: 'UTF8MB4_UNICODE_520_CI' })
  try {
    return await work(connection)
  } finally {
    await connection.end()
  }
}

async function tableExists(connection: mysql.Connection, table: string): Promise<boolean> {
  const [rows] = await connection.query('SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?', [table])
  return (rows as unknown[]).length > 0
}

async function countRows(connection: mysql.Connection, table: string): Promise<number> {
  const [rows] = await connection.query(`SELECT COUNT(*) AS n FROM \`${table}\``)
  return Number((rows as { n: number }[])[0]!.n)
}

export function readSeedState(settings: DatabaseSettings, prefix: string): Promise<SeedState> {
  return withConnection(settings, async (connection) => {
    let wordpressInstalled = false
    if (await tableExists(connection, `${prefix}options`)) {
      const [rows] = await connection.query(`SELECT option_value FROM \`${prefix}options\` WHERE option_name = 'siteurl'`)
      wordpressInstalled = (rows as { option_value: string }[]).some((row) => row.option_value !== '')
    }
    const bookingsTable = `${prefix}booking_calendar_bookings`
    const bookings = (await tableExists(connection, bookingsTable)) ? await countRows(connection, bookingsTable) : 0
    return { wordpressInstalled, bookings }
  })
}

/** Creates the plugin's tables when missing and writes the demo data; returns how many bookings there are. */
export function writeDemoData(settings: DatabaseSettings, options: Partial<DemoOptions> & { prefix: string }): Promise<number> {
  return withConnection(settings, async (connection) => {
    await connection.query(pluginTablesSql(options.prefix, { ifMissing: true }))
    for (const statement of demoDataSql(options)) await connection.query(statement)
    return countRows(connection, `${options.prefix}booking_calendar_bookings`)
  })
}
