// Answers cut before their end: by the send timeout (a client that stopped
// reading) or by a database failure mid-stream. Each is counted by reason in
// GET /metrics (booking_calendar_answers_cut_total).
import type { Response } from 'express'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { ClientGoneError, type GoneSignal } from '../../db/bounded-pool.ts'
import { requestLogger } from './request-log.ts'
import { sendQueueReader, type SendQueueReader } from './send-queue.ts'

export type CutReason = 'database_lost' | 'database_timeout' | 'send_timeout' | 'hold_full'

/** Records why the answer was cut, for the metric (server/metrics.ts installs `countCut`). */
export function markCut(res: Response, reason: CutReason): void {
  res.locals.cutReason = reason
  ;(res.locals.countCut as ((reason: CutReason) => void) | undefined)?.(reason)
}

/**
 * SEND_TIMEOUT_MS: a streamed answer whose client reads nothing for that long
 * while bytes wait for it is cut, which frees its database connection. A
 * client that reads at any pace keeps it from firing: each look (a tenth of
 * the timeout, at most a second apart) asks whether the kernel took any byte
 * since the last one, or whether nothing waits at all (a slow database is
 * QUERY_TIMEOUT_MS's to bound, not the client's fault).
 *
 * The kernel taking bytes is not enough: with the socket's buffer full (Linux
 * grows it to 4 MiB), the kernel wakes the writer only once a large part of
 * it is free (about 1.5 MB here), so a client reading a year's export at a
 * steady 20 KB/s let the kernel take bytes once a minute, and was cut after
 * 31.6 s. So when a look finds nothing taken, it asks the kernel for the
 * connection's send queue (send-queue.ts): bytes the client has not
 * acknowledged, which move as it reads and stop when it stops. Only then: a
 * client that keeps up costs no read of /proc. Where the kernel does not tell
 * (not Linux), what it takes is the only progress, as before.
 *
 * Not the socket's own inactivity timer (res.setTimeout): when it expires
 * with a write still pending that the kernel took part of since it last
 * looked, Node skips that expiry and starts it again, so a reader that stopped
 * was cut after twice SEND_TIMEOUT_MS.
 */
export function cutWhenClientStopsReading(res: Response, sendTimeoutMs: number): void {
  const socket = res.socket
  if (!socket) return
  const lookEveryMs = Math.max(20, Math.min(1_000, Math.floor(sendTimeoutMs / 10)))
  // Made at the first look that finds nothing taken: most answers never need it.
  let readSendQueue: SendQueueReader | undefined | null = null
  let taken = bytesTakenByKernel(socket)
  let lastProgressAt = Date.now()
  // The send queue at the last look, while the kernel has taken nothing since: undefined until a look asks.
  let sendQueue: number | undefined
  let watching = true
  const look = async () => {
    const now = Date.now()
    const takenNow = bytesTakenByKernel(socket)
    // Nothing waiting to be sent (the next rows are still on their way from the database) is no client's stall.
    if (takenNow !== taken || !bytesWaiting(socket)) {
      taken = takenNow
      lastProgressAt = now
      sendQueue = undefined
    } else {
      if (readSendQueue === null) readSendQueue = sendQueueReader(socket)
      const sendQueueNow = await readSendQueue?.()
      if (!watching) return
      // The first ask only sets where the queue stood: progress before it is the last take's.
      if (sendQueueNow !== undefined && sendQueue !== undefined && sendQueueNow !== sendQueue) lastProgressAt = now
      sendQueue = sendQueueNow
      if (now - lastProgressAt >= sendTimeoutMs) {
        markCut(res, 'send_timeout')
        if (res.req.baseLog) requestLogger(res.req).info({ sendTimeoutMs }, 'answer cut: the client read nothing for SEND_TIMEOUT_MS')
        res.destroy()
        return
      }
    }
    timer = setTimeout(lookAgain, Math.min(lookEveryMs, Math.max(1, lastProgressAt + sendTimeoutMs - Date.now())))
  }
  // The send queue's reader never rejects.
  const lookAgain = () => { void look() }
  let timer = setTimeout(lookAgain, lookEveryMs)
  // Every byte with the kernel (finish), or the connection gone: nothing left to watch.
  const stop = () => {
    watching = false
    clearTimeout(timer)
  }
  res.once('finish', stop)
  res.once('close', stop)
}

