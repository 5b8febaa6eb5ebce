// What the log source needs of the database before it reads the binary log
// (API.md, "GET changes/", Sources): checked at start, in this order, and the
// first one missing named in a sentence an operator can act on.
import type { MysqlTarget } from './connection-options.ts'
import type { ServerKind } from './server-dialect.ts'
import { createConnection } from 'mysql2/promise'

export type BinlogRequirements = { ok: true } | { ok: false; missing: string }

/** What the server said: the account's grants, whether it may read the log's status, and the log's settings. */
export interface BinlogFacts {
  /** SHOW GRANTS, one statement a line. */
  grants: string[]
  /** SHOW MASTER STATUS (SHOW BINARY LOG STATUS) ran; false when refused for want of a privilege. */
  statusReadable: boolean
  /** Global variables by name, lower case; a variable the server does not have is absent. */
  variables: Record<string, string | undefined>
  /** A consistent snapshot names its log position (Binlog_snapshot_file and _position: MariaDB, Percona Server; not MySQL). */
  snapshotPosition: boolean
}

/** The privileges granted ON *.*, upper case, from SHOW GRANTS' lines. */
export function globalPrivileges(grants: readonly string[]): Set<string> {
  const privileges = new Set<string>()
  for (const line of grants) {
    const match = /^GRANT (.+?) ON \*\.\* TO /i.exec(line.trim())
    if (!match) continue
    for (const privilege of match[1]!.split(',')) privileges.add(privilege.trim().toUpperCase().replace(/\s+/g, ' '))
  }
  return privileges
}

/** The first requirement `facts` lacks, as a sentence; undefined when all hold. */
export function firstMissingRequirement(facts: BinlogFacts): string | undefined {
  const privileges = globalPrivileges(facts.grants)
  const all = privileges.has('ALL PRIVILEGES') || privileges.has('ALL')
  if (!all && !privileges.has('REPLICATION SLAVE') && !privileges.has('REPLICATION REPLICA')) {
    return 'the database account lacks REPLICATION SLAVE: GRANT REPLICATION SLAVE ON *.* TO the account (it allows reading the binary log, no writes)'
  }
  if (!facts.statusReadable) {
    return 'the database account may not read the binary log\'s position: GRANT BINLOG MONITOR (MariaDB) or REPLICATION CLIENT (MySQL) ON *.* TO the account'
  }
  const value = (name: string) => facts.variables[name]?.toUpperCase()
  if (value('log_bin') !== 'ON' && value('log_bin') !== '1') {
    return 'the server keeps no binary log (log_bin is OFF): start it with --log-bin (and a server_id), then restart it'
  }
  if (!facts.snapshotPosition) {
    return 'the server names no binary log position of a consistent snapshot (Binlog_snapshot_position: MariaDB and Percona Server have it, MySQL has not), so the log source cannot know that a read sees every change up to a position and could miss some: the digest source serves this server exactly'
  }
  if (value('binlog_format') !== 'ROW') {
    return `binlog_format is ${facts.variables.binlog_format ?? 'unknown'}, not ROW: set binlog_format=ROW in the server's configuration (SET GLOBAL binlog_format=ROW until its restart)`
  }
  if (value('binlog_row_image') !== 'FULL') {
    return `binlog_row_image is ${facts.variables.binlog_row_image ?? 'unknown'}, not FULL: set binlog_row_image=FULL in the server's configuration`
  }
  if (facts.variables.binlog_row_metadata === undefined) {
    return 'the server has no binlog_row_metadata (MariaDB 10.5 or later and MySQL 8.0 have it): upgrade the server, or use the digest source (CHANGES_SOURCE=digest)'
  }
  if (value('binlog_row_metadata') !== 'FULL') {
    return `binlog_row_metadata is ${facts.variables.binlog_row_metadata}, not FULL: set binlog_row_metadata=FULL in the server's configuration`
  }
  return undefined
}

/** A connection's query, as mysql2/promise's: rows first. */
export interface AskingConnection {
  query(sql: string): Promise<[unknown, unknown]>
}

const VARIABLES = ['log_bin', 'binlog_format', 'binlog_row_image', 'binlog_row_metadata']

/** Asks the server for BinlogFacts through `connection`. */
export async function readBinlogFacts(connection: AskingConnection): Promise<BinlogFacts> {
  const [grantRows] = await connection.query('SHOW GRANTS') as [Array<Record<string, string>>, unknown]
  const grants = grantRows.map((row) => Object.values(row)[0] ?? '')
  let statusReadable = true
  try {
    await showLogStatus(connection)
  } catch (error) {
    if (!isPrivilegeError(error)) throw error
    statusReadable = false
  }
  const [variableRows] = await connection.query(`SHOW GLOBAL VARIABLES WHERE Variable_name IN (${VARIABLES.map((name) => `'${name}'`).join(', ')})`) as [Array<{ Variable_name: string; Value: string }>, unknown]
  const variables = Object.fromEntries(variableRows.map((row) => [row.Variable_name.toLowerCase(), row.Value]))
  // In a snapshot whatever the server: the facts are read before the server's kind is.
  return { grants, statusReadable, variables, snapshotPosition: await readSnapshotPosition(connection, undefined) !== undefined }
}

