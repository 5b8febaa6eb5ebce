// The binary log, read as a replica reads it (API.md, "GET changes/";
// docs/decisions/0036): the one file that imports zongji. It turns zongji's
// events into ours (a transaction's end with the bookings it touched, a reset,
// a position) and classifies its errors; followBinlog() keeps one stream up,
// reconnecting from the last transaction's end, and rewinds it on request.
import ZongJi, { type AnyBinlogEvent, type RowData, type UpdateRowData } from '@vlasky/zongji'
import type { MysqlTarget } from './connection-options.ts'
import { comparePositions, type LogPosition } from './change-log.ts'

/** What the change log needs of a logger: pino's shape, an object first, then a sentence. */
export interface ReaderLog {
  info(fields: Record<string, unknown>, message: string): void
  warn(fields: Record<string, unknown>, message: string): void
}

export type ReaderEvent =
  /** A transaction (or a statement standing alone) ended at `end`. */
  | { kind: 'commit'; end: LogPosition; bookingIds: number[]; relevant: boolean; reset?: string }
  /** The reader is at `at` between transactions (a rotate, the next file's header, a checkpoint). */
  | { kind: 'position'; at: LogPosition }
  /** The server answered: an event inside a transaction, or (`heartbeat`) it has nothing more to send. */
  | { kind: 'alive'; heartbeat: boolean }

/** The plugin's tables and the WordPress ones an answer is made of (PLUGIN_TABLES.md). */
export function watchedTables(prefix: string): { bookings: string; disabledTimes: string; posts: string; options: string } {
  return {
    bookings: `${prefix}booking_calendar_bookings`,
    disabledTimes: `${prefix}booking_calendar_disabled_times`,
    posts: `${prefix}posts`,
    options: `${prefix}options`,
  }
}

/** The options an answer is made of: the site's time zone and start_of_week (API.md, "Conditional requests"). */
export const WATCHED_OPTIONS: readonly string[] = ['timezone_string', 'gmt_offset', 'start_of_week']

/** A service is a post of this type (PLUGIN_TABLES.md, "Services"). */
const SERVICE_POST_TYPE = 'bc_service'

/** What the rows of one rows event change: booking ids (before and after images), and whether anything an answer reads changed. */
export function rowsChange(prefix: string, table: string, images: RowData[]): { bookingIds: number[]; relevant: boolean } {
  const tables = watchedTables(prefix)
  if (table === tables.bookings) {
    const ids = images.map((row) => Number(row.id)).filter((id) => Number.isFinite(id))
    return { bookingIds: ids, relevant: true }
  }
  if (table === tables.disabledTimes) return { bookingIds: [], relevant: images.length > 0 }
  // Strings compare as the table's collation does: letter case and trailing spaces aside.
  const fold = (value: unknown) => (typeof value === 'string' ? value.toLowerCase().trimEnd() : value)
  if (table === tables.posts) return { bookingIds: [], relevant: images.some((row) => fold(row.post_type) === SERVICE_POST_TYPE) }
  if (table === tables.options) return { bookingIds: [], relevant: images.some((row) => WATCHED_OPTIONS.includes(fold(row.option_name) as string)) }
  return { bookingIds: [], relevant: false }
}

/** The before and after images of a rows event, as one list. */
function images(rows: ReadonlyArray<RowData | UpdateRowData>, update: boolean): RowData[] {
  return update ? (rows as UpdateRowData[]).flatMap((row) => [row.before, row.after]) : rows as RowData[]
}

export type QueryKind = 'begin' | 'commit' | 'statement'

/** A query event's place in a transaction: its start, its end (COMMIT, ROLLBACK, XA COMMIT), or a statement. */
export function queryKind(query: string): QueryKind {
  const text = query.trim().toUpperCase()
  if (text === 'BEGIN' || text.startsWith('XA START')) return 'begin'
  if (text === 'COMMIT' || text === 'ROLLBACK' || text.startsWith('XA COMMIT') || text.startsWith('XA ROLLBACK')) return 'commit'
  return 'statement'
}

