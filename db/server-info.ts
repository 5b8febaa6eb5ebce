// Which server the service reads (db/server-dialect.ts), asked once at start for the log.
import { sql } from 'kysely'
import type { Db } from './database.ts'
import { parseServerVersion, SERVER_VERSION_QUERY, statementTimeLimit, type DatabaseServer, type StatementTimeLimit } from './server-dialect.ts'

export interface DatabaseServerFound extends DatabaseServer {
  /** @@version_comment: the build ('MySQL Community Server - GPL', 'mariadb.org binary distribution', 'Debian 12'). */
  comment: string
  /** How QUERY_TIMEOUT_MS is kept on it. */
  timeLimit: StatementTimeLimit
}

export async function readDatabaseServer(db: Db): Promise<DatabaseServerFound> {
  const { rows } = await sql<{ version: string; comment: string | null }>`${sql.raw(SERVER_VERSION_QUERY)}`.execute(db)
  const server = parseServerVersion(rows[0]?.version ?? '')
  return { ...server, comment: rows[0]?.comment ?? '', timeLimit: statementTimeLimit(server) }
}
