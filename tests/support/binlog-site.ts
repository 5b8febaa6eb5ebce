// A private MariaDB with a binary log as the log source needs it (API.md,
// "GET changes/", Sources: ROW, FULL images, FULL metadata), the fixture site
// of tests/fixtures/site.ts in it, and a reader account with replication
// privileges (which allow no writes) beside the SELECT-only one.
import mysql from 'mysql2/promise'
import { startPrivateMariaDb, type PrivateMariaDb } from './private-mariadb.ts'
import type { Row, TestDatabase } from './database.ts'
import { loadSite } from '../fixtures/site.ts'

export const BINLOG_OPTIONS = ['--log-bin=bc-bin', '--server-id=1', '--binlog-format=ROW', '--binlog-row-image=FULL', '--binlog-row-metadata=FULL']

export interface BinlogSite {
  db: PrivateMariaDb
  /** The fixture site's database, as fixtures and writes reach it (root). */
  site: TestDatabase
  /** The service's DATABASE_URL with the log reader account. */
  logReaderUrl: string
  stop(): Promise<void>
}

export async function startBinlogSite(database: string): Promise<BinlogSite> {
  const db = await startPrivateMariaDb(database, 0, { serverOptions: BINLOG_OPTIONS })
  const reader = { user: `${database}_log`, password: `${database}-log-pw` }
  await db.server.adminQuery(`
    CREATE USER '${reader.user}'@'%' IDENTIFIED BY '${reader.password}';
    GRANT SELECT ON ${database}.* TO '${reader.user}'@'%';
    GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '${reader.user}'@'%';`)
  const admin = await mysql.createConnection({ socketPath: db.server.socketPath, user: 'root', database, multipleStatements: true, dateStrings: true })
  await admin.query("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'")
  await admin.query('DELETE FROM wp_booking_calendar_bookings; DELETE FROM wp_posts; DELETE FROM wp_options; DELETE FROM wp_booking_calendar_disabled_times')
  const prefix = 'wp_'
  const insert = async (table: string, rows: Row[]) => {
    if (rows.length === 0) return
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))]
    const values = rows.map((row) => columns.map((column) => (column in row ? row[column] : undefined)))
    const placeholders = values.map((v) => `(${v.map((x) => (x === undefined ? 'DEFAULT' : '?')).join(',')})`).join(',')
    await admin.query(`INSERT INTO \`${prefix}${table}\` (${columns.map((c) => `\`${c}\``).join(',')}) VALUES ${placeholders}`, values.flat().filter((x) => x !== undefined))
  }
  const site: TestDatabase = {
    name: database, prefix, admin, insert,
    setOption: async (option, value) => {
      await admin.query(`INSERT INTO \`${prefix}options\` (option_name, option_value) VALUES (?, ?) ON DUPLICATE KEY UPDATE option_value = VALUES(option_value)`, [option, value])
    },
    truncate: async (table) => { await admin.query(`TRUNCATE TABLE \`${prefix}${table}\``) },
    readerQueries: async () => [],
    readerTransactions: async () => [],
    untilReaderIdle: async () => {},
    drop: async () => { await admin.end() },
  }
  await loadSite(site)
  return {
    db, site,
    logReaderUrl: `mysql://${reader.user}:${reader.password}@${db.server.host}:${db.server.port}/${database}`,
    stop: async () => {
      await admin.end().catch(() => undefined)
      await db.stop()
    },
  }
}
