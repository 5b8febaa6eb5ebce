// One pooled connection in a read-only REPEATABLE READ transaction, so a count
// and the rows it counts come from one snapshot; and a cursor read in batches.
// Used by the bookings answer, the one query that can return a million rows:
// Kysely builds and compiles it (db/bookings.ts), this runs it on the raw
// mysql2 connection, where rows can be taken a thousand at a time instead of
// one await per row (measured by scripts/bench-rules.ts' sibling, see README).
import type { CompiledQuery } from 'kysely'
import type { Pool, PoolConnection } from 'mysql2'

export interface Snapshot {
  /** All rows of a small query. */
  rows<R>(query: CompiledQuery<R>): Promise<R[]>
  /**
   * The rows of a large query from the server's cursor, in batches of at most
   * `batchSize` (250: a few milliseconds of work each), with back-pressure. The statement runs without
   * max_statement_time (it would cut a slow reader off mid-stream); when no first
   * row comes within `firstRowTimeoutMs`, KILL QUERY cancels it on the server.
   */
  batches<R>(query: CompiledQuery<R>, options: { firstRowTimeoutMs: number; batchSize?: number }): AsyncGenerator<R[]>
}

function getConnection(pool: Pool): Promise<PoolConnection> {
  return new Promise((resolve, reject) => pool.getConnection((error, connection) => (error ? reject(error) : resolve(connection))))
}

function run<R>(connection: PoolConnection | Pool, sql: string, values: readonly unknown[] = []): Promise<R[]> {
  return new Promise((resolve, reject) => {
    connection.query(sql, values as unknown[], (error, rows) => (error ? reject(error) : resolve(rows as R[])))
  })
}

export async function readSnapshot<T>(pool: Pool, work: (snapshot: Snapshot) => Promise<T>): Promise<T> {
  const connection = await getConnection(pool)
  let broken = false
  const snapshot: Snapshot = {
    rows: (query) => run(connection, query.sql, query.parameters),
    batches: (query, options) => readBatches(pool, connection, query, options),
  }
  try {
    // The session is REPEATABLE READ and READ ONLY already (db/connect.ts).
    await run(connection, 'START TRANSACTION')
    const result = await work(snapshot)
    await run(connection, 'COMMIT')
    return result
  } catch (error) {
    broken = true
    throw error
  } finally {
    if (broken) {
      // Whatever state the failure left behind (a half-read result, a lost
      // socket) leaves with the connection instead of reaching the next request.
      connection.destroy()
    } else {
      connection.release()
    }
  }
}

async function* readBatches<R>(
  pool: Pool, connection: PoolConnection, query: CompiledQuery<R>, options: { firstRowTimeoutMs: number; batchSize?: number },
): AsyncGenerator<R[]> {
  const batchSize = options.batchSize ?? 100
  // mysql2 knows the server's id of its connection (CONNECTION_ID()) from the handshake.
  const connectionId = connection.threadId
  const stream = connection
    .query({ sql: `SET STATEMENT max_statement_time = 0 FOR ${query.sql}`, values: query.parameters as unknown[] })
    .stream({ highWaterMark: 1000 })
  let ended = false
  let failure: unknown
  stream.on('end', () => { ended = true })
  stream.on('error', (error) => { failure = error })
  const watchdog = setTimeout(() => {
    pool.query(`KILL QUERY ${Number(connectionId)}`, () => { /* the query has ended, or the database is gone */ })
  }, options.firstRowTimeoutMs)
  try {
    for (;;) {
      if (failure) throw failure
      const batch: R[] = []
      let row: R | null
      while (batch.length < batchSize && (row = stream.read() as R | null) !== null) batch.push(row)
      if (batch.length > 0) {
        clearTimeout(watchdog)
        yield batch
        // The event loop's turn. While the database and the client keep up,
        // every await from here to the socket resolves at once, as a microtask:
        // one answer then ran for over a second without letting another
        // request, a timer or a health check in (npm run bench, event-loop
        // delay). Now a batch is at most one turn of work.
        await new Promise<void>((resolve) => setImmediate(resolve))
        continue
      }
      if (ended) return
      await new Promise<void>((resolve) => {
        const wake = () => {
          stream.off('readable', wake)
          stream.off('end', wake)
          stream.off('error', wake)
          resolve()
        }
        stream.on('readable', wake)
        stream.on('end', wake)
        stream.on('error', wake)
      })
    }
  } finally {
    clearTimeout(watchdog)
    // Stopped early (the client hung up): mysql2 reads and drops the rest of the
    // result, so the connection goes back clean.
    if (!ended) stream.destroy()
  }
}
