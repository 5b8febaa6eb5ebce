// The log source's ChangeLog (db/change-log.ts) over the binary log
// (docs/decisions/0036): one reader per instance follows the log from the
// server's position at start and remembers, per transaction, the booking ids
// it touched and whether it touched anything else an answer is made of. In
// memory and bounded: past the cap, the oldest transactions are forgotten and
// memory starts later. A question about an older position rewinds the one
// reader to it (its server id allows one stream) and reads forward again.
import { createPool, type Pool } from 'mysql2/promise'
import { comparePositions, type BookingChanges, type BookingChangesSoFar, type ChangeLog, type ChangeLogState, type LogPosition } from './change-log.ts'
import type { MysqlTarget } from './connection-options.ts'
import { followBinlog, type BinlogFollower, type FollowerEvent, type ReaderLog, type RewindResult } from './binlog-reader.ts'
import { readVisibleLogPosition } from './binlog-requirements.ts'
import { parseServerVersion, SERVER_VERSION_QUERY, type ServerKind } from './server-dialect.ts'
import { TransactionMemory } from './transaction-memory.ts'

export interface BinlogChangeLogOptions {
  /** The reader account: REPLICATION SLAVE and BINLOG MONITOR (REPLICATION CLIENT), SELECT on the database. */
  target: MysqlTarget
  /** BINLOG_SERVER_ID: the replica id this instance reads as; one reader per id on a server. */
  serverId: number
  /** The WordPress table prefix (`wp_`). */
  prefix: string
  log: ReaderLog
  /** How often an idle server sends a heartbeat; three periods of silence are a stall. Default 5 s. */
  heartbeatMs?: number
  /**
   * How many booking ids (plus one per transaction) memory holds before it forgets the oldest. Default 1,000,000.
   * While a question waits, memory keeps what it asks for up to twice this.
   */
  maxRememberedIds?: number
  /** SHOW MASTER STATUS's time limit. Default 5 s. */
  statementTimeoutMs?: number
  /** A reader displaced by another with its server id within this time of its first connection gives way. Default 10 s. */
  newcomerMs?: number
}

