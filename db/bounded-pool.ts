// A mysql2 pool behind our own bounds, so no wait on the database is open-ended:
// getting a connection waits at most `acquireTimeoutMs`, a statement at most
// `queryTimeoutMs` and a margin on our own clock (the server's time limit can do
// nothing while the server hangs; MySQL 5.5 and 5.6 have none, so there our
// clock is the limit). A connection that timed out, lost its socket
// or was abandoned mid-result is killed on the server and destroyed, never
// put back: whatever state it is in leaves with it.
import { randomBytes } from 'node:crypto'
import { createConnection, type Pool, type PoolConnection } from 'mysql2'
import { takeRowPackets, type RowPacketSink } from './row-packets.ts'
import { withValuesInlined } from './inline-values.ts'
import type { Admission, StreamGate } from './stream-gate.ts'
import type { GoneSignal } from './gone-signal.ts'
import { limitedStatement, serverEndsStatements, sessionStatements, type DatabaseServer } from './server-dialect.ts'
import type { ServerReading } from './server-info.ts'
import type { MysqlTarget } from './connection-options.ts'

export type { GoneSignal }

/** No connection became free in time, or none could be made: answered 503 rest_database_unavailable. */
export class DbUnavailableError extends Error {
  readonly code = 'BC_DB_UNAVAILABLE'
}

/** A statement, or the wait for its next row, ran past our own bound: answered 504 rest_query_timeout. */
export class DbTimeoutError extends Error {
  readonly code = 'BC_DB_TIMEOUT'
}

/** The client hung up before its answer was done: nothing to answer, and whatever runs for it is stopped. */
export class ClientGoneError extends Error {
  readonly code = 'BC_CLIENT_GONE'
}

/** Where the KILL connection goes: the pools' own host or socket, account and TLS. */
export type KillTarget = Omit<MysqlTarget, 'database'>

/** How long the separate connection that sends a KILL may take, connecting included. */
const KILL_TIMEOUT_MS = 3_000

// A lease's marker is this process's random nonce and the lease's number: unique
// across workers and restarts, and one random draw per process instead of one per
// request (randomBytes took about 10 µs of a 0.3 ms request).
const PROCESS_NONCE = randomBytes(8).toString('hex')
let leaseCount = 0

/**
 * Ends the statement that starts with `marker` (the lease's, unique to it)
 * through a connection made for this alone, so the kill never waits behind the
 * pool it rescues. The statement is found by its text in the server's process
 * list, not by the thread id of our connection's handshake: through a proxy
 * that id is the proxy's (ProxySQL's session), and a pooling proxy keeps the
 * server's connection, statement running, after ours is gone. The check and
 * the KILL go over one connection. Where the account sees no such thread (a
 * process list hidden from it, a proxy that sent the statement to another
 * server), nothing is killed: the statement is still bounded by its own time
 * limit (db/server-dialect.ts) and by the end of its connection. Best effort,
 * bounded: a hung or gone server ignores it. Resolves when done, whatever the outcome.
 */
export function killStatement(target: KillTarget, marker: string): Promise<void> {
  return new Promise((resolve) => {
    const connection = createConnection({ ...target, connectTimeout: KILL_TIMEOUT_MS, maxPreparedStatements: 1 }) // no 512 KB of room for prepared statements (db/connect.ts)
    const done = () => {
      clearTimeout(timer)
      destroyConnection(connection)
      resolve()
    }
    const timer = setTimeout(done, KILL_TIMEOUT_MS)
    connection.on('error', () => { /* the server is gone or hung: nothing left to kill */ })
    // The marker has no LIKE wildcard (see #lease); this statement itself starts with SELECT, so it never finds itself.
    connection.query('SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ?', [`${marker}%`], (error, rows) => {
      const ids = error ? [] : (rows as Array<{ ID: unknown }>).map((row) => Number(row.ID)).filter((id) => Number.isSafeInteger(id) && id > 0)
      if (ids.length === 0) return done()
      // KILL QUERY ends the statement (API.md, "The database": MySQL 5.5 and 5.6 have no limit of
      // their own); the session ends with it where our side of its socket is closed already.
      // One statement has one thread: more than one would be a marker seen twice, and each is ours.
      let left = ids.length
      for (const id of ids) connection.query(`KILL QUERY ${id}`, () => { if (--left === 0) done() })
    })
  })
}

/** Closes the socket at once: mysql2's destroy() only half-closes it, which a hung server never answers. */
function destroyConnection(connection: { destroy(): void }): void {
  connection.destroy()
  ;(connection as unknown as { stream?: { destroy(): void } }).stream?.destroy()
}

