// Sends a `GET slots/` answer as JSON or CSV (API.md, "GET slots/", "CSV"):
// its headers, then nothing (HEAD), the whole body, or the body streamed.
import { createHash } from 'node:crypto'
import type { Request, Response } from 'express'
import type { SlotsAnswer } from '../domain/slots.ts'
import type { SlotsBody } from './slots-body.ts'
import { sendWhole, startIterating, streamBody } from './stream-body.ts'
import { pagingLinks } from './paging.ts'
import { addVary } from './negotiate.ts'
import { addRowsSent } from './response-locals.ts'
import { cutWholeAnswerWhenClientStopsReading } from './cut-answer.ts'
import { sendNotModifiedIfHeld, setTagHeaders } from './conditional.ts'
import { weakTag } from './entity-tag.ts'
import type { AnswerHolding } from './held-answer.ts'

export interface SlotsResponse {
  body: SlotsBody
  csv: boolean
  /** What besides the bookings shapes the body, for the entity tag (API.md, "Conditional requests"). */
  context: readonly unknown[]
  sendTimeoutMs: number
  /** Where a streamed body's unread bytes are held, so the snapshot ends when its rows are out (held-answer.ts). */
  holding?: AnswerHolding | undefined
}

export async function sendSlotsAnswer(req: Request, res: Response, answer: SlotsAnswer, { body: slotsBody, csv, context, sendTimeoutMs, holding }: SlotsResponse): Promise<void> {
  const head = req.method === 'HEAD'
  // A narrow report is read whole already; any other answer is read as it is
  // sent, its first chunk before the status line: a query that fails at once still gets its own status code.
  const whole = head && answer.tagFromContent !== true ? undefined : slotsBody.whole(answer)
  const tag = slotsTag(context, answer, whole)
  if (tag !== undefined && sendNotModifiedIfHeld(req, res, tag)) return
  if (tag !== undefined) setTagHeaders(res, tag)
  const body = head || whole ? undefined : await startIterating(slotsBody.chunks(answer, (rows) => addRowsSent(res, rows)))
  res.setHeader('X-WP-Total', String(answer.total ?? await answer.count()))
  if (answer.paging) {
    res.setHeader('X-WP-TotalPages', String(answer.paging.totalPages))
    const link = pagingLinks(req, answer.paging.page, answer.paging.totalPages)
    if (link) res.setHeader('Link', link)
  }
  addVary(res, 'Accept')
  if (csv) {
    res.setHeader('Content-Type', 'text/csv; charset=utf-8')
    res.setHeader('Content-Disposition', 'attachment; filename="bookings.csv"')
  } else {
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
  }
  if (head) {
    res.end()
    return
  }
  if (whole) {
    addRowsSent(res, answer.total!)
    sendWhole(res, whole)
    cutWholeAnswerWhenClientStopsReading(res, sendTimeoutMs)
    return
  }
  await streamBody(res, body!, sendTimeoutMs, holding)
}

/**
 * The tag of a slots/ answer (or its feed): the database's digest read in its
 * snapshot, or, for an answer read whole in one statement, the SHA-256 of its
 * records or of its body's bytes (`whole`). Undefined: it goes untagged.
 */
export function slotsTag(context: readonly unknown[], answer: SlotsAnswer, whole: readonly Buffer[] | undefined): string | undefined {
  if (answer.tagParts) return weakTag([...context, 'digest', ...answer.tagParts])
  if (typeof answer.tagFromContent === 'string') return weakTag([...context, 'records', answer.tagFromContent])
  if (answer.tagFromContent === true && whole) {
    const hash = createHash('sha256')
    for (const chunk of whole) hash.update(chunk)
    return weakTag([...context, 'body', hash.digest('base64url')])
  }
  return undefined
}
