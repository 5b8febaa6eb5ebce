// The database handle: a mysql2 pool (the callback API, which Kysely's
// MysqlDialect streams from) whose every session is read-only and bounded in time.
import { Kysely, MysqlDialect, OperationNodeTransformer, type MysqlPool, type MysqlPoolConnection, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type TableNode, type UnknownRow } from 'kysely'
import { createPool, type Pool } from 'mysql2'
import type { Database, Db } from './database.ts'
import { BoundedPool } from './bounded-pool.ts'
import { ServerReading, type DatabaseServerFound } from './server-info.ts'
import { createLocalGate, DEFAULT_QUEUE_LENGTH, DEFAULT_QUEUE_TIMEOUT_MS, DEFAULT_STREAM_CONNECTIONS, type StreamGate } from './stream-gate.ts'
import { formatStatement } from './inline-values.ts'
import { installRowPacketTaking } from './row-packets.ts'
import { CompiledShapes, useCompiledShapes } from './compiled-shapes.ts'
import { stopBookingIndexes, watchBookingIndexes } from './booking-indexes.ts'
import { effectiveSslMode, fallBackToPlainWhenNoTls, mysqlTarget, type DatabaseSettings, type MysqlTarget } from './connection-options.ts'

export type { DatabaseSettings } from './connection-options.ts'

/** The handle's settings: the connection, plus its pools and time limits. */
export interface DbSettings extends DatabaseSettings {
  tablePrefix: string
  /** Connections for short queries (DB_POOL_SIZE). */
  poolSize: number
  /** Connections for streamed answers, apart from the short ones (DB_STREAM_CONNECTIONS). */
  streamConnections?: number
  queryTimeoutMs: number
  /** How long a request waits for a free connection before 503 (DB_ACQUIRE_TIMEOUT_MS). */
  acquireTimeoutMs?: number
  /** The longest wait in line for a stream permit (DB_QUEUE_TIMEOUT_MS). */
  queueTimeoutMs?: number
  /** At most this many wait in line (DB_QUEUE_LENGTH). */
  queueLength?: number
  /**
   * ROWS_AS_BYTES: answers written from the rows' bytes (db/row-packets.ts,
   * server/http/booking-list.ts); false sends every row through mysql2's
   * objects and the record's way. Default true.
   */
  rowsAsBytes?: boolean
  /** SQL_SHAPE_CACHE: false builds every query's SQL afresh (db/compiled-shapes.ts). Default true. */
  sqlShapeCache?: boolean
  /**
   * Where stream permits come from: the cluster's primary under WORKERS > 1
   * (server/stream-permits.ts); by default a line in this process.
   */
  streamGate?: StreamGate
  /**
   * Told once, when the server is first read (SELECT VERSION(), on the first
   * connection made): the start-up log line, and the warning when no version
   * can be read from it (server/main.ts).
   */
  onServerFound?: (server: DatabaseServerFound) => void
}

/** How long the first connection waits for the server's answer to SELECT VERSION() (as long as connecting may take). */
const SERVER_READ_TIMEOUT_MS = 2_000

/**
 * Our own statement timer runs this much past QUERY_TIMEOUT_MS, so the server's own cancel normally comes first;
 * on a server with none (MySQL 5.5, 5.6), the timer is the limit, at QUERY_TIMEOUT_MS itself.
 */
export const STATEMENT_TIMER_MARGIN_MS = 1_000

/**
 * Short queries and streamed answers hold connections of two pools, so a
 * crowd of exports, however slow their readers, never starves a small request.
 */
export interface DbPools {
  short: BoundedPool
  stream: BoundedPool
  /** The line in front of `stream` (its stats for GET /metrics). */
  gate: StreamGate
  /** The server, as SELECT VERSION() said on the first connection made, for GET /metrics; undefined before it. */
  server(): DatabaseServerFound | undefined
}

export type { Db }

