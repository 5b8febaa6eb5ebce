// One connection in a read-only REPEATABLE READ transaction, so a count and
// the rows it counts come from one snapshot; and a cursor read in batches.
// Used by the bookings answer, the one query that can return a million rows:
// Kysely builds and compiles it (db/booking-queries.ts), this runs it on the raw
// mysql2 connection, where rows can be taken a thousand at a time instead of
// one await per row (measured by scripts/bench-rules.ts' sibling, see README).
import type { CompiledQuery } from 'kysely'
import { DbTimeoutError, type BoundedPool, type GoneSignal, type Lease } from './bounded-pool.ts'
import { takeRowPackets, type RowPacketSink } from './row-packets.ts'
import { withValuesInlined } from './inline-values.ts'
import { unlimitedStatement, type DatabaseServer } from './server-dialect.ts'
import type { Admission } from './stream-gate.ts'

export interface Snapshot {
  /** The server the snapshot is read on: which statements it takes (db/server-dialect.ts). */
  readonly server: DatabaseServer
  /** All rows of a small query. */
  rows<R>(query: CompiledQuery<R>): Promise<R[]>
  /**
   * The rows of a large query from the server's cursor, in batches, with
   * back-pressure. No server time limit (it would cut a slow reader off):
   * each wait for rows is bounded by `rowTimeoutMs`, then the
   * query is killed on the server and the connection destroyed.
   */
  batches<R>(query: CompiledQuery<R>, options: BatchOptions<R>): AsyncGenerator<R[]>
}

export interface BatchOptions<R> {
  rowTimeoutMs: number
  batchSize?: number
  /** Takes the rows as bytes (db/row-packets.ts) when it accepts the result: the batches then hold ROW_TAKEN for each. */
  sink?: RowPacketSink<R>
}

/**
 * `admission.signal`: the client is gone; what still runs for it fails at once
 * with its reason, and is killed. `admission.caller`: who waits in the stream pool's line.
 */
export async function readSnapshot<T>(pool: BoundedPool, work: (snapshot: Snapshot) => Promise<T>, options: { admission?: Admission } = {}): Promise<T> {
  const { admission } = options
  const signal = admission?.signal
  const lease = await pool.acquire(admission)
  const snapshot: Snapshot = {
    server: lease.server,
    rows: (query) => lease.query(query.sql, query.parameters, signal),
    batches: (query, batchOptions) => readBatches(lease, query, batchOptions, signal),
  }
  try {
    // The session is REPEATABLE READ and READ ONLY already (db/connect.ts).
    await lease.query('START TRANSACTION', [], signal)
    const result = await work(snapshot)
    await lease.query('COMMIT')
    lease.release()
    return result
  } catch (error) {
    // Whatever state the failure left behind (a half-read result, a lost
    // socket, a statement still running) leaves with the connection instead of
    // reaching the next request; a client that hung up ends here too.
    lease.abort()
    throw error
  }
}

/**
 * Rows mysql2 reads ahead of us: 200 (two batches) kept the same rate as
 * 1000 and took six concurrent exports from 186 to 141 MB of RSS
 * (docs/performance.md); more read-ahead only holds more memory per export.
 */
const READ_AHEAD_ROWS = 200

async function* readBatches<R>(lease: Lease, query: CompiledQuery<R>, options: BatchOptions<R>, signal?: GoneSignal): AsyncGenerator<R[]> {
  const batchSize = options.batchSize ?? 100
  const connection = lease.connection
  // The values written into the text here, so mysql2 has nothing to format (db/inline-values.ts).
  const statement = withValuesInlined(query.sql, query.parameters)
  // No time limit for this statement alone (db/server-dialect.ts): its reader may be slow.
  const sql = unlimitedStatement(lease.server, statement.sql)
  const running = connection.query({ sql: lease.marked(sql), values: statement.values })
  if (options.sink && lease.rowPackets) takeRowPackets(running, options.sink)
  // The rows mysql2 has read and we have not taken, from the query's own
  // events: its Readable stream (running.stream()) cost about 7% of a CSV
  // export's CPU in pushes and reads of one object per row (docs/performance.md). Past READ_AHEAD_ROWS the connection is paused, as the stream's
  // highWaterMark did; mysql2 then holds the packets it has until resumed.
  let queued: R[] = []
  let paused = false
  lease.statementRunning(true)
  let ended = false
  let failure: unknown
  let queryFailed = false
  let wake: (() => void) | undefined
  const fail = (error: unknown) => {
    failure ??= error
    wake?.()
  }
  const onRow = (row: R) => {
    queued.push(row)
    if (queued.length >= READ_AHEAD_ROWS && !paused) {
      paused = true
      connection.pause()
    }
    wake?.()
  }
  const onQueryError = (error: unknown) => {
    queryFailed = true
    fail(error)
  }
  // mysql2 reports a lost socket under a streamed query on the connection
  // only, never on the query: without these, a dead server meant endless silence.
  const lost = (error?: unknown) => fail(error ?? Object.assign(new Error('The database closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }))
  const onEnd = () => {
    // mysql2 also emits 'end' right after a query's 'error'; only a real end counts.
    if (queryFailed) return
    ended = true
    lease.statementRunning(false)
    wake?.()
  }
  running.on('result', onRow)
  running.on('end', onEnd)
  running.on('error', onQueryError)
  connection.on('error', lost)
  connection.on('end', lost)
  // A client gone while the server still works on the first row is noticed now, not at the row timeout.
  const gone = () => fail(signal!.reason)
  if (signal?.aborted) gone()
  signal?.addEventListener('abort', gone)
  let sentFirst = false
  try {
    for (;;) {
      // What failed: the driver's error, our own, or the client's reason (a ClientGoneError).
      if (failure && !ended) throw failure as Error
      let batch = queued
      if (queued.length <= batchSize) queued = []
      else batch = queued.splice(0, batchSize)
      if (paused && queued.length < batchSize) {
        // Replays the packets mysql2 held (more rows, at once), then reads the socket again.
        paused = false
        connection.resume()
      }
      if (batch.length > 0) {
        sentFirst = true
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
      if (failure) continue
      // We are ready for rows and mysql2 reads: a wait here is the server's.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          fail(new DbTimeoutError(sentFirst
            ? `The database sent no row for ${options.rowTimeoutMs} ms.`
            : `The database sent no first row within ${options.rowTimeoutMs} ms.`))
        }, options.rowTimeoutMs)
        wake = () => {
          clearTimeout(timer)
          wake = undefined
          resolve()
        }
      })
    }
  } finally {
    running.off('result', onRow)
    running.off('end', onEnd)
    running.off('error', onQueryError)
    connection.off('error', lost)
    connection.off('end', lost)
    signal?.removeEventListener('abort', gone)
    // Stopped early (the client hung up, or a failure): readSnapshot destroys
    // the connection; the query is only detached here, never drained (mysql2
    // would read and drop the rest of the result, holding the connection for
    // seconds), and an error it still reports has a listener, so it throws nowhere.
    if (!ended) running.on('error', () => {})
  }
}
