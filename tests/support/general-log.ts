// The statements the service's reader account sends, from MariaDB's own
// general log: what a test cannot see in an answer (which statements ran).
import { testServer, type TestDatabase } from './database.ts'

/** The statements the reader account sent while `run` ran that name `table` (all, without it). */
export async function readerStatementsDuring(db: TestDatabase, run: () => Promise<unknown>, table?: string): Promise<string[]> {
  await db.admin.query("SET GLOBAL log_output = 'TABLE'")
  await db.admin.query('TRUNCATE TABLE mysql.general_log')
  await db.admin.query('SET GLOBAL general_log = 1')
  try {
    await run()
  } finally {
    await db.admin.query('SET GLOBAL general_log = 0')
  }
  const [rows] = await db.admin.query(
    "SELECT CONVERT(argument USING utf8mb4) AS text FROM mysql.general_log WHERE command_type = 'Query' AND user_host LIKE ?",
    [`${testServer().readerUser}[%`])
  const statements = (rows as Array<{ text: string }>).map((row) => row.text)
  return table === undefined ? statements : statements.filter((text) => text.includes(table))
}
