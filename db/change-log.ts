// What the changes/ feed's log source asks of the database's binary log
// (API.md, "GET changes/"; docs/decisions/0036). One reader per instance
// follows the log as a replica does and remembers, per transaction, which
// bookings it touched and whether it touched anything else an answer is made
// of. The route asks it through this interface, in the process that reads the
// log or over the cluster's channel (server/change-log-channel.ts).

/** A place in the binary log: a file and a byte offset in it, at a transaction's end. */
export interface LogPosition {
  file: string
  position: number
}

/** Orders two positions: by the file's sequence number (`mariadb-bin.000012`), then the offset. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  const fileOrder = fileSequence(a.file) - fileSequence(b.file)
  if (fileOrder !== 0) return fileOrder
  if (a.file !== b.file) return a.file < b.file ? -1 : 1
  return a.position - b.position
}

function fileSequence(file: string): number {
  const match = /\.(\d+)$/.exec(file)
  return match ? Number(match[1]) : 0
}

export type BookingChanges =
  /** The distinct booking ids changed after `from` up to `to`, each once, ordered by its last change. */
  | { kind: 'changes'; ids: number[] }
  /** `from` can no longer be read: purged, before a schema change of a plugin table, another server's. */
  | { kind: 'expired'; reason: string }
  /** The reader could not read that far in time: the caller answers 503 with Retry-After. */
  | { kind: 'late' }

/**
 * What the reader has read after `from` so far, asked without waiting: the ids
 * changed in (from, to], `to` where it has read to; 'not-now' when it has not
 * read to `from`, no longer remembers it, or stopped. The caller then asks
 * bookingsChanged, which waits, rewinds and says why.
 */
export type BookingChangesSoFar =
  | { kind: 'changes'; ids: number[]; to: LogPosition }
  | { kind: 'not-now' }

export interface ChangeLogState {
  /** Where the reader has read to, at a transaction's end; undefined before it has read anything. */
  position?: LogPosition
  /** Whether its replica connection is up now. */
  connected: boolean
  /** Why it is not, or its last failure, in a sentence for logs and /readyz. */
  problem?: string
}

export interface ChangeLog {
  state(): ChangeLogState
  /** The server's current position, by one statement that reads no table (SHOW MASTER STATUS). */
  serverPosition(): Promise<LogPosition>
  /** The booking ids changed in (from, to]; waits at most `timeoutMs` for the reader to read to `to`. */
  bookingsChanged(from: LogPosition, to: LogPosition, timeoutMs: number): Promise<BookingChanges>
  /** The booking ids changed after `from` up to where the reader has read now: never waits, never rewinds. */
  bookingsChangedSoFar(from: LogPosition): Promise<BookingChangesSoFar>
  /**
   * Whether anything an answer is made of changed in (from, to]: a booking, a
   * rule, a service's post, the site's time zone or start_of_week. 'unknown'
   * when the reader has not read to `to` within `timeoutMs` or no longer
   * remembers `from`: the caller then reads, never answers 304 on a guess.
   */
  changedBetween(from: LogPosition, to: LogPosition, timeoutMs: number): Promise<boolean | 'unknown'>
  stop(): Promise<void>
}
