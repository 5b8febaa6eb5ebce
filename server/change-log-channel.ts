// changes/'s source under WORKERS > 1: one reader of the database's log per
// instance (API.md, "GET changes/": each instance has its own
// BINLOG_SERVER_ID), so the primary chooses the source and runs the reader,
// and each worker asks it over node:cluster's IPC channel. The primary also
// tells every worker the source's status each second, for /readyz and /metrics.
import type { Worker } from 'node:cluster'
import { parentLink, sendToPrimary, sendToWorker, type PrimaryLink } from './ipc.ts'
import type { BookingChanges, BookingChangesSoFar, ChangeLog, ChangeLogState, LogPosition } from '../db/change-log.ts'
import type { ChangesFeed, ChangesStatus } from './change-source.ts'
import type { ChangesSource } from './domain/changes.ts'
import { RestError } from './errors.ts'

const ASKED = 'booking-calendar-api:changes-asked'
const ANSWERED = 'booking-calendar-api:changes-answered'
const STATUS = 'booking-calendar-api:changes-status'

type Call =
  | { call: 'source' }
  | { call: 'serverPosition' }
  | { call: 'bookingsChanged'; from: LogPosition; to: LogPosition; timeoutMs: number }
  | { call: 'bookingsChangedSoFar'; from: LogPosition }
  | { call: 'changedBetween'; from: LogPosition; to: LogPosition; timeoutMs: number }

type AskedMessage = { type: typeof ASKED; id: number } & Call
type AnsweredMessage =
  | { type: typeof ANSWERED; id: number; value: unknown }
  | { type: typeof ANSWERED; id: number; refused: { status: number; code: 'rest_database_unavailable'; message: string; retryAfterSeconds?: number } }
interface StatusMessage { type: typeof STATUS; status: ChangesStatus }

/** In the primary: answer each attached worker's calls on `feed`, and tell it the status every `everyMs`. */
export function serveChangeLog(feed: ChangesFeed, everyMs = 1000): { attach(worker: Worker): void; stop(): void } {
  const workers = new Set<Worker>()
  const tellStatus = () => {
    const message: StatusMessage = { type: STATUS, status: feed.status() }
    for (const worker of workers) sendToWorker(worker, message)
  }
  const timer = setInterval(tellStatus, everyMs)
  timer.unref()
  const answer = async (message: AskedMessage): Promise<unknown> => {
    const source = await feed.source()
    if (message.call === 'source') return source.kind
    if (source.kind !== 'log') throw new Error('the source is not the log')
    if (message.call === 'serverPosition') return await source.log.serverPosition()
    if (message.call === 'bookingsChanged') return await source.log.bookingsChanged(message.from, message.to, message.timeoutMs)
    if (message.call === 'bookingsChangedSoFar') return await source.log.bookingsChangedSoFar(message.from)
    return await source.log.changedBetween(message.from, message.to, message.timeoutMs)
  }
  return {
    attach(worker) {
      workers.add(worker)
      worker.on('exit', () => workers.delete(worker))
      sendToWorker(worker, { type: STATUS, status: feed.status() } satisfies StatusMessage)
      worker.on('message', (message: AskedMessage) => {
        if (message?.type !== ASKED) return
        answer(message).then(
          (value) => sendToWorker(worker, { type: ANSWERED, id: message.id, value } satisfies AnsweredMessage),
          (error: unknown) => {
            const known = error instanceof RestError && error.status === 503 ? error : undefined
            sendToWorker(worker, {
              type: ANSWERED, id: message.id,
              refused: {
                status: 503, code: 'rest_database_unavailable',
                message: known?.message ?? 'The database\'s log could not be read; try again in a moment.',
                retryAfterSeconds: known?.extra.retryAfterSeconds ?? 5,
              },
            } satisfies AnsweredMessage)
          },
        )
      })
    },
    stop: () => clearInterval(timer),
  }
}

/**
 * In a worker: the primary's source. Every call is bounded: its own time
 * (a call's timeoutMs) and `marginMs` for the channel; a primary that does not
 * answer in time is a 503, never a hang.
 */
export function askPrimaryForChanges(options: { marginMs?: number; primary?: PrimaryLink } = {}): ChangesFeed {
  const primary = options.primary ?? parentLink
  const marginMs = options.marginMs ?? 5_000
  let status: ChangesStatus = { source: 'deciding' }
  const waiting = new Map<number, (message: AnsweredMessage | undefined) => void>()
  let lastId = 0
  primary.on('message', (message) => {
    const received = message as AnsweredMessage | StatusMessage | undefined
    if (received?.type === STATUS) status = received.status
    else if (received?.type === ANSWERED) waiting.get(received.id)?.(received)
  })
  const ask = async <T>(call: Call, timeoutMs: number): Promise<T> => {
    const id = ++lastId
    const message = await new Promise<AnsweredMessage | undefined>((resolve) => {
      const timer = setTimeout(() => settle(undefined), timeoutMs + marginMs)
      const settle = (answer: AnsweredMessage | undefined) => {
        clearTimeout(timer)
        waiting.delete(id)
        resolve(answer)
      }
      waiting.set(id, settle)
      sendToPrimary(primary, { type: ASKED, id, ...call } satisfies AskedMessage, () => settle(undefined))
    })
    if (message === undefined) throw new RestError(503, 'rest_database_unavailable', 'The service\'s reader of the database\'s log did not answer in time; try again in a moment.', { retryAfterSeconds: 5 })
    if ('refused' in message) throw new RestError(503, message.refused.code, message.refused.message, { retryAfterSeconds: message.refused.retryAfterSeconds })
    return message.value as T
  }
  const log: ChangeLog = {
    state: (): ChangeLogState => status.reader ?? { connected: false },
    serverPosition: () => ask<LogPosition>({ call: 'serverPosition' }, 10_000),
    bookingsChanged: (from, to, timeoutMs) => ask<BookingChanges>({ call: 'bookingsChanged', from, to, timeoutMs }, timeoutMs),
    bookingsChangedSoFar: (from) => ask<BookingChangesSoFar>({ call: 'bookingsChangedSoFar', from }, 0),
    changedBetween: (from, to, timeoutMs) => ask<boolean | 'unknown'>({ call: 'changedBetween', from, to, timeoutMs }, timeoutMs),
    stop: async () => {},
  }
  const digest: ChangesSource = { kind: 'digest' }
  const fromLog: ChangesSource = { kind: 'log', log }
  return {
    async source() {
      // Decided once at start: the status the primary told says which, with no call.
      if (status.source === 'log') return fromLog
      if (status.source === 'digest') return digest
      const kind = await ask<'log' | 'digest'>({ call: 'source' }, 10_000)
      return kind === 'log' ? fromLog : digest
    },
    status: () => status,
    stop: async () => {},
  }
}