/** An XA transaction's id as the log writes it in XA COMMIT and XA ROLLBACK: X'gtrid',X'bqual',formatID, hex in lower case. */
export function xaKey(formatId: number, gtrid: Uint8Array, bqual: Uint8Array): string {
  return `X'${Buffer.from(gtrid).toString('hex')}',X'${Buffer.from(bqual).toString('hex')}',${formatId}`
}

/** One part of an xid as a statement writes it: X'hex' (any case) or a quoted string (its bytes in utf8). */
const XID_PART = String.raw`(?:X'([0-9A-Fa-f]*)'|'((?:[^']|'')*)')`
const XA_ENDING = new RegExp(String.raw`^XA\s+(COMMIT|ROLLBACK)\s+${XID_PART}(?:\s*,\s*${XID_PART}(?:\s*,\s*(\d+))?)?\s*(ONE\s+PHASE)?\s*$`, 'i')

/**
 * What an XA COMMIT or XA ROLLBACK statement ends: the xid as xaKey writes it,
 * and whether it commits in one phase (then its rows are its own, not a
 * PREPARE's). Undefined for any other statement, or an xid in a form not read here.
 */
export function xaEnding(query: string): { kind: 'commit' | 'rollback'; key: string; onePhase: boolean } | undefined {
  const match = XA_ENDING.exec(query.trim())
  if (!match) return undefined
  const [, verb, gtridHex, gtridText, bqualHex, bqualText, formatId, onePhase] = match
  const bytes = (hex: string | undefined, text: string | undefined) =>
    hex !== undefined ? Buffer.from(hex, 'hex') : Buffer.from((text ?? '').replace(/''/g, "'"), 'utf8')
  return {
    kind: verb!.toUpperCase() === 'COMMIT' ? 'commit' : 'rollback',
    key: xaKey(formatId === undefined ? 1 : Number(formatId), bytes(gtridHex, gtridText), bytes(bqualHex, bqualText)),
    onePhase: onePhase !== undefined,
  }
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Why a statement in the log expires every earlier position, or undefined: a
 * statement (not rows) that names a watched table of our database (ALTER,
 * TRUNCATE, DROP, RENAME, CREATE, or DML logged as a statement under
 * binlog_format=MIXED), or drops or alters the database itself. Tables are
 * named bare (then `schema`, the session's database, must be ours) or
 * qualified with our database. Errs towards a reset: an expired token costs a
 * client a new sync, a missed change costs it a wrong copy.
 */
export function statementReset(query: string, schema: string, database: string, prefix: string): string | undefined {
  const text = query.replace(/\s+/g, ' ').trim()
  // Statements that change no row and no column a reader sees: a maintenance plugin's nightly ANALYZE must not expire every token.
  if (/^(SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO|XA (END|PREPARE)|FLUSH|GRANT|REVOKE|CREATE USER|DROP USER|ALTER USER|SET PASSWORD|ANALYZE|OPTIMIZE|CHECK|CHECKSUM)\b/i.test(text)) return undefined
  const names = `(^|[^A-Za-z0-9_$])`
  const mentionsDatabase = new RegExp(`${names}\`?${escapeRegExp(database)}\`?([^A-Za-z0-9_$]|$)`, 'i').test(text)
  if (mentionsDatabase && /^(DROP|ALTER|CREATE) (DATABASE|SCHEMA)\b/i.test(text)) return `the database ${database} was dropped, created or altered`
  const ours = schema.toLowerCase() === database.toLowerCase() || mentionsDatabase
  if (!ours) return undefined
  for (const table of Object.values(watchedTables(prefix))) {
    if (new RegExp(`${names}\`?${escapeRegExp(table)}\`?([^A-Za-z0-9_$]|$)`, 'i').test(text)) {
      return `a statement on ${table} outside row events: ${text.slice(0, 80)}`
    }
  }
  return undefined
}

export type ReaderErrorKind =
  /** The position is not in the server's log: purged, never written, another server's (1236). */
  | 'purged'
  /** Another replica connected with our server_id and the server dropped one of us (MariaDB 4052; MySQL 1236 with this text). */
  | 'duplicate-server-id'
  /** The account may not read the log. */
  | 'denied'
  /** The connection was lost or refused; reconnecting may help. */
  | 'lost'
  /** No event and no heartbeat for three heartbeat periods: the server is stopped or the network hangs. */
  | 'stalled'
  | 'other'

export class BinlogReaderError extends Error {
  constructor(readonly kind: ReaderErrorKind, message: string, readonly errno?: number) {
    super(message)
    this.name = 'BinlogReaderError'
  }
}

const LOST_CODES = new Set(['PROTOCOL_CONNECTION_LOST', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'ENETUNREACH', 'PROTOCOL_SEQUENCE_TIMEOUT'])
/** ER_CONNECTION_KILLED, ER_SERVER_SHUTDOWN, ER_QUERY_INTERRUPTED, ER_NORMAL_SHUTDOWN, ER_CON_COUNT_ERROR. */
const LOST_ERRNOS = new Set([1927, 1053, 1317, 1077, 1040])
/** ER_SPECIFIC_ACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR. */
const DENIED_ERRNOS = new Set([1227, 1045, 1044, 1142])

/** One of our kinds for a driver's or server's error, its message kept (it holds no credentials: mysql2 puts none in). */
export function classifyReaderError(error: unknown): BinlogReaderError {
  if (error instanceof BinlogReaderError) return error
  const { errno, code, message } = (error ?? {}) as { errno?: number; code?: string; message?: string }
  const text = message ?? String(error)
  // MariaDB sends 4052 (mysql2 names it by MySQL's 4052, ER_INVALID_MFA_PLUGIN_SPECIFIED); MySQL 1236 with this text.
  if (/same server_uuid\/server_id|same server_id/i.test(text) || errno === 4052) {
    return new BinlogReaderError('duplicate-server-id', `another replica reads the log with the same server id: ${text}`, errno)
  }
  if (errno === 1236) return new BinlogReaderError('purged', `the server cannot send the log from that position: ${text}`, errno)
  if (errno !== undefined && DENIED_ERRNOS.has(errno)) return new BinlogReaderError('denied', `the account may not read the binary log: ${text}`, errno)
  if ((code !== undefined && LOST_CODES.has(code)) || (errno !== undefined && LOST_ERRNOS.has(errno)) || /connection lost|closed the connection|connect ETIMEDOUT|read ECONNRESET/i.test(text)) {
    return new BinlogReaderError('lost', `the connection to the database was lost: ${text}`, errno)
  }
  return new BinlogReaderError('other', text, errno)
}

export interface BinlogStreamOptions {
  target: MysqlTarget
  serverId: number
  from: LogPosition
  prefix: string
  /** The server sends a heartbeat when idle this long; three periods without any event is a stall. */
  heartbeatMs: number
  onEvent(event: ReaderEvent): void
  /**
   * The XA transactions prepared and not yet ended, by xaKey, as read up to `from`: their rows
   * become visible at their XA COMMIT, where their bookings change. Updated as the stream reads.
   */
  preparedXa: Map<string, Transaction>
  /** Called once; the stream is closed by then, or closing. */
  onError(error: BinlogReaderError): void
}

export interface BinlogStream {
  /** Ends the stream; resolves when zongji has closed its connections. */
  stop(): Promise<void>
}

export interface Transaction {
  ids: Map<number, true>
  relevant: boolean
  reset?: string
}

/** Adds `ids` to `transaction`, each moved to the end: its ids stay ordered by their last change. */
function addBookingIds(transaction: Transaction, ids: Iterable<number>): void {
  for (const id of ids) { transaction.ids.delete(id); transaction.ids.set(id, true) }
}

/** One replica connection from `from`, turned into ReaderEvents; no reconnecting (followBinlog does that). */
export function openBinlogStream(options: BinlogStreamOptions): BinlogStream {
  const { target, prefix } = options
  const tables = watchedTables(prefix)
  // A server that does not answer the handshake (SIGSTOP) must fail the connection, not hold it.
  const zongji = new ZongJi({ ...target, connectTimeout: Math.max(1_000, options.heartbeatMs * 2) })
  let file = options.from.file
  let transaction: Transaction | undefined
  let closed = false
  let idleTimer: NodeJS.Timeout | undefined
  let stopped: Promise<void> | undefined

  const stop = () => {
    closed = true
    clearTimeout(idleTimer)
    stopped ??= new Promise<void>((resolve) => {
      const guard = setTimeout(resolve, 3_000)
      zongji.once('stopped', () => { clearTimeout(guard); resolve() })
      zongji.stop()
    })
    return stopped
  }
  const fail = (error: unknown) => {
    if (closed) return
    void stop()
    options.onError(classifyReaderError(error))
  }
  const armIdleTimer = () => {
    clearTimeout(idleTimer)
    idleTimer = setTimeout(() => fail(new BinlogReaderError('stalled', `no event and no heartbeat from the database for ${options.heartbeatMs * 3} ms`)), options.heartbeatMs * 3)
  }
  const emit = (event: ReaderEvent) => { if (!closed) options.onEvent(event) }
  const current = (): Transaction => (transaction ??= { ids: new Map(), relevant: false })
  const commit = (end: number) => {
    const done: Transaction = transaction ?? { ids: new Map(), relevant: false }
    transaction = undefined
    emit({ kind: 'commit', end: { file, position: end }, bookingIds: [...done.ids.keys()], relevant: done.relevant, ...(done.reset !== undefined && { reset: done.reset }) })
  }

  /** XA COMMIT makes a prepared transaction's changes this group's; XA ROLLBACK drops them. */
  const endPreparedXa = (kind: 'commit' | 'rollback', key: string, query: string) => {
    const prepared = options.preparedXa.get(key)
    options.preparedXa.delete(key)
    if (kind === 'rollback') return
    const open = current()
    if (prepared === undefined) {
      // Prepared before where this stream started reading: what it changed is not known here.
      open.reset ??= `an XA transaction prepared before the reader's start committed, its changes unknown: ${query.slice(0, 80)}`
      open.relevant = true
      return
    }
    addBookingIds(open, prepared.ids.keys())
    open.relevant ||= prepared.relevant
    if (prepared.reset !== undefined) open.reset ??= prepared.reset
  }

  const onBinlog = (event: AnyBinlogEvent) => {
    if (closed) return
    armIdleTimer()
    switch (event.getEventName()) {
      case 'rotate': {
        const rotate = event as Extract<AnyBinlogEvent, { getEventName(): 'rotate' }>
        file = rotate.binlogName
        transaction = undefined
        emit({ kind: 'position', at: { file, position: rotate.position } })
        return
      }
      case 'heartbeat':
        emit({ kind: 'alive', heartbeat: true })
        return
      case 'mariadbgtid': {
        // MariaDB replaces BEGIN by its GTID event; a standalone group (DDL) has no commit but its statement.
        const gtid = event as Extract<AnyBinlogEvent, { getEventName(): 'mariadbgtid' }>
        transaction = gtid.standalone ? undefined : { ids: new Map(), relevant: false }
        emit({ kind: 'alive', heartbeat: false })
        return
      }
      case 'tablemap':
        current()
        emit({ kind: 'alive', heartbeat: false })
        return
      case 'writerows':
      case 'deleterows':
      case 'updaterows': {
        const rows = event as Extract<AnyBinlogEvent, { getEventName(): 'writerows' | 'deleterows' | 'updaterows' }>
        const table = rows.tableMap[rows.tableId]
        if (table) {
          const change = rowsChange(prefix, table.tableName, images(rows.rows, event.getEventName() === 'updaterows'))
          const open = current()
          addBookingIds(open, change.bookingIds)
          open.relevant ||= change.relevant
        }
        emit({ kind: 'alive', heartbeat: false })
        return
      }
      case 'xid':
        commit(event.nextPosition)
        return
      case 'xaprepare': {
        // An XA transaction's rows end with its PREPARE, but no read sees them until its XA COMMIT,
        // a group of its own that may come much later (or XA ROLLBACK): they change there.
        const prepare = event as Extract<AnyBinlogEvent, { getEventName(): 'xaprepare' }>
        if (prepare.onePhase) { commit(prepare.nextPosition); return }
        options.preparedXa.set(xaKey(prepare.xidFormatId, prepare.xidGtrid, prepare.xidBqual), current())
        transaction = undefined
        emit({ kind: 'position', at: { file, position: prepare.nextPosition } })
        return
      }
      case 'query': {
        const query = event as Extract<AnyBinlogEvent, { getEventName(): 'query' }>
        const kind = queryKind(query.query)
        if (kind === 'begin') { current(); emit({ kind: 'alive', heartbeat: false }); return }
        if (kind === 'commit') {
          const ending = xaEnding(query.query)
          if (ending !== undefined && !ending.onePhase) endPreparedXa(ending.kind, ending.key, query.query)
          commit(query.nextPosition)
          return
        }
        const inTransaction = transaction !== undefined
        const reset = statementReset(query.query, query.schema, target.database, prefix)
        // A statement outside BEGIN … COMMIT (DDL) is a group of its own, ended by itself;
        // inside one (DML logged as a statement under MIXED) it marks the transaction.
        const open = current()
        if (reset !== undefined) {
          open.reset ??= reset
          open.relevant = true
        }
        if (!inTransaction) commit(query.nextPosition)
        else emit({ kind: 'alive', heartbeat: false })
        return
      }
      case 'gtid':
      case 'anonymousgtid':
      case 'previousgtids':
        // MySQL: a group's first event, not its end (a DDL group has no BEGIN).
        emit({ kind: 'alive', heartbeat: false })
        return
      default:
        // The format description, the GTID list, checkpoints, a stop event: between transactions, the reader is at their end.
        if (transaction === undefined && event.nextPosition > 0) emit({ kind: 'position', at: { file, position: event.nextPosition } })
        else emit({ kind: 'alive', heartbeat: false })
    }
  }

  zongji.on('binlog', onBinlog)
  zongji.on('error', fail)
  armIdleTimer()
  zongji.start({
    serverId: options.serverId,
    filename: options.from.file,
    position: options.from.position,
    // Only our database's watched tables are decoded: another's rows are skipped unread (and need no privilege).
    includeSchema: { [target.database]: Object.values(tables) },
  })
  // Before the dump command (zongji queues it after its own set-up queries on this connection):
  // the server then sends a heartbeat whenever it has had nothing to send for a period.
  zongji.connection?.query(`SET @master_heartbeat_period = ${Math.round(options.heartbeatMs * 1e6)}`, (error: unknown) => { if (error) fail(error) })
  return { stop }
}

export interface FollowerOptions {
  target: MysqlTarget
  serverId: number
  prefix: string
  heartbeatMs: number
  /** A reader displaced by another with its server id within this time of its first connection gives way (default 10 s). */
  newcomerMs?: number
  log: ReaderLog
  /** The server's current position, where following starts again when the last one is gone (purged). */
  serverPosition(): Promise<LogPosition>
  /** Called for every event, in order, and synchronously for the follower's own turns (below). */
  onEvent(event: FollowerEvent): void
}

export type FollowerEvent =
  | ReaderEvent
  /** Reading starts again at `from`, before what was read: what came after `from` will come again. */
  | { kind: 'rewinding'; from: LogPosition }
  /** The rewind failed (`from` is purged); reading goes on from `resumeAt`, as before the rewind. */
  | { kind: 'rewind-failed'; from: LogPosition; resumeAt: LogPosition; error: BinlogReaderError }
  /** The last position was lost (purged while away); reading goes on from `at`, what lay between is unknown. */
  | { kind: 'gap'; at: LogPosition; reason: string }

export type RewindResult = { ok: true } | { ok: false; error: BinlogReaderError }

export interface BinlogFollower {
  connected(): boolean
  problem(): string | undefined
  /** It gave up for good (another reader holds its server id): waiting on it is useless. */
  failed(): boolean
  /** Reads again from `from`. Resolves once the server sends from there, or with the error that refused it (the follower then goes on as before). */
  rewind(from: LogPosition): Promise<RewindResult>
  stop(): Promise<void>
}

/** Reconnecting waits 250 ms, doubling, at most this long. */
const MAX_BACKOFF_MS = 5_000
const FIRST_BACKOFF_MS = 250

/**
 * One replica stream from `from`, kept up: on a lost connection or a stall, it
 * connects again from the last transaction's end, waiting 250 ms doubling to 5 s.
 * A second reader with the same server id displaces the first (the server keeps
 * the newest); the first then connects again at once and the newcomer, displaced
 * in turn, gives up with a clear problem, so one reader per server id goes on.
 */
export function followBinlog(from: LogPosition, options: FollowerOptions): BinlogFollower {
  const { log } = options
  const newcomerMs = options.newcomerMs ?? 10_000
  let position = from
  /** Prepared XA transactions as read up to `position` (openBinlogStream's preparedXa). */
  let preparedXa = new Map<string, Transaction>()
  let stream: BinlogStream | undefined
  let connected = false
  let problem: string | undefined
  let stopped = false
  let givenUp = false
  let backoffMs = FIRST_BACKOFF_MS
  let retryTimer: NodeJS.Timeout | undefined
  let firstConnectedAt: number | undefined
  /** When another reader with our server id took the stream, within the last minute. */
  let displaced: number[] = []
  let rewinding: { from: LogPosition; resumeAt: LogPosition; resumeXa: Map<string, Transaction>; settle: (result: RewindResult) => void } | undefined

  /** The server sends from the rewind's start: confirmed by more than its opening rotate (a bad offset fails just after it). */
  const confirmsRewind = (event: ReaderEvent, start: LogPosition) =>
    event.kind === 'commit' || (event.kind === 'position' && comparePositions(event.at, start) > 0) || (event.kind === 'alive' && event.heartbeat)

  /** Moves on at each rewind: an older stream's failure, handled late, must not open a second stream. */
  let epoch = 0

  const open = () => {
    if (stopped || givenUp || stream !== undefined) return
    const opened: BinlogStream = openBinlogStream({
      target: options.target, serverId: options.serverId, from: position, prefix: options.prefix, heartbeatMs: options.heartbeatMs, preparedXa,
      onEvent: (event) => {
        if (stream !== opened) return
        if (!connected) {
          connected = true
          problem = undefined
          backoffMs = FIRST_BACKOFF_MS
          firstConnectedAt ??= Date.now()
          log.info({ file: position.file, position: position.position, serverId: options.serverId }, 'reading the binary log')
        }
        if (event.kind === 'commit') position = event.end
        if (event.kind === 'position') position = event.at
        if (rewinding && confirmsRewind(event, rewinding.from)) {
          const done = rewinding
          rewinding = undefined
          done.settle({ ok: true })
        }
        options.onEvent(event)
      },
      onError: (error) => { if (stream === opened) void onStreamError(error) },
    })
    stream = opened
  }

  const retry = (delayMs: number) => {
    clearTimeout(retryTimer)
    retryTimer = setTimeout(open, delayMs)
  }
  const retryWithBackoff = () => {
    retry(backoffMs)
    backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS)
  }

  const onStreamError = async (error: BinlogReaderError) => {
    connected = false
    problem = error.message
    const old = stream
    stream = undefined
    const started = epoch
    await old?.stop()
    if (stopped || started !== epoch) return
    if (error.kind === 'purged' && rewinding) {
      const failed = rewinding
      rewinding = undefined
      position = failed.resumeAt
      preparedXa = failed.resumeXa
      log.warn({ file: failed.from.file, position: failed.from.position, reason: error.message }, 'a rewind of the binary log was refused; reading on from where it was')
      options.onEvent({ kind: 'rewind-failed', from: failed.from, resumeAt: failed.resumeAt, error })
      failed.settle({ ok: false, error })
      problem = undefined
      retry(0)
      return
    }
    if (error.kind === 'purged') {
      // Our own last position is gone (RESET MASTER, a purge while we were away): go on from the server's, and say that what lay between is unknown.
      try {
        const at = await options.serverPosition()
        log.warn({ file: position.file, position: position.position, reason: error.message }, 'the binary log no longer holds the reader\'s position; reading on from the server\'s current one')
        position = at
        preparedXa = new Map()
        options.onEvent({ kind: 'gap', at, reason: error.message })
      } catch (cause) {
        problem = `${error.message}; and the server's position could not be read: ${(cause as Error).message}`
      }
      retryWithBackoff()
      return
    }
    if (error.kind === 'duplicate-server-id') {
      // Two established readers would take the stream from each other for ever: the third time in a minute, this one gives way.
      const now = Date.now()
      displaced = [...displaced.filter((at) => now - at < 60_000), now]
      if (firstConnectedAt === undefined || now - firstConnectedAt < newcomerMs || displaced.length >= 3) {
        givenUp = true
        problem = `another reader uses server id ${options.serverId} (BINLOG_SERVER_ID) on this database server: give each instance its own`
        log.warn({ serverId: options.serverId, errno: error.errno, reason: error.message }, problem)
        rewinding?.settle({ ok: false, error })
        rewinding = undefined
        return
      }
      log.warn({ serverId: options.serverId, errno: error.errno }, 'a newer reader with this server id took the stream; taking it back')
      retry(FIRST_BACKOFF_MS)
      return
    }
    log.warn({ kind: error.kind, errno: error.errno, reason: error.message, retryInMs: backoffMs }, 'the binary log stream failed; connecting again from the last transaction\'s end')
    retryWithBackoff()
  }

  open()
  return {
    connected: () => connected,
    problem: () => problem,
    failed: () => givenUp,
    rewind: (start) => {
      if (stopped || givenUp) return Promise.resolve({ ok: false, error: new BinlogReaderError('other', problem ?? 'the reader is stopped') })
      const previous = rewinding
      const resumeAt = previous ? previous.resumeAt : position
      const resumeXa = previous ? previous.resumeXa : preparedXa
      previous?.settle({ ok: false, error: new BinlogReaderError('other', 'another rewind took its place') })
      return new Promise<RewindResult>((resolve) => {
        rewinding = { from: start, resumeAt, resumeXa, settle: resolve }
        epoch += 1
        const old = stream
        stream = undefined
        connected = false
        position = start
        // What was prepared before `start` is not known from there: an XA COMMIT of it expires what lies before.
        preparedXa = new Map()
        clearTimeout(retryTimer)
        options.onEvent({ kind: 'rewinding', from: start })
        void (async () => {
          await old?.stop()
          if (!stopped && stream === undefined) open()
        })()
      })
    },
    stop: async () => {
      stopped = true
      clearTimeout(retryTimer)
      connected = false
      rewinding?.settle({ ok: false, error: new BinlogReaderError('other', 'the reader stopped') })
      rewinding = undefined
      const old = stream
      stream = undefined
      await old?.stop()
    },
  }
}