/**
 * SEND_TIMEOUT_MS for a whole answer (res.json, res.send, sendWhole), called
 * right after its end(). One the kernel took at once is left to the server's
 * keep-alive timeout, which watches the socket from there (Node 20 sets it on
 * `finish`); one it did not take is cut as a streamed answer is. A client that
 * read nothing of a two-year summary/ by day, service and status (34 MB of
 * JSON) held its connection and the body for as long as it stayed.
 */
export function cutWholeAnswerWhenClientStopsReading(res: Response, sendTimeoutMs: number): void {
  if (!res.writableFinished) cutWhenClientStopsReading(res, sendTimeoutMs)
}

/**
 * Bytes of the answer's socket that the kernel has taken: what Node handed
 * to libuv, less what libuv still queues (the handle's writeQueueSize, as
 * Node's own socket timer reads it). It moves only when the client reads.
 */
function bytesTakenByKernel(socket: Socket): number {
  const handed = (socket as unknown as { _bytesDispatched?: number })._bytesDispatched ?? socket.bytesWritten
  return handed - queuedInLibuv(socket)
}

/** Whether bytes of the answer wait for the client, in Node's buffer or libuv's queue. */
export function bytesWaiting(socket: Socket): boolean {
  return socket.writableLength > 0 || queuedInLibuv(socket) > 0
}

function queuedInLibuv(socket: Socket): number {
  return (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0
}

/** Each connection's pipelined responses still waiting for their turn (closeQueuedWithConnection). */
const queuedOnConnection = new WeakMap<Socket, Set<ServerResponse>>()

/**
 * A pipelined request's response waits for the answers before it on its
 * connection, with no socket of its own. Node 20 gives it no 'close' when the
 * client hangs up meanwhile, so a statement, a stream permit or a held answer
 * working for it would wait for good (one hung-up connection with two
 * exports pipelined held a permit until restart). The connection's close now
 * ends it as it ends the response in flight: destroyed, with 'close'.
 */
export function closeQueuedWithConnection(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket as Socket | null
  if (res.socket || !socket) return
  if (socket.destroyed) {
    // Gone before this request was handled: ended once its handler has begun.
    setImmediate(() => { if (!res.socket && !res.destroyed) endUnsent(res) })
    return
  }
  let queued = queuedOnConnection.get(socket)
  if (!queued) {
    const responses = new Set<ServerResponse>()
    queuedOnConnection.set(socket, responses)
    socket.once('close', () => {
      for (const waiting of responses) endUnsent(waiting)
      responses.clear()
    })
    queued = responses
  }
  const responses = queued
  responses.add(res)
  // Its turn came (Node's own 'close' takes over), or it ended.
  const leave = () => { responses.delete(res) }
  res.once('socket', leave)
  res.once('close', leave)
}

/** Ends a response that never had a socket, as Node ends one whose client hung up: destroyed, with 'close'. */
function endUnsent(res: ServerResponse): void {
  res.destroy()
  res.emit('close')
}

/**
 * Aborts when the client hangs up before its answer is done, so a query still
 * working for it (the first row of an export, say) is killed at once instead
 * of at QUERY_TIMEOUT_MS. The request's log line shows it as completed: false.
 */
export function signalClientGone(res: Response): GoneSignal {
  const signal = new ClientGoneSignal()
  const gone = () => {
    if (!res.writableFinished) signal.abort(new ClientGoneError('The client hung up before its answer was done.'))
  }
  // A response already ended for a client gone (closeQueuedWithConnection) has had its 'close'.
  if (res.destroyed) gone()
  res.once('close', gone)
  return signal
}

/**
 * A GoneSignal without AbortController: Node 20 makes each AbortSignal with
 * Object.setPrototypeOf, which costs what Express's did (http/app-server.ts):
 * one per request kept 6% of a plain node:http server's young generation
 * through each scavenge, against none without it (docs/performance.md).
 * Like an AbortSignal's, its listeners run once, when it aborts, and never after.
 */
export class ClientGoneSignal implements GoneSignal {
  aborted = false
  reason: Error | undefined = undefined
  #listeners: Array<() => void> = []

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.#listeners.push(listener)
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners.indexOf(listener)
    if (at >= 0) this.#listeners.splice(at, 1)
  }

  abort(reason: Error): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.#listeners
    this.#listeners = []
    for (const listener of listeners) listener()
  }
}
