// Test databases on the private MariaDB that scripts/test.ts starts: each test
// file gets its own database, built from db/schema.sql, filled by its own rows
// as root, and read by the service through the SELECT-only account.
import mysql from 'mysql2/promise'
import { pluginTablesSql, schemaSql } from '../../db/schema.ts'

export interface TestServer {
  host: string
  port: number
  /** The private MariaDB's socket; undefined on a server of TEST_DATABASE_URL. */
  socketPath: string | undefined
  /** How root (or TEST_DATABASE_URL's account) connects: fixtures, locks and checks. */
  admin: mysql.ConnectionOptions
  readerUser: string
  readerPassword: string
  /** The tests run against a server of TEST_DATABASE_URL, which they may not stop, kill or freeze. */
  external: boolean
}

export function testServer(): TestServer {
  const { TEST_DB_HOST, TEST_DB_PORT, TEST_DB_SOCKET, TEST_DB_ADMIN_URL, TEST_DB_READER_USER, TEST_DB_READER_PASSWORD } = process.env
  if (!TEST_DB_HOST || !TEST_DB_PORT || !(TEST_DB_SOCKET || TEST_DB_ADMIN_URL) || !TEST_DB_READER_USER || !TEST_DB_READER_PASSWORD) {
    throw new Error('These tests need the database of `npm test` (scripts/test.ts); run them through it.')
  }
  const admin: mysql.ConnectionOptions = TEST_DB_ADMIN_URL
    ? { uri: TEST_DB_ADMIN_URL }
    : { socketPath: TEST_DB_SOCKET, user: 'root' }
  return {
    host: TEST_DB_HOST, port: Number(TEST_DB_PORT), socketPath: TEST_DB_SOCKET || undefined, admin,
    readerUser: TEST_DB_READER_USER, readerPassword: TEST_DB_READER_PASSWORD, external: Boolean(TEST_DB_ADMIN_URL),
  }
}

/**
 * The admin account's connection to the test server (root over the private MariaDB's socket, or
 * TEST_DATABASE_URL's account), in the SQL mode fixtures are written for: MySQL's default
 * NO_ZERO_DATE would refuse the plugin's '0000-00-00 00:00:00' defaults, as WordPress's own does.
 */
export async function adminConnection(options: mysql.ConnectionOptions = {}): Promise<mysql.Connection> {
  const connection = await mysql.createConnection({ ...testServer().admin, ...options })
  await connection.query("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'")
  return connection
}

/**
 * A suite that must stop, kill or freeze a database server, start one of its
 * own, or reach the shared one's root socket: with TEST_DATABASE_URL it is
 * skipped whole (hooks too), and says so, instead of failing or acting on a
 * server it does not own. Otherwise it is describe().
 */
export function describeOwnServer(title: string, why: string, suite: (this: Mocha.Suite) => void): void {
  if (!process.env.TEST_DB_ADMIN_URL) {
    describe(title, suite)
    return
  }
  process.stdout.write(`[skipped under TEST_DATABASE_URL] ${title}: ${why}\n`)
  describe.skip(title, suite)
}

export type Row = Record<string, unknown>

export interface TestDatabase {
  name: string
  prefix: string
  /** Root's connection to this database, for fixtures and checks. */
  admin: mysql.Connection
  insert(table: string, rows: Row[]): Promise<void>
  setOption(name: string, value: string): Promise<void>
  truncate(table: string): Promise<void>
  /** The statements the service's reader account is running on the server right now. */
  readerQueries(): Promise<unknown[]>
  /** The read-only account's open transactions: an answer's snapshot, held until its last row is read. */
  readerTransactions(): Promise<unknown[]>
  /** Waits, at most `ms`, until the reader account runs no statement and holds no snapshot. */
  untilReaderIdle(ms: number): Promise<void>
  drop(): Promise<void>
}

let counter = 0

/** `plugin`: only the plugin's tables, for a real WordPress to install its own beside them. */
export async function createTestDatabase(label: string, prefix = 'wp_', tables: 'all' | 'plugin' = 'all'): Promise<TestDatabase> {
  const server = testServer()
  const name = `bc_${label.replace(/\W/g, '_')}_${process.pid}_${++counter}`
  const admin = await adminConnection({ multipleStatements: true, dateStrings: true })
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci`)
  await admin.query(`USE \`${name}\``)
  await admin.query(tables === 'all' ? schemaSql(prefix) : pluginTablesSql(prefix))
  const insert = async (table: string, rows: Row[]) => {
    if (rows.length === 0) return
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))]
    const values = rows.map((row) => columns.map((column) => (column in row ? row[column] : undefined)))
    const placeholders = values.map((v) => `(${v.map((x) => (x === undefined ? 'DEFAULT' : '?')).join(',')})`).join(',')
    await admin.query(
      `INSERT INTO \`${prefix}${table}\` (${columns.map((c) => `\`${c}\``).join(',')}) VALUES ${placeholders}`,
      values.flat().filter((x) => x !== undefined),
    )
  }
  const database: TestDatabase = {
    name,
    prefix,
    admin,
    insert,
    setOption: async (option, value) => {
      await admin.query(`INSERT INTO \`${prefix}options\` (option_name, option_value) VALUES (?, ?) ON DUPLICATE KEY UPDATE option_value = VALUES(option_value)`, [option, value])
    },
    truncate: async (table) => { await admin.query(`TRUNCATE TABLE \`${prefix}${table}\``) },
    readerQueries: async () => {
      const [rows] = await admin.query(
        // The service's kill check (db/bounded-pool.ts) reads PROCESSLIST, then sends KILL QUERY,
        // with this account for a moment while it ends a query: neither is a query of an answer.
        // (A fresh-clone CI once caught the KILL of a feed's statement, on the next thread id, just
        // after the statement had ended: "the query ended after the client hung up" failed.)
        `SELECT id, state FROM information_schema.processlist WHERE user = ? AND command = 'Query'
           AND COALESCE(info, '') NOT LIKE 'SELECT ID FROM information_schema.PROCESSLIST%'
           AND COALESCE(info, '') NOT LIKE 'KILL QUERY %'`, [server.readerUser])
      return rows as unknown[]
    },
    readerTransactions: async () => {
      const [rows] = await admin.query(
        `SELECT t.trx_id FROM information_schema.innodb_trx t JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
          WHERE p.user = ?`, [server.readerUser])
      return rows as unknown[]
    },
    untilReaderIdle: async (ms) => {
      const deadline = Date.now() + ms
      while (Date.now() < deadline) {
        if ((await database.readerQueries()).length === 0 && (await database.readerTransactions()).length === 0) return
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    },
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``)
      await admin.end()
    },
  }
  return database
}
