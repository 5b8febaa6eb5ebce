// DB_STREAM_CONNECTIONS for the whole service under WORKERS > 1 (API.md,
// "Under load"): the primary holds the one line (db/fair-queue.ts) and hands
// out the permits; each worker asks for one over node:cluster's IPC channel
// before its streamed answer takes a connection. A worker that dies gives back
// whatever it held or waited for.
import type { Worker } from 'node:cluster'
import { FairQueue, type Entrant, type FairQueueOptions, type RefusalReason, type Ticket } from '../db/fair-queue.ts'
import { gateOver, type StreamGate } from '../db/stream-gate.ts'

const PERMIT = 'booking-calendar-api:permit'

type PermitMessage =
  | { type: typeof PERMIT; act: 'enter'; id: number; caller: string }
  | { type: typeof PERMIT; act: 'leave'; id: number }
  | { type: typeof PERMIT; act: 'granted'; id: number }
  | { type: typeof PERMIT; act: 'refused'; id: number; reason: RefusalReason; retryAfterSeconds: number }

/** A worker whose primary has not answered this long past DB_QUEUE_TIMEOUT_MS gives up waiting on its own. */
const PRIMARY_SILENCE_MARGIN_MS = 5_000

/** In the primary: the service's one line, served to each worker attached. */
export function servePermits(options: FairQueueOptions): { attach(worker: Worker): void; queue: FairQueue } {
  const queue = new FairQueue(options)
  const attach = (worker: Worker) => {
    const tickets = new Map<number, Ticket>()
    const tell = (message: PermitMessage) => {
      if (worker.isConnected()) worker.send(message, (error: Error | null) => { if (error) { /* the worker is gone; its exit gives all back */ } })
    }
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
        const ticket = queue.enter(message.caller, entrant)
        // Refused at once (a full line): there is nothing to give back.
        if (!refused) tickets.set(id, ticket)
      } else if (message.act === 'leave') {
        tickets.get(message.id)?.leave()
        tickets.delete(message.id)
      }
    })
    worker.once('exit', () => {
      for (const ticket of tickets.values()) ticket.leave()
      tickets.clear()
    })
  }
  return { attach, queue }
}

/** In a worker: the gate whose permits the primary hands out. */
export function createClusterGate(timeoutMs: number): StreamGate {
  let lastId = 0
  const pending = new Map<number, { entrant: Entrant; timer: ReturnType<typeof setTimeout> }>()
  const send = (message: PermitMessage) => {
    if (process.connected) process.send!(message, undefined, {}, () => { /* the primary is gone: the worker ends with it */ })
  }
  process.on('message', (message: PermitMessage) => {
    if (message?.type !== PERMIT || (message.act !== 'granted' && message.act !== 'refused')) return
    const waiting = pending.get(message.id)
    if (!waiting) return
    pending.delete(message.id)
    clearTimeout(waiting.timer)
    if (message.act === 'granted') waiting.entrant.granted()
    else waiting.entrant.refused({ reason: message.reason, retryAfterSeconds: message.retryAfterSeconds })
  })
  const enterLine = (caller: string, entrant: Entrant): Ticket => {
    const id = ++lastId
    const timer = setTimeout(() => {
      if (!pending.delete(id)) return
      send({ type: PERMIT, act: 'leave', id })
      entrant.refused({ reason: 'waited_too_long', retryAfterSeconds: Math.ceil(PRIMARY_SILENCE_MARGIN_MS / 1000) })
    }, timeoutMs + PRIMARY_SILENCE_MARGIN_MS)
    timer.unref()
    pending.set(id, { entrant, timer })
    send({ type: PERMIT, act: 'enter', id, caller })
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
  return gateOver(enterLine, timeoutMs)
}
