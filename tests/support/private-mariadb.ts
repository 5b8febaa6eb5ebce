// A MariaDB of a test file's own, for tests that stop (SIGSTOP), continue or
// kill the real server: never the shared one of `npm test`. One database of
// demo bookings in it, read through a SELECT-only account.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startMariaDb, type MariaDbOptions, type MariaDbServer } from '../../scripts/mariadb.ts'
import { schemaSql } from '../../db/schema.ts'
import { demoDataSql } from '../../db/demo-data.ts'

export interface PrivateMariaDb {
  server: MariaDbServer
  /** The reader's DATABASE_URL of the one database (table prefix `wp_`). */
  databaseUrl: string
  reader: { user: string; password: string }
  /** The server process's id, to stop, continue or kill. */
  pid(): number
  /** Continues the server, whatever a test left it in, then stops it. */
  stop(): Promise<void>
}

/** `options`: the server's own (TLS, a binary log: scripts/mariadb.ts). */
export async function startPrivateMariaDb(database: string, bookings: number, options: MariaDbOptions = {}): Promise<PrivateMariaDb> {
  const reader = { user: `${database}_reader`, password: `${database}-reader-pw` }
  const server = await startMariaDb(options)
  await server.adminQuery(`
    CREATE DATABASE ${database} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
    CREATE USER '${reader.user}'@'%' IDENTIFIED BY '${reader.password}';
    GRANT SELECT ON ${database}.* TO '${reader.user}'@'%';
    USE ${database};
    ${schemaSql('wp_')}`)
  for (const statement of demoDataSql({ prefix: 'wp_', bookings })) await server.adminQuery(`USE ${database}; ${statement}`)
  const pid = () => Number(readFileSync(join(server.dataDir, 'mariadbd.pid'), 'utf8').trim())
  return {
    server, reader, pid,
    databaseUrl: `mysql://${reader.user}:${reader.password}@${server.host}:${server.port}/${database}`,
    stop: async () => {
      try { process.kill(pid(), 'SIGCONT') } catch { /* gone */ }
      await server.stop()
    },
  }
}