export interface DbHandle {
  db: Db
  pool: DbPools
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
  const acquireTimeoutMs = settings.acquireTimeoutMs ?? 1_000
  // One object for both pools and the KILL connection: PREFERRED's fall-back to plain TCP changes it for all.
  const target = mysqlTarget(settings)
  const kill = target
  // The one switch of the bytes-to-text path: off, no sink ever sees a row packet.
  const rowPackets = settings.rowsAsBytes !== false && installRowPacketTaking()
  // Both pools' sessions are set up from one reading of the server.
  const reading = new ServerReading({ timeoutMs: SERVER_READ_TIMEOUT_MS, onFound: settings.onServerFound })
  const bounded = (size: number, purpose: string, gate?: StreamGate) => new BoundedPool(createRawPool(settings, target, size), {
    size, acquireTimeoutMs, queryTimeoutMs: settings.queryTimeoutMs, timerMarginMs: STATEMENT_TIMER_MARGIN_MS, kill, purpose, gate, rowPackets, reading,
  })
  const streamConnections = settings.streamConnections ?? DEFAULT_STREAM_CONNECTIONS
  // This process may be granted every permit of the service's budget, so its own pool has room for all of them.
  const gate = settings.streamGate ?? createLocalGate({
    permits: streamConnections,
    maxWaiting: settings.queueLength ?? DEFAULT_QUEUE_LENGTH,
    timeoutMs: settings.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS,
  })
  const pool: DbPools = {
    short: bounded(settings.poolSize, 'this request'),
    stream: bounded(streamConnections, 'a streamed answer', gate),
    gate,
    server: () => reading.found,
  }
  const db = new Kysely<Database>({
    dialect: new MysqlDialect({ pool: kyselyPool(pool.short) }),
    plugins: [new TablePrefixPlugin(settings.tablePrefix)],
  })
  if (settings.sqlShapeCache === false) useCompiledShapes(db, new CompiledShapes({ cache: false }))
  void watchBookingIndexes(db, `${settings.tablePrefix}booking_calendar_bookings`)
  return {
    db,
    pool,
    close: async () => {
      stopBookingIndexes(db)
      await Promise.all([db.destroy(), pool.stream.end()])
    },
  }
}

function createRawPool(settings: DbSettings, target: MysqlTarget, size: number): Pool {
  const pool = createPool({
    // Host and port or a socket, the account, and TLS (db/connection-options.ts).
    ...target,
    connectionLimit: size,
    // Wall-clock strings, never JS Dates: see database.ts.
    dateStrings: true,
    charset: 'UTF8MB4_UNICODE_520_CI',
    // A statement whose values are in its text already (db/inline-values.ts) is sent as it is, unscanned.
    queryFormat: formatStatement,
    // Bounds making a connection, also to a server that accepts TCP but hangs.
    connectTimeout: 2_000,
    enableKeepAlive: true,
    // Connections idle for a minute are closed, so a restarted database leaves no stale ones behind for long.
    // mysql2 checks each second, and also closes every free connection above maxIdle, busy pool
    // or not: at 4 it made a worker under ten clients open a new connection about once a second
    // (tests/integration/pool-churn.test.ts). At size - 1 that happens only when all are free.
    // (At maxIdle equal to the size, mysql2 never checks, so idle ones would stay open.)
    idleTimeout: 60_000,
    maxIdle: Math.max(size - 1, 1),
    // Nothing here prepares a statement (Kysely and db/ send text with query()), yet mysql2
    // makes each connection an LRU of prepared statements with room for this many, four
    // arrays of that length made up front: at mysql2's default of 16,000, 512 KB per
    // connection, 10 MB of the heap of a worker with 20 (docs/performance.md).
    maxPreparedStatements: 1,
  })
  if (effectiveSslMode(settings) === 'PREFERRED') fallBackToPlainWhenNoTls(pool, target)
  // Each new connection's session is set up by the bounded pool, for the server it read (db/bounded-pool.ts).
  return pool
}

/** Kysely's view of the short pool: every statement it sends goes through the lease's timer. */
function kyselyPool(pool: BoundedPool): MysqlPool {
  return {
    getConnection(callback) {
      pool.acquire().then((lease) => {
        const connection = {
          query(sql: string, parameters: unknown[], done?: (error: unknown, result: unknown) => void) {
            // Kysely streams nothing here: the one large result is read by db/snapshot.ts.
            if (!done) throw new Error('Streaming through Kysely is not supported; use db/snapshot.ts.')
            lease.query(sql, parameters).then((rows) => done(null, rows), (error: unknown) => done(error, undefined))
          },
          release: () => lease.release(),
        }
        callback(null, connection as unknown as MysqlPoolConnection)
      }, (error: unknown) => callback(error, undefined as unknown as MysqlPoolConnection))
    },
    end(callback) {
      pool.end().then(() => callback(null), callback)
    },
  }
}
