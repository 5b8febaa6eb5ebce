// Graceful stop on SIGTERM (and Ctrl-C): stop accepting, let the requests in
// flight finish within SHUTDOWN_GRACE_MS, then answer 503 to those still
// waiting for their answer, cut what is left, close the pool, and let the
// process exit 0. A streamed million-row answer in flight ends whole when it
// fits in the grace period.
import { ServerResponse, type Server } from 'node:http'
import { Server as NetServer, type Socket } from 'node:net'
import type { Response } from 'express'
import type { Logger } from 'pino'
import { bytesWaiting } from './http/cut-answer.ts'
import { requestLinesWritten } from './http/request-log.ts'
import { RestError, sendRestError } from './errors.ts'

/** How long a connection accepted just before SIGTERM has to send its request before it counts as idle. */
const FRESH_CONNECTION_MS = 1_000
/** The most a stop waits for its 503s to requests not yet answered to be handed to their sockets. */
const ANSWERS_503_MS = 1_000
/**
 * The most a stop then waits for the log line of each request it cut, which
 * comes with its connection's close event: on a busy machine, once more than
 * a second after the cut (the line came after the worker's 'stopped').
 */
const REQUEST_LINES_MS = 3_000

const openSockets = new WeakMap<Server, Set<Socket>>()

/**
 * Keeps the server's open connections (main.ts calls it once), so that a stop
 * can answer the requests on them still unanswered, and sweep the idle ones.
 */
export function watchConnections(server: Server): void {
  const sockets = new Set<Socket>()
  openSockets.set(server, sockets)
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
}

/** What a request still waiting for its answer when the grace runs out is told (answerUnanswered). */
const STOPPING_ERROR = new RestError(503, 'rest_service_stopping',
  'The service was stopping and could not answer within its grace period. Try again shortly.', { retryAfterSeconds: 5 })

/**
 * When the grace runs out: a request whose answer has not begun (waiting on a
 * hung database or WordPress, say) gets STOPPING_ERROR, a 503 with
 * Retry-After, instead of a connection closed with no answer at all. An
 * answer already begun is cut with the rest: its status is gone. The
 * response is the socket's current one, which Node keeps on the socket
 * (`_httpMessage`, set by ServerResponse.assignSocket); a request queued
 * behind it on the same connection is cut. Its handler still runs: it finds
 * the headers sent, and the error middleware leaves such a response alone
 * (res.locals.answeredByStop). Resolves once those answers are handed to
 * their sockets, or after `ms`.
 */
function answerUnanswered(sockets: Set<Socket> | undefined, ms: number): Promise<number> {
  const answered: Promise<void>[] = []
  for (const socket of sockets ?? []) {
    const res = (socket as { _httpMessage?: unknown })._httpMessage
    if (!(res instanceof ServerResponse) || res.headersSent || res.destroyed || !('locals' in res)) continue
    const response = res as Response
    response.locals.answeredByStop = true
    answered.push(new Promise((resolve) => {
      response.once('finish', resolve)
      response.once('close', resolve)
    }))
    sendRestError(response, STOPPING_ERROR)
  }
  return allWithin(answered, ms).then(() => answered.length)
}

/** Resolves once every one of `events` has happened, or after `ms`, whichever comes first. */
function allWithin(events: Promise<unknown>[], ms: number): Promise<void> {
  if (events.length === 0) return Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  return Promise.race([Promise.all(events), new Promise((resolve) => { timer = setTimeout(resolve, ms) })])
    .then(() => clearTimeout(timer))
}

/**
 * server.closeIdleConnections(), unless bytes of an answer still wait for
 * their client on any connection. Node counts a connection as idle once its
 * answer has ended, though the kernel has not taken all of it: a whole answer
 * (res.json's 34 MB summary/, read at a client's pace) was destroyed a second
 * after SIGTERM, long before SHUTDOWN_GRACE_MS. Kept-alive connections between
 * requests are then closed by the next sweep without such bytes, or at the
 * end of the grace.
 */
function sweepIdleConnections(server: Server): void {
  for (const socket of openSockets.get(server) ?? []) if (bytesWaiting(socket)) return
  server.closeIdleConnections()
}

export async function shutDownGracefully(server: Server, options: { graceMs: number; log: Logger; closeDb: () => Promise<void> }): Promise<void> {
  const { graceMs, log } = options
  // Stops accepting. Not through http's close(), which also destroys at once
  // every connection without a request in progress: one accepted an instant
  // ago, whose request is still on its way, was reset with no answer.
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()))
  // Every answer from now on closes its connection (prepended: before any handler can send headers).
  server.prependListener('request', (_req, res) => res.setHeader('Connection', 'close'))
  // Keep-alive connections between requests hold the server open: close each
  // as soon as it is idle, once a fresh connection has had time to send its request.
  let idleSweep: NodeJS.Timeout | undefined
  const sweepStart = setTimeout(() => {
    sweepIdleConnections(server)
    idleSweep = setInterval(() => sweepIdleConnections(server), 100)
  }, FRESH_CONNECTION_MS)
  let graceTimer: NodeJS.Timeout | undefined
  const graceOver = new Promise<'grace over'>((resolve) => { graceTimer = setTimeout(() => resolve('grace over'), graceMs) })
  const outcome = await Promise.race([closed.then(() => 'finished' as const), graceOver])
  clearTimeout(sweepStart)
  clearInterval(idleSweep)
  clearTimeout(graceTimer)
  if (outcome === 'grace over') {
    const sockets = openSockets.get(server)
    const refused = await answerUnanswered(sockets, ANSWERS_503_MS)
    log.warn({ graceMs, answered503: refused }, 'requests still in flight when SHUTDOWN_GRACE_MS ran out: answering 503 to those not yet answered, cutting the rest')
    server.closeAllConnections()
    await closed
    // Each cut request's line before the worker's last: the server's own close comes before them.
    await requestLinesWritten(REQUEST_LINES_MS)
  }
  await options.closeDb()
  log.info('stopped')
}
