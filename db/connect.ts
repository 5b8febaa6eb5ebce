// The database handle: a mysql2 pool (the callback API, which Kysely's
// MysqlDialect streams from) whose every session is read-only and bounded in time.
import { Kysely, MysqlDialect, OperationNodeTransformer, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type TableNode, type UnknownRow } from 'kysely'
import { createPool, type Pool } from 'mysql2'
import type { Database } from './database.ts'

export interface DbSettings {
  host: string
  port: number
  user: string
  password: string
  database: string
  tablePrefix: string
  poolSize: number
  queryTimeoutMs: number
}

export type Db = Kysely<Database>

export interface DbHandle {
  db: Db
  pool: Pool
  close(): Promise<void>
}

/**
 * Prefixes every table name once, here, so the rest of the code names tables
 * as PLUGIN_TABLES.md does. Queries must not alias tables: a reference such as
 * `posts.ID` is prefixed as well, and so matches only the unaliased table.
 */
class TablePrefixTransformer extends OperationNodeTransformer {
  constructor(private readonly prefix: string) {
    super()
  }

  protected override transformTable(node: TableNode): TableNode {
    const transformed = super.transformTable(node)
    const identifier = transformed.table.identifier
    return { ...transformed, table: { ...transformed.table, identifier: { ...identifier, name: this.prefix + identifier.name } } }
  }
}

export class TablePrefixPlugin implements KyselyPlugin {
  readonly #transformer: TablePrefixTransformer

  constructor(prefix: string) {
    this.#transformer = new TablePrefixTransformer(prefix)
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#transformer.transformNode(args.node)
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result
  }
}

export function createDb(settings: DbSettings): DbHandle {
  const pool = createPool({
    host: settings.host,
    port: settings.port,
    user: settings.user,
    password: settings.password,
    database: settings.database,
    connectionLimit: settings.poolSize,
    // Wall-clock strings, never JS Dates: see database.ts.
    dateStrings: true,
    charset: 'UTF8MB4_UNICODE_520_CI',
    connectTimeout: 2_000,
    enableKeepAlive: true,
    // Connections idle for a minute are closed, so a restarted database leaves no stale ones behind for long.
    idleTimeout: 60_000,
    maxIdle: Math.min(settings.poolSize, 4),
  })
  const statementSeconds = (settings.queryTimeoutMs / 1000).toFixed(3)
  // Every connection the pool makes, whoever takes it (Kysely or db/snapshot.ts),
  // starts with these; mysql2 queues them before any other statement on it.
  pool.on('connection', (connection) => {
    const failed = (error: Error | null) => { if (error) connection.destroy() }
    // The account is read-only; the session is too, so no bug of ours can write.
    // REPEATABLE READ (InnoDB's default, set in case a server changed it): a
    // transaction sees one snapshot, so a count and its rows agree (db/snapshot.ts).
    connection.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY', failed)
    // QUERY_TIMEOUT_MS is enforced by the server, which cancels the statement
    // itself (ER_STATEMENT_TIMEOUT), instead of the client only giving up on it.
    connection.query(`SET SESSION max_statement_time = ${statementSeconds}`, failed)
  })
  const db = new Kysely<Database>({
    dialect: new MysqlDialect({ pool }),
    plugins: [new TablePrefixPlugin(settings.tablePrefix)],
  })
  return {
    db,
    pool,
    close: async () => {
      await db.destroy()
    },
  }
}
