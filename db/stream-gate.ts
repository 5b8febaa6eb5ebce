// The gate in front of the stream pool: a streamed answer takes a permit
// (DB_STREAM_CONNECTIONS for the whole service) before it takes a connection.
// The permits come from a FairQueue: in this process (WORKERS=1), or in the
// cluster's primary, asked over IPC (server/stream-permits.ts), so that the
// budget holds whatever WORKERS is.
import type { GoneSignal } from './gone-signal.ts'
import { FairQueue, type AnswerSize, type Entrant, type FairQueueOptions, type RefusalReason, type Ticket } from './fair-queue.ts'

/**
 * DB_STREAM_CONNECTIONS' default: two export statements at once, for the whole
 * service. The site's database is shared with the live site; two keep the
 * site's own pages fast while reports run, and more run no faster on a small
 * database server (docs/operations.md, "Under load"; docs/decisions).
 */
export const DEFAULT_STREAM_CONNECTIONS = 2
export const DEFAULT_QUEUE_TIMEOUT_MS = 30_000
export const DEFAULT_QUEUE_LENGTH = 100

/** Who asks, and the request's own signal: a client that hangs up leaves the line at once. */
export interface Admission {
  /** A credential's hash, or the client's address without one (callerOf, server/http/admission.ts). */
  caller: string
  signal?: GoneSignal
  /** The answer's expected size (answerSize, server/domain/slots.ts): a short one goes ahead of others in the line, wide ones share all permits but one (db/fair-queue.ts). */
  size?: AnswerSize
  /** Set by the gate: how long this request waited in line, for its log line. */
  waitedMs?: number
  /** Called by the gate once the permit is granted, with the answer's size (the request's end: http/admission.ts). */
  onGranted?: (size: AnswerSize) => void
}

/** The queue refused a place, or the wait ran out: 503 rest_database_unavailable with this Retry-After. */
export class DbQueueRefusedError extends Error {
  readonly code = 'BC_DB_QUEUE_REFUSED'
  constructor(readonly reason: RefusalReason, readonly retryAfterSeconds: number, message: string) {
    super(message)
  }
}

/** What this process sees of the line, for GET /metrics (summed over the workers by the primary). */
export interface GateStats {
  /** Requests of this process waiting now. */
  waiting: number
  /** Permits this process holds now. */
  holding: number
  refusals: Record<RefusalReason, number>
  /** Called with every wait's length in seconds, granted or refused. */
  onWait?: (seconds: number) => void
  /** Called with each refusal's reason. */
  onRefusal?: (reason: RefusalReason) => void
}

export interface StreamGate {
  /** Resolves with the function that gives the permit back (idempotent), once granted. */
  enter(admission: Admission): Promise<() => void>
  readonly stats: GateStats
  readonly timeoutMs: number
  /**
   * Whether any streamed answer of the service waits for a permit now: an
   * answer past the hold's bounds then stops keeping its own for a slow client
   * (server/http/stream-body.ts).
   */
  readonly othersWaiting: () => boolean
}

/** Joins a line: a FairQueue here, or the primary's (server/stream-permits.ts). */
export type EnterLine = (caller: string, entrant: Entrant, size: AnswerSize) => Ticket

export function createStatsOfGate(): GateStats {
  return { waiting: 0, holding: 0, refusals: { queue_full: 0, waited_too_long: 0 } }
}

/** A gate over a line: the promise, the client's signal, the stats. */
export function gateOver(enterLine: EnterLine, timeoutMs: number, othersWaiting: () => boolean, stats: GateStats = createStatsOfGate()): StreamGate {
  const enter = (admission: Admission) => new Promise<() => void>((resolve, reject) => {
    const { signal } = admission
    // An aborted signal's reason: a ClientGoneError for the service's own.
    if (signal?.aborted) return reject(signal.reason ?? new Error('The client went away.'))
    const started = Date.now()
    let waiting = true
    stats.waiting++
    const stopWaiting = () => {
      waiting = false
      stats.waiting--
      signal?.removeEventListener('abort', gone)
      admission.waitedMs = Date.now() - started
      stats.onWait?.(admission.waitedMs / 1000)
    }
    const gone = () => {
      if (!waiting) return
      stopWaiting()
      ticket.leave()
      reject(signal!.reason ?? new Error('The client went away.'))
    }
    const ticket = enterLine(admission.caller, {
      granted() {
        if (!waiting) return
        stopWaiting()
        stats.holding++
        admission.onGranted?.(admission.size ?? 'long')
        let held = true
        resolve(() => {
          if (!held) return
          held = false
          stats.holding--
          ticket.leave()
        })
      },
      refused({ reason, retryAfterSeconds }) {
        if (!waiting) return
        stopWaiting()
        stats.refusals[reason]++
        stats.onRefusal?.(reason)
        reject(new DbQueueRefusedError(reason, retryAfterSeconds, reason === 'queue_full'
          ? 'Too many reports are waiting for the database. Try again later.'
          : `No database connection for a report became free within ${timeoutMs} ms. Try again later.`))
      },
    }, admission.size ?? 'long')
    // enterLine may have answered at once (a free permit), before `ticket` was set.
    if (waiting) signal?.addEventListener('abort', gone, { once: true })
  })
  return { enter, stats, timeoutMs, othersWaiting }
}

/** One process's gate, its line held here (WORKERS=1). */
export function createLocalGate(options: FairQueueOptions): StreamGate {
  const queue = new FairQueue(options)
  return gateOver((caller, entrant, size) => queue.enter(caller, entrant, size), options.timeoutMs, () => queue.waiting > 0)
}