export interface Lease {
  readonly connection: PoolConnection
  /** The server the connection is to: which statements it takes (db/server-dialect.ts). */
  readonly server: DatabaseServer
  /** Whether sinks get row packets on this lease (ROWS_AS_BYTES); when not, every row comes as an object. */
  readonly rowPackets: boolean
  /**
   * One statement, bounded by the statement timer; a client gone (`signal`)
   * ends it at once. With a `sink`, its rows go to the sink as bytes when the
   * sink accepts them (db/row-packets.ts), and the rows resolved hold ROW_TAKEN for each.
   */
  query<R>(sql: string, values?: readonly unknown[], signal?: GoneSignal, sink?: RowPacketSink<R>): Promise<R[]>
  /** A statement sent on `connection` directly, marked as this lease's, so abort() can kill it. */
  marked(sql: string): string
  /** Marks a statement as running whose end the caller watches itself (a streamed result). */
  statementRunning(running: boolean): void
  /** Back to the pool, or destroyed if anything went wrong on it. Idempotent. */
  release(): void
  /** Kills what still runs on the server and destroys the connection. Idempotent. */
  abort(): void
}

export interface BoundedPoolOptions {
  /** At most this many connections at once (the mysql2 pool's own limit too). */
  size: number
  acquireTimeoutMs: number
  /** QUERY_TIMEOUT_MS: the server's limit where it has one (db/server-dialect.ts), else our timer's. */
  queryTimeoutMs: number
  /** Our timer runs this much longer where the server keeps the limit itself, so its cancel comes first. */
  timerMarginMs: number
  kill: KillTarget
  /** Says which pool a refusal came from, for the sentence a client reads. */
  purpose: string
  /** The stream pool's line: a permit of the whole service's budget before a connection (db/stream-gate.ts). */
  gate?: StreamGate
  /** Whether a statement given a sink hands it its row packets (ROWS_AS_BYTES, db/row-packets.ts); else rows come as objects. */
  rowPackets?: boolean
  /** The server, read once for every pool of the handle: each new connection's session is set up for it. */
  reading: ServerReading
}

export class BoundedPool {
  readonly raw: Pool
  readonly #options: BoundedPoolOptions
  #inUse = 0
  readonly #waiting: Array<() => void> = []
  readonly #leases = new Set<Lease>()
  /** Connections the raw pool made whose session is not set up yet. */
  readonly #fresh = new WeakSet<object>()