function isPrivilegeError(error: unknown): boolean {
  const errno = (error as { errno?: number } | null)?.errno
  return errno === 1227 || errno === 1045 || errno === 1142
}

/**
 * SHOW MASTER STATUS, or SHOW BINARY LOG STATUS where MySQL 8.4 renamed it
 * (and 8.2 on deprecated the old name). Rows: File, Position, …; none when log_bin is off.
 */
export async function showLogStatus(connection: AskingConnection): Promise<Array<{ File: string; Position: number | string }>> {
  try {
    const [rows] = await connection.query('SHOW MASTER STATUS')
    return rows as Array<{ File: string; Position: number | string }>
  } catch (error) {
    // ER_PARSE_ERROR: a server without the old name.
    if ((error as { errno?: number } | null)?.errno !== 1064) throw error
    const [rows] = await connection.query('SHOW BINARY LOG STATUS')
    return rows as Array<{ File: string; Position: number | string }>
  }
}

/**
 * A consistent snapshot's binary log position, read on `connection`: MariaDB's and Percona
 * Server's Binlog_snapshot_file and Binlog_snapshot_position. Undefined where the server has
 * none: MySQL, or no binary log.
 *
 * On MariaDB one statement, outside a transaction: there the two give the log's position after
 * the last commit made visible (last_commit_pos, set in the same hold of LOCK_commit_ordered in
 * which InnoDB's commit_ordered makes a group visible, and read under it: sql/log.cc,
 * set_status_variables), which is what a consistent snapshot freezes. Measured here: never past
 * a snapshot opened right after it (0 of 4,397 under four writers, sync_binlog 0 and 1, where
 * SHOW MASTER STATUS was past it 12 times), and it moves with every commit. Elsewhere (Percona
 * Server) in a consistent snapshot, as its manual names them: three statements on one connection.
 */
async function readSnapshotPosition(connection: AskingConnection, server: ServerKind | undefined): Promise<{ file: string; position: number } | undefined> {
  const readStatus = async () => (await connection.query("SHOW STATUS LIKE 'binlog_snapshot_%'"))[0] as Array<{ Variable_name: string; Value: string }>
  let rows: Array<{ Variable_name: string; Value: string }>
  if (server === 'mariadb') {
    rows = await readStatus()
  } else {
    await connection.query('START TRANSACTION WITH CONSISTENT SNAPSHOT')
    try {
      rows = await readStatus()
    } finally {
      await connection.query('COMMIT')
    }
  }
  const status = new Map(rows.map((row) => [row.Variable_name.toLowerCase(), String(row.Value)]))
  const file = status.get('binlog_snapshot_file')
  const position = status.get('binlog_snapshot_position')
  return file !== undefined && file !== '' && position !== undefined ? { file, position: Number(position) } : undefined
}

/**
 * The binary log's position up to which every transaction is visible to any read that starts
 * after this returns: a consistent snapshot's (readSnapshotPosition; `server`, the server's kind
 * as SELECT VERSION() names it, allows MariaDB's one statement; unknown, the snapshot's three).
 * SHOW MASTER STATUS alone runs ahead of what a read sees: the server writes a transaction to the log, then makes it
 * visible in InnoDB, and a read in between misses a change its position holds (measured: a
 * snapshot opened after SHOW MASTER STATUS answered was behind it in 23 of 13,079 tries, 85 of
 * 11,057 with sync_binlog=1; docs/databases.md). So a server without the snapshot's position
 * (MySQL) is refused, never answered from SHOW MASTER STATUS; the requirements keep the log
 * source from such a server. Undefined: the server keeps no binary log.
 */
export async function readVisibleLogPosition(connection: AskingConnection, server?: ServerKind): Promise<{ file: string; position: number } | undefined> {
  const snapshot = await readSnapshotPosition(connection, server)
  if (snapshot !== undefined) return snapshot
  if ((await showLogStatus(connection)).length === 0) return undefined
  throw new Error('the server names no binary log position of a consistent snapshot: the log source cannot serve it')
}

/** Connects once as `target` and checks every requirement, in order. */
export async function checkBinlogRequirements(target: MysqlTarget): Promise<BinlogRequirements> {
  const connection = await createConnection({ ...target, connectTimeout: 10_000 })
  try {
    const missing = firstMissingRequirement(await readBinlogFacts(connection))
    return missing === undefined ? { ok: true } : { ok: false, missing }
  } finally {
    await connection.end().catch(() => undefined)
  }
}
