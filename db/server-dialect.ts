// The database server the service talks to (MariaDB or MySQL, and which
// version) and the statements that are valid on it: the one place that knows
// what differs between them (docs/databases.md). Pure: the server is read from
// what SELECT VERSION() says (never from the handshake, which a proxy writes:
// ProxySQL says 5.5.30), and every function here only builds text.

export type ServerKind = 'mariadb' | 'mysql'

export interface DatabaseServer {
  kind: ServerKind
  /** major.minor.patch, as the server states it ('10.11.6', '8.0.36'); '0.0.0' when it states none. */
  version: string
  major: number
  minor: number
  patch: number
}

/**
 * How a statement's time limit (QUERY_TIMEOUT_MS) is kept on this server:
 * MariaDB's session max_statement_time; MySQL 5.7.8+'s MAX_EXECUTION_TIME
 * hint on each SELECT; or, on a server with neither (MySQL 5.5 and 5.6), the
 * service's own statement timer, which kills the statement (db/bounded-pool.ts).
 */
export type StatementTimeLimit = 'max_statement_time' | 'max_execution_time_hint' | 'service_kill'

/**
 * MariaDB 10.x and later prefix the version of the handshake with this (old
 * replication clients took a leading 10 for 1.0); SELECT VERSION() does not.
 */
const REPLICATION_PREFIX = '5.5.5-'

/**
 * The server a version string names: MariaDB says so in it ('10.11.6-MariaDB-0+deb12u1');
 * anything else is taken as MySQL (Percona and Amazon RDS's MySQL say '8.0.36-28', '8.0.35').
 * A string without a version ('proxysql', '') gives '0.0.0': see versionRead.
 */
export function parseServerVersion(text: string): DatabaseServer {
  const bare = text.startsWith(REPLICATION_PREFIX) ? text.slice(REPLICATION_PREFIX.length) : text
  const kind: ServerKind = /mariadb/i.test(bare) ? 'mariadb' : 'mysql'
  const numbers = /^(\d+)\.(\d+)\.(\d+)/.exec(bare)
  const [major, minor, patch] = numbers ? [Number(numbers[1]), Number(numbers[2]), Number(numbers[3])] : [0, 0, 0]
  return { kind, version: `${major}.${minor}.${patch}`, major, minor, patch }
}

/**
 * Whether the version could be read. When it could not, every function here
 * gives what every supported server takes (MariaDB 5.5 and MySQL 5.5 alike): no
 * READ ONLY, no time limit of the server's, no hint, SET NAMES.
 */
export function versionRead(server: DatabaseServer): boolean {
  return server.major !== 0
}

/** At least major.minor.patch. */
function atLeast(server: DatabaseServer, major: number, minor: number, patch: number): boolean {
  if (server.major !== major) return server.major > major
  if (server.minor !== minor) return server.minor > minor
  return server.patch >= patch
}

export function statementTimeLimit(server: DatabaseServer): StatementTimeLimit {
  // MariaDB 10.1.1 brought max_statement_time, but SET STATEMENT, which lifts it for an
  // export, came with 10.1.2: 10.1.1 is held by the service's timer, as 10.0 is.
  // MySQL 5.7.8 brought max_execution_time and its hint.
  if (server.kind === 'mariadb') return atLeast(server, 10, 1, 2) ? 'max_statement_time' : 'service_kill'
  return atLeast(server, 5, 7, 8) ? 'max_execution_time_hint' : 'service_kill'
}

/** Whether the server itself stops a statement at QUERY_TIMEOUT_MS; if not, the service's own timer is the limit. */
export function serverEndsStatements(server: DatabaseServer): boolean {
  return statementTimeLimit(server) !== 'service_kill'
}

/**
 * The SQL mode the service is written and tested for: MariaDB 10.2's default
 * without NO_AUTO_CREATE_USER, which MySQL 8.0.11 and later refuse (setting it is
 * an error there) and which only ever concerned GRANT, never sent here. Every
 * supported server takes these three.
 */
export const SESSION_SQL_MODE = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'

/**
 * The statements every new connection starts with, in order (db/bounded-pool.ts),
 * for statements of at most `queryTimeoutMs`.
 */
export function sessionStatements(server: DatabaseServer, queryTimeoutMs: number): string[] {
  const statements: string[] = []
  // READ ONLY came with MySQL 5.6.5 and MariaDB 10.0 (MariaDB 5.5, CentOS 7's, refuses it):
  // before them the account alone is read-only.
  const readOnly = server.kind === 'mariadb' ? atLeast(server, 10, 0, 0) : atLeast(server, 5, 6, 5)
  // REPEATABLE READ (InnoDB's default, set in case a server changed it): a
  // transaction sees one snapshot, so a count and its rows agree (db/snapshot.ts).
  statements.push(`SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ${readOnly ? ', READ ONLY' : ''}`)
  // MariaDB cancels the statement itself (ER_STATEMENT_TIMEOUT). MySQL's limit is a hint
  // on each SELECT (limitedStatement), which a session value does not change.
  if (statementTimeLimit(server) === 'max_statement_time') statements.push(`SET SESSION max_statement_time = ${(queryTimeoutMs / 1000).toFixed(3)}`)
  // MySQL 5.7.8 to 8.0.2 have no SET_VAR to lift a global max_execution_time for an
  // export alone (unlimitedStatement): the session's is 0, and the short
  // statements keep their own limit in their hint.
  if (server.kind === 'mysql' && atLeast(server, 5, 7, 8) && !atLeast(server, 8, 0, 3)) statements.push('SET SESSION max_execution_time = 0')
  // Values are escaped by mysql2 with backslashes, which a server with
  // NO_BACKSLASH_ESCAPES reads as text: a quote in a slug would end its string
  // there and the rest be SQL. Other modes change what a read gives (PAD_CHAR_TO_FULL_LENGTH),
  // and MySQL 5.7's ONLY_FULL_GROUP_BY refuses queries MariaDB takes.
  statements.push(`SET SESSION sql_mode = '${SESSION_SQL_MODE}'`)
  if (!atLeast(server, 5, 6, 0)) {
    // A server below 5.6 (MySQL 5.5, MariaDB 5.5; WordPress's own rule for this collation)
    // does not know the one mysql2 asks for at the handshake (utf8mb4_unicode_520_ci)
    // and would fall back to its default character set, latin1.
    statements.push('SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci')
  }
  return statements
}