export function startBinlogChangeLog(options: BinlogChangeLogOptions): ChangeLog {
  const { log } = options
  const heartbeatMs = options.heartbeatMs ?? 5_000
  const maxIds = options.maxRememberedIds ?? 1_000_000
  const statementTimeoutMs = options.statementTimeoutMs ?? 5_000
  const pool: Pool = createPool({ ...options.target, connectionLimit: 2, connectTimeout: statementTimeoutMs })
  // Errors of idle connections (the server killed or restarted) are the next query's to report.
  pool.on('connection', (connection) => { connection.on('error', () => undefined) })

  let position: LogPosition | undefined
  let memory: TransactionMemory | undefined
  /** During a rewind: what memory held before it, given back if the rewind is refused. */
  let saved: { memory: TransactionMemory; position: LogPosition | undefined; rewind: number } | undefined
  let rewinds = 0
  let follower: BinlogFollower | undefined
  let startProblem: string | undefined
  let stopped = false
  let startTimer: NodeJS.Timeout | undefined
  const waiters = new Set<() => void>()
  let rewindQueue: Promise<unknown> = Promise.resolve()

  const notify = () => { for (const waiter of [...waiters]) waiter() }

  /** The server's kind, read once (SERVER_VERSION_QUERY): on MariaDB a visible position takes one statement. */
  let serverKind: ServerKind | undefined
  // A consistent snapshot's position (one statement on MariaDB, three on one connection elsewhere);
  // a connection that failed or timed out in the middle of them is not given back.
  const serverPosition = async (): Promise<LogPosition> => {
    const connection = await pool.getConnection()
    let at: LogPosition | undefined
    try {
      const query = (sql: string) => connection.query({ sql, timeout: statementTimeoutMs })
      if (serverKind === undefined) {
        const [[row]] = await query(SERVER_VERSION_QUERY) as unknown as [[{ version: string }]]
        serverKind = parseServerVersion(row.version).kind
      }
      at = await readVisibleLogPosition({ query }, serverKind)
    } catch (error) {
      connection.destroy()
      throw error
    }
    connection.release()
    if (at === undefined) throw new Error('the server keeps no binary log (log_bin is OFF)')
    return at
  }

  /** The `from` of each question waiting: memory keeps what it asks for, up to twice the cap. */
  const pins = new Set<{ from: LogPosition }>()
  const pinned = (end: LogPosition) => [...pins].some((pin) => comparePositions(end, pin.from) > 0)

  const remember = (end: LogPosition, ids: number[], reset: string | undefined) => {
    if (!memory) return
    memory.push(end, ids, reset)
    for (let oldest = memory.oldestEnd(); memory.size > maxIds && oldest !== undefined; oldest = memory.oldestEnd()) {
      if (memory.size <= maxIds * 2 && pinned(oldest)) break
      memory.forgetOldest()
    }
  }

  const onEvent = (event: FollowerEvent) => {
    switch (event.kind) {
      case 'commit':
        position = event.end
        if (event.bookingIds.length > 0 || event.relevant || event.reset !== undefined) {
          remember(event.end, event.bookingIds, event.reset)
        }
        break
      case 'position':
        position = event.at
        break
      case 'rewinding':
        rewinds += 1
        if (memory) saved ??= { memory, position, rewind: rewinds }
        if (saved) saved.rewind = rewinds
        memory = new TransactionMemory(event.from)
        position = event.from
        break
      case 'rewind-failed':
        if (saved) {
          memory = saved.memory
          position = saved.position
        }
        saved = undefined
        break
      case 'gap':
        log.warn({ file: event.at.file, position: event.at.position, reason: event.reason }, 'the change log forgot what lay before this position')
        memory = new TransactionMemory(event.at)
        position = event.at
        saved = undefined
        break
      case 'alive':
        return
    }
    notify()
  }

  const start = async (delayMs: number) => {
    if (stopped) return
    try {
      const at = await serverPosition()
      if (stopped) return
      position = at
      memory = new TransactionMemory(at)
      startProblem = undefined
      log.info({ file: at.file, position: at.position, serverId: options.serverId }, 'the change log follows the binary log from the server\'s position')
      follower = followBinlog(at, {
        target: options.target, serverId: options.serverId, prefix: options.prefix, heartbeatMs, log, serverPosition, onEvent,
        ...(options.newcomerMs !== undefined && { newcomerMs: options.newcomerMs }),
      })
      notify()
    } catch (error) {
      if (stopped) return
      startProblem = `the binary log's position could not be read: ${(error as Error).message}`
      log.warn({ retryInMs: delayMs }, startProblem)
      startTimer = setTimeout(() => void start(Math.min(delayMs * 2, 5_000)), delayMs)
    }
  }
  void start(250)

  /**
   * Waits until `attempt()` gives an answer, tried at once and at every event,
   * at most until `deadline` (undefined then). The answer is taken in the same
   * turn as the event that made it possible: zongji hands over a burst of
   * events at once, and memory may move on before a promise's continuation runs.
   */
  const waitFor = <T>(attempt: () => T | undefined, deadline: number): Promise<T | undefined> => {
    const now = attempt()
    if (now !== undefined || stopped || Date.now() >= deadline) return Promise.resolve(now)
    return new Promise((resolve) => {
      const finish = (result: T | undefined) => {
        clearTimeout(timer)
        waiters.delete(check)
        resolve(result)
      }
      const check = () => {
        if (stopped) return finish(undefined)
        const result = attempt()
        if (result !== undefined) finish(result)
      }
      const timer = setTimeout(() => finish(attempt()), deadline - Date.now())
      waiters.add(check)
    })
  }
  const reached = (to: LogPosition) => position !== undefined && comparePositions(position, to) >= 0
  const covers = (from: LogPosition) => memory !== undefined && comparePositions(from, memory.start) >= 0
  const whenStarted = () => (memory !== undefined ? true : undefined)

  /**
   * Rewinds the reader to `from`, one rewind at a time; 'late' when it has not answered by `deadline` (it goes on).
   * `onRewinding` runs in the turn memory starts afresh at `from`, before any event read from there.
   */
  const rewindTo = (from: LogPosition, deadline: number, onRewinding: () => void): Promise<RewindResult | 'late'> => {
    const run = rewindQueue.then(async (): Promise<RewindResult | 'late'> => {
      if (memory && comparePositions(from, memory.start) >= 0) return { ok: true }
      if (!follower || Date.now() >= deadline) return 'late'
      log.info({ file: from.file, position: from.position }, 'rewinding the binary log reader to an older position')
      const started = follower.rewind(from)
      // follower.rewind announced it ('rewinding') before returning: this rewind's number. A later
      // rewind, begun before this one's confirmation is seen here, keeps what memory held before both.
      const mine = rewinds
      const rewinding = started.then((result) => {
        if (result.ok && saved && saved.rewind === mine) saved = undefined
        return result
      })
      onRewinding()
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now())) })
      const result = await Promise.race([rewinding, late])
      clearTimeout(timer)
      return result
    })
    rewindQueue = run.catch(() => undefined)
    return run
  }

  const bookingsChanged = async (from: LogPosition, to: LogPosition, timeoutMs: number): Promise<BookingChanges> => {
    const deadline = Date.now() + timeoutMs
    if (comparePositions(from, to) > 0) return { kind: 'expired', reason: 'the position is ahead of the server\'s log: made on another server, or the log was reset' }
    if (follower?.failed()) return { kind: 'late' }
    if (await waitFor(whenStarted, deadline) === undefined) return { kind: 'late' }
    const answer = (): BookingChanges | 'forgotten' | undefined => {
      if (!reached(to)) return undefined
      if (!covers(from)) return 'forgotten'
      const between = memory!.between(from, to)
      if (between.reset) return { kind: 'expired', reason: `${between.reset.reason} (at ${between.reset.at.file}:${between.reset.at.position})` }
      return { kind: 'changes', ids: between.ids }
    }
    const pin = { from }
    pins.add(pin)
    try {
      return await answerWithRewinds(from, deadline, answer)
    } finally {
      pins.delete(pin)
    }
  }

  // Asked beside the server's position, not after it (server/domain/changes.ts): where the reader
  // has read past `from` already, its answer up to there is as exact as one up to the server's.
  const bookingsChangedSoFar = async (from: LogPosition): Promise<BookingChangesSoFar> => {
    if (follower?.failed() || position === undefined || !covers(from) || comparePositions(position, from) < 0) return { kind: 'not-now' }
    const between = memory!.between(from, position)
    if (between.reset) return { kind: 'not-now' }
    return { kind: 'changes', ids: between.ids, to: position }
  }

  const answerWithRewinds = async (from: LogPosition, deadline: number, answer: () => BookingChanges | 'forgotten' | undefined): Promise<BookingChanges> => {
    for (let attempt = 0; attempt < 3; attempt++) {
      // Waiting starts in the rewind's own turn: the events read from `from` come in bursts, and
      // memory could forget `from` again before a later start of waiting saw the answer.
      let answering: Promise<BookingChanges | 'forgotten' | undefined> | undefined
      if (!covers(from)) {
        const result = await rewindTo(from, deadline, () => { answering = waitFor(answer, deadline) })
        if (result === 'late') return { kind: 'late' }
        if (!result.ok) {
          return result.error.kind === 'purged'
            ? { kind: 'expired', reason: `the binary log no longer holds the position (${from.file}:${from.position}): ${result.error.message}` }
            : { kind: 'late' }
        }
      }
      const rewound = answering !== undefined
      const result = await (answering ?? waitFor(answer, deadline))
      if (result === undefined) return { kind: 'late' }
      if (result !== 'forgotten') return result
      // Read again from `from`, and memory still could not hold all that changed up to `to`.
      if (rewound) return { kind: 'expired', reason: `more changed after the position than the reader can remember (${maxIds * 2} booking ids)` }
    }
    return { kind: 'late' }
  }

  const changedBetween = async (from: LogPosition, to: LogPosition, timeoutMs: number): Promise<boolean | 'unknown'> => {
    const deadline = Date.now() + timeoutMs
    const order = comparePositions(from, to)
    if (order > 0) return 'unknown'
    if (order === 0) return false
    if (follower?.failed()) return 'unknown'
    const answer = (): boolean | 'unknown' | undefined => {
      if (memory === undefined) return undefined
      if (!covers(from)) return 'unknown'
      if (!reached(to)) return undefined
      return memory.between(from, to).changed
    }
    return await waitFor(answer, deadline) ?? 'unknown'
  }

  const state = (): ChangeLogState => {
    const problem = follower?.problem() ?? startProblem
    return {
      ...(position !== undefined && { position }),
      connected: follower?.connected() ?? false,
      ...(problem !== undefined && { problem }),
    }
  }

  const stop = async () => {
    if (stopped) return
    stopped = true
    clearTimeout(startTimer)
    notify()
    await follower?.stop()
    // A frozen server never answers the pool's goodbye: its sockets close anyway, after a second at most.
    let timer: NodeJS.Timeout | undefined
    await Promise.race([pool.end().catch(() => undefined), new Promise((resolve) => { timer = setTimeout(resolve, 1_000) })])
    clearTimeout(timer)
  }

  return { state, serverPosition, bookingsChanged, bookingsChangedSoFar, changedBetween, stop }
}
