// Who a streamed answer waits in line as (API.md, "Under load": fair between
// callers): a credential, or without one the client's address. Credentials are
// known only by a hash, never kept or logged (as the verdict cache keys them).
import { createHash } from 'node:crypto'
import type { Request, Response } from 'express'
import type { Admission } from '../../db/stream-gate.ts'
import type { AnswerSize } from '../../db/fair-queue.ts'
import type { ReportNiceness } from '../niceness.ts'
import { signalClientGone } from './cut-answer.ts'

/** The caller's key: `credential:<hash>` for an Authorization header or a feed's access_token, else `address:<ip>`. */
export function callerOf(req: Request): string {
  const authorization = req.get('authorization')
  const token = typeof req.query.access_token === 'string' ? req.query.access_token : undefined
  const credential = authorization ?? token
  if (credential) return `credential:${createHash('sha256').update(credential, 'utf8').digest('base64url').slice(0, 22)}`
  return `address:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`
}

/**
 * The request's admission: its caller and the signal of its client hanging up
 * (which also ends a wait in line). Kept in res.locals, where the request's log
 * line reads how long it waited (http/request-log.ts). With `niceness`, a
 * report steps its process back from its permit to its answer's end.
 */
export function admitRequest(req: Request, res: Response, niceness?: ReportNiceness): Admission {
  const admission: Admission = { caller: callerOf(req), signal: signalClientGone(res) }
  if (niceness !== undefined) admission.onGranted = (size) => stepBackWhileReporting(res, size, niceness)
  res.locals.admission = admission
  return admission
}

/**
 * A report (an answer wider than 'short') has its permit, or a summary/ of as
 * many days begins: its process runs at SERVICE_NICENESS until the answer is
 * sent, cut or hung up on, held bytes and slow clients included
 * (server/niceness.ts). A short answer leaves it as it is.
 */
export function stepBackWhileReporting(res: Response, size: AnswerSize, niceness: ReportNiceness): void {
  // Closed, or closing (destroyed: its 'close' is on its way, or was emitted by closeQueuedWithConnection).
  if (size === 'short' || res.closed || res.destroyed) return
  res.once('close', niceness.startReport())
}
