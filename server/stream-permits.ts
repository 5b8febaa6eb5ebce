// DB_STREAM_CONNECTIONS for the whole service under WORKERS > 1 (API.md,
// "Under load"): the primary holds the one line (db/fair-queue.ts) and hands
// out the permits; each worker asks for one over node:cluster's IPC channel
// before its streamed answer takes a connection. A worker that dies gives back
// whatever it held or waited for.
import { FairQueue, type AnswerSize, type Entrant, type FairQueueOptions, type RefusalReason, type Ticket } from '../db/fair-queue.ts'
import { gateOver, type StreamGate } from '../db/stream-gate.ts'
import { parentLink, sendToPrimary, sendToWorker, type PrimaryLink, type WorkerLink } from './ipc.ts'

const PERMIT = 'booking-calendar-api:permit'

export type PermitMessage =
  | { type: typeof PERMIT; act: 'enter'; id: number; caller: string; size?: AnswerSize }
  | { type: typeof PERMIT; act: 'leave'; id: number }
  | { type: typeof PERMIT; act: 'granted'; id: number }
  | { type: typeof PERMIT; act: 'refused'; id: number; reason: RefusalReason; retryAfterSeconds: number }
  /** To every worker: whether anyone waits in the line now (StreamGate.othersWaiting). */
  | { type: typeof PERMIT; act: 'line'; waiting: boolean }

/** A worker whose primary has not answered this long past DB_QUEUE_TIMEOUT_MS gives up waiting on its own. */
export const PRIMARY_SILENCE_MARGIN_MS = 5_000

/** A worker as the primary's line sees it: node:cluster's Worker, or a test's fake. */
export interface PermitWorker extends WorkerLink {
  on(event: 'message', listener: (message: PermitMessage) => void): unknown
  once(event: 'exit', listener: () => void): unknown
}

/** A size as a worker sent it: one the primary does not know (a worker of another version) is 'long'. */
function answerSizeOf(size: unknown): AnswerSize {
  return size === 'short' || size === 'wide' ? size : 'long'
}

/** In the primary: the service's one line, served to each worker attached. */
export function servePermits(options: FairQueueOptions): { attach(worker: PermitWorker): void; queue: FairQueue } {
  const queue = new FairQueue(options)
  const workers = new Set<PermitWorker>()
  queue.watchLine((waiting) => {
    for (const worker of workers) sendToWorker(worker, { type: PERMIT, act: 'line', waiting })
  })
  const attach = (worker: PermitWorker) => {
    const tickets = new Map<number, Ticket>()
    workers.add(worker)
    // A worker gone before this reaches it: its exit gives back all it held.
    const tell = (message: PermitMessage) => sendToWorker(worker, message)
    worker.on('message', (message: PermitMessage) => {
      if (message?.type !== PERMIT) return
      if (message.act === 'enter') {
        const { id } = message
        let refused = false
        const entrant: Entrant = {
          granted: () => tell({ type: PERMIT, act: 'granted', id }),
          refused: (refusal) => {
            refused = true
            tickets.delete(id)
            tell({ type: PERMIT, act: 'refused', id, ...refusal })
          },
        }
        const ticket = queue.enter(message.caller, entrant, answerSizeOf(message.size))
        // Refused at once (a full line): there is nothing to give back.
        if (!refused) tickets.set(id, ticket)
      } else if (message.act === 'leave') {
        tickets.get(message.id)?.leave()
        tickets.delete(message.id)
      }
    })
    worker.once('exit', () => {
      workers.delete(worker)
      for (const ticket of tickets.values()) ticket.leave()
      tickets.clear()
    })
  }
  return { attach, queue }
}

/**
 * In a worker: the gate whose permits the primary hands out. A wait is bounded
 * here too: a primary silent for DB_QUEUE_TIMEOUT_MS plus `silenceMarginMs`
 * (gone, or its answer lost) is a refusal, 503 with Retry-After.
 */
export function createClusterGate(timeoutMs: number, primary: PrimaryLink = parentLink, silenceMarginMs = PRIMARY_SILENCE_MARGIN_MS): StreamGate {
  let lastId = 0
  const pending = new Map<number, { entrant: Entrant; timer: ReturnType<typeof setTimeout> }>()
  let lineWaiting = false
  // The primary gone: the wait ends at its bound, and the worker ends with its primary.
  const send = (message: PermitMessage) => sendToPrimary(primary, message)
  primary.on('message', (received) => {
    const message = received as PermitMessage | undefined
    if (message?.type === PERMIT && message.act === 'line') lineWaiting = message.waiting
    if (message?.type !== PERMIT || (message.act !== 'granted' && message.act !== 'refused')) return
    const waiting = pending.get(message.id)
    if (!waiting) return
    pending.delete(message.id)
    clearTimeout(waiting.timer)
    if (message.act === 'granted') waiting.entrant.granted()
    else waiting.entrant.refused({ reason: message.reason, retryAfterSeconds: message.retryAfterSeconds })
  })
  const enterLine = (caller: string, entrant: Entrant, size: AnswerSize): Ticket => {
    const id = ++lastId
    const timer = setTimeout(() => {
      if (!pending.delete(id)) return
      send({ type: PERMIT, act: 'leave', id })
      entrant.refused({ reason: 'waited_too_long', retryAfterSeconds: Math.max(1, Math.ceil(silenceMarginMs / 1000)) })
    }, timeoutMs + silenceMarginMs)
    timer.unref()
    pending.set(id, { entrant, timer })
    send({ type: PERMIT, act: 'enter', id, caller, size })
    return {
      // Leaving while still waiting, or giving the permit back: the primary tells the two apart.
      leave() {
        const waiting = pending.get(id)
        if (waiting) {
          clearTimeout(waiting.timer)
          pending.delete(id)
        }
        send({ type: PERMIT, act: 'leave', id })
      },
    }
  }
  return gateOver(enterLine, timeoutMs, () => lineWaiting)
}