  constructor(raw: Pool, options: BoundedPoolOptions) {
    this.raw = raw
    this.#options = options
    // Every connection the pool makes, whoever takes it (Kysely or db/snapshot.ts), is set up before its first lease (#setUp).
    raw.on('connection', (connection) => { this.#fresh.add(connection) })
  }

  get size(): number { return this.#options.size }
  get inUse(): number { return this.#inUse }
  get waiting(): number { return this.#waiting.length }

  /** `admission`: who asks, for the gate's line (stream pool only); its signal ends the wait when the client hangs up. */
  async acquire(admission?: Admission): Promise<Lease> {
    const leaveGate = this.#options.gate ? await this.#options.gate.enter(admission ?? { caller: 'unknown' }) : undefined
    try {
      // A free permit is taken at once: an await of it would cost a turn of the microtask queue.
      if (this.#inUse < this.#options.size) this.#inUse++
      else await this.#permit()
    } catch (error) {
      leaveGate?.()
      throw error
    }
    try {
      return this.#lease(await this.#connect(), leaveGate)
    } catch (error) {
      this.#freePermit()
      leaveGate?.()
      throw error
    }
  }

  /**
   * Closes the pool. Connections still leased (answers being torn down) are
   * aborted first: mysql2 would queue its QUIT behind a paused result and wait
   * for ever. Bounded too: a hung server never answers a QUIT.
   */
  end(): Promise<void> {
    for (const lease of this.#leases) lease.abort()
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, KILL_TIMEOUT_MS)
      this.raw.end(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  /** Waits for a permit that another lease frees (#freePermit hands it over), at most acquireTimeoutMs. */
  #permit(): Promise<void> {
    return new Promise((resolve, reject) => {
      const granted = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(granted), 1)
        reject(new DbUnavailableError(`No database connection for ${this.#options.purpose} became free within ${this.#options.acquireTimeoutMs} ms.`))
      }, this.#options.acquireTimeoutMs)
      this.#waiting.push(granted)
    })
  }

  #freePermit(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#inUse--
  }

  /** Our permit bounds the count, so mysql2 never queues: it hands a free connection or makes one (connectTimeout). */
  async #connect(): Promise<{ connection: PoolConnection; server: DatabaseServer }> {
    const connection = await new Promise<PoolConnection>((resolve, reject) => this.raw.getConnection((error, made) => (error ? reject(error) : resolve(made))))
    if (!this.#fresh.has(connection)) return { connection, server: this.#options.reading.found! }
    this.#fresh.delete(connection)
    try {
      return { connection, server: this.#setUp(connection, await this.#options.reading.serverFor(connection)) }
    } catch (error) {
      destroyConnection(connection)
      throw error
    }
  }

  /**
   * A new connection's session, in its server's own words (db/server-dialect.ts):
   * read-only, QUERY_TIMEOUT_MS kept by the server where it can, the SQL mode the
   * service is written for. mysql2 runs them before any statement of the lease.
   * A connection whose session could not be set up is destroyed: it never reads
   * with other settings (the lease's statement then fails with it).
   */
  #setUp(connection: PoolConnection, server: DatabaseServer): DatabaseServer {
    const failed = (error: Error | null) => { if (error) destroyConnection(connection) }
    for (const statement of sessionStatements(server, this.#options.queryTimeoutMs)) connection.query(statement, failed)
    return server
  }

  #lease({ connection, server }: { connection: PoolConnection; server: DatabaseServer }, leaveGate: (() => void) | undefined): Lease {
    const { queryTimeoutMs, timerMarginMs, kill } = this.#options
    // On MySQL 5.5 and 5.6 no server limit comes first: the timer is the limit, and its kill ends the statement.
    const statementTimeoutMs = queryTimeoutMs + (serverEndsStatements(server) ? timerMarginMs : 0)
    let running = false
    let broken = false
    let done = false
    // Leads every statement of the lease, so a kill can find it among all others (killStatement).
    // Letters, digits and dashes only: no LIKE wildcard, and no executable comment (`/*!`, `/*M!`).
    const marker = `/* bc-api ${PROCESS_NONCE}-${(leaseCount += 1)} */`
    const marked = (sql: string) => `${marker} ${sql}`
    // A socket lost while no statement of ours listens (between statements, or under a streamed result).
    const lost = () => { broken = true }
    connection.on('error', lost)
    connection.on('end', lost)
    const finish = (destroy: boolean) => {
      if (done) return
      done = true
      this.#leases.delete(lease)
      connection.off('error', lost)
      connection.off('end', lost)
      if (destroy || broken) {
        if (running) void killStatement(kill, marker)
        // A late error from a destroyed connection has no one left to tell.
        connection.on('error', () => {})
        destroyConnection(connection)
      } else {
        connection.release()
      }
      this.#freePermit()
      leaveGate?.()
    }
    const rowPackets = this.#options.rowPackets ?? false
    const lease: Lease = {
      connection,
      server,
      rowPackets,
      statementRunning: (value) => { running = value },
      marked,
      query: <R>(sql: string, values: readonly unknown[] = [], signal?: GoneSignal, sink?: RowPacketSink<R>) => new Promise<R[]>((resolve, reject) => {
        // An aborted signal's reason: a ClientGoneError for the service's own.
        if (signal?.aborted) return reject(signal.reason ?? new Error('The client went away.'))
        running = true
        const settle = () => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', gone)
        }
        const timer = setTimeout(() => {
          settle()
          broken = true
          reject(new DbTimeoutError(`The database did not answer within ${statementTimeoutMs} ms.`))
        }, statementTimeoutMs)
        // Left running, the statement would hold its connection to no end: the caller aborts the lease.
        const gone = () => {
          settle()
          broken = true
          reject(signal!.reason ?? new Error('The client went away.'))
        }
        signal?.addEventListener('abort', gone, { once: true })
        // The values written into the text here, so mysql2 has nothing to format (db/inline-values.ts).
        const statement = withValuesInlined(sql, values)
        const sent = connection.query(marked(limitedStatement(server, statement.sql, queryTimeoutMs)), statement.values, (error, rows) => {
          settle()
          running = false
          if (error) {
            if ((error as { fatal?: boolean }).fatal) broken = true
            reject(error)
          } else {
            resolve(rows as R[])
          }
        })
        if (sink && rowPackets) takeRowPackets(sent, sink)
      }),
      release: () => finish(false),
      abort: () => finish(true),
    }
    this.#leases.add(lease)
    return lease
  }
}