/** `select` at the start of a statement, and a hint comment right after it if there is one. */
const LEADING_SELECT = /^(\s*select)(\s+\/\*\+(.*?)\*\/)?/is

/**
 * The statement with optimizer hints (`/*+ … *\/`, MySQL 5.7+) after its first
 * SELECT, in the one hint comment MySQL reads there (joined to one already
 * there). A statement that does not begin with SELECT is left as it is.
 */
export function withOptimizerHints(sql: string, hints: readonly string[]): string {
  if (hints.length === 0) return sql
  const select = LEADING_SELECT.exec(sql)
  if (!select) return sql
  const existing = select[3]?.trim()
  const joined = existing ? `${existing} ${hints.join(' ')}` : hints.join(' ')
  return `${select[1]} /*+ ${joined} */${sql.slice(select[0].length)}`
}

/**
 * A statement held to `timeoutMs`, as every statement of a lease is (db/bounded-pool.ts):
 * on MySQL 5.7.8+ its SELECT carries MAX_EXECUTION_TIME (MySQL stops it with
 * ER_QUERY_TIMEOUT, 3024); elsewhere the session's limit, or the service's
 * timer, holds it, and the text is unchanged.
 */
export function limitedStatement(server: DatabaseServer, sql: string, timeoutMs: number): string {
  if (statementTimeLimit(server) !== 'max_execution_time_hint') return sql
  return withOptimizerHints(sql, [`MAX_EXECUTION_TIME(${Math.max(1, Math.trunc(timeoutMs))})`])
}

/**
 * A statement without a time limit: an export read by a slow client
 * (db/snapshot.ts), bounded instead by the wait for each row. MariaDB lifts
 * its session limit for this statement alone. On MySQL the statement carries
 * no MAX_EXECUTION_TIME hint, and a global max_execution_time a host may set is
 * lifted too: by a SET_VAR hint from 8.0.3, by the session's value before
 * (sessionStatements).
 */
export function unlimitedStatement(server: DatabaseServer, sql: string): string {
  if (statementTimeLimit(server) === 'max_statement_time') return `SET STATEMENT max_statement_time = 0 FOR ${sql}`
  if (server.kind === 'mysql' && atLeast(server, 8, 0, 3)) return withOptimizerHints(sql, ['SET_VAR(max_execution_time = 0)'])
  return sql
}

/**
 * A statement that reads rows through an index in no particular order (a
 * digest, db/row-digest.ts), told to fetch them in the order of the table's
 * pages rather than the index's (multi-range read, its keys sorted), with
 * room to sort 4 MiB of keys at a time instead of 256 KiB: MariaDB then
 * digested a year's 80,000 bookings in 160 ms instead of 290 (decision 0034).
 * MariaDB would not choose it by cost. MySQL's MRR is on and chosen by cost
 * already: its statement is left unchanged.
 */
export function rowsInTableOrder(server: DatabaseServer, sql: string): string {
  if (server.kind === 'mariadb' && atLeast(server, 10, 1, 2)) return `SET STATEMENT ${ROWS_IN_TABLE_ORDER} FOR ${sql}`
  return sql
}

const ROWS_IN_TABLE_ORDER = "optimizer_switch = 'mrr=on,mrr_sort_keys=on,mrr_cost_based=off', mrr_buffer_size = 4194304"

/** MariaDB's ER_STATEMENT_TIMEOUT: max_statement_time stopped the statement. */
export const ER_STATEMENT_TIMEOUT = 1969
/** MySQL's ER_QUERY_TIMEOUT: max_execution_time (or its hint) stopped the statement. */
export const ER_QUERY_TIMEOUT = 3024
/** ER_QUERY_INTERRUPTED: a KILL QUERY stopped the statement (both servers). */
export const ER_QUERY_INTERRUPTED = 1317

/** The server stopped a statement at its time limit, on either server. */
export function isStatementTimeout(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | null)?.errno
  return errno === ER_STATEMENT_TIMEOUT || errno === ER_QUERY_TIMEOUT
}

/** The errors answered 504 rest_query_timeout: the server's time limit, or a statement killed for running too long. */
export const TIMEOUT_ERRNOS: ReadonlySet<number> = new Set([ER_STATEMENT_TIMEOUT, ER_QUERY_TIMEOUT, ER_QUERY_INTERRUPTED])

/** The statement the start-up check reads the server with (both servers have both). */
export const SERVER_VERSION_QUERY = 'SELECT VERSION() AS version, @@version_comment AS comment'
