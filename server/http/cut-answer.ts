// Answers cut before their end: by the send timeout (a client that stopped
// reading) or by a database failure mid-stream. Each is counted by reason in
// GET /metrics (booking_calendar_answers_cut_total).
import type { Response } from 'express'
import { ClientGoneError, type GoneSignal } from '../../db/bounded-pool.ts'
import { requestLogger } from './request-log.ts'

export type CutReason = 'database_lost' | 'database_timeout' | 'send_timeout'

/** Records why the answer was cut, for the metric (server/metrics.ts installs `countCut`). */
export function markCut(res: Response, reason: CutReason): void {
  res.locals.cutReason = reason
  ;(res.locals.countCut as ((reason: CutReason) => void) | undefined)?.(reason)
}

/**
 * SEND_TIMEOUT_MS: a streamed answer whose client reads nothing for that long
 * is cut, which frees its database connection. The socket's own inactivity
 * timer measures it: while back-pressure holds our writes no byte moves, and a
 * client that reads at any pace keeps it from firing.
 */
export function cutWhenClientStopsReading(res: Response, sendTimeoutMs: number): void {
  res.setTimeout(sendTimeoutMs, () => {
    markCut(res, 'send_timeout')
    if (res.req.baseLog) requestLogger(res.req).info({ sendTimeoutMs }, 'answer cut: the client read nothing for SEND_TIMEOUT_MS')
    res.destroy()
  })
}

/**
 * Aborts when the client hangs up before its answer is done, so a query still
 * working for it (the first row of an export, say) is killed at once instead
 * of at QUERY_TIMEOUT_MS. The request's log line shows it as completed: false.
 */
export function signalClientGone(res: Response): GoneSignal {
  const signal = new ClientGoneSignal()
  res.once('close', () => {
    if (!res.writableFinished) signal.abort(new ClientGoneError('The client hung up before its answer was done.'))
  })
  return signal
}

/**
 * A GoneSignal without AbortController: Node 20 makes each AbortSignal with
 * Object.setPrototypeOf, which costs what Express's did (http/app-server.ts):
 * one per request kept 6% of a plain node:http server's young generation
 * through each scavenge, against none without it (scripts/bench/README.md, tenth pass).
 * Like an AbortSignal's, its listeners run once, when it aborts, and never after.
 */
export class ClientGoneSignal implements GoneSignal {
  aborted = false
  reason: unknown = undefined
  #listeners: Array<() => void> = []

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.#listeners.push(listener)
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners.indexOf(listener)
    if (at >= 0) this.#listeners.splice(at, 1)
  }

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.#listeners
    this.#listeners = []
    for (const listener of listeners) listener()
  }
}
