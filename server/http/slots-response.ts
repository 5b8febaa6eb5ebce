// Sends a `GET slots/` answer as JSON or CSV (API.md, "GET slots/", "CSV"):
// its headers, then nothing (HEAD), the whole body, or the body streamed.
import type { Request, Response } from 'express'
import type { SlotsAnswer } from '../domain/slots.ts'
import type { SlotsBody } from './slots-body.ts'
import { sendWhole, startIterating, streamBody } from './stream-body.ts'
import { pagingLinks } from './paging.ts'
import { addVary } from './negotiate.ts'
import { addRowsSent } from './response-locals.ts'
import { cutWholeAnswerWhenClientStopsReading } from './cut-answer.ts'
import { setTagHeaders } from './conditional.ts'
import { weakTag } from './entity-tag.ts'

export interface SlotsResponse {
  body: SlotsBody
  csv: boolean
  /** What besides the bookings shapes the body, for the entity tag (API.md, "Conditional requests"). */
  context: readonly unknown[]
  sendTimeoutMs: number
}

export async function sendSlotsAnswer(req: Request, res: Response, answer: SlotsAnswer, { body: slotsBody, csv, context, sendTimeoutMs }: SlotsResponse): Promise<void> {
  const head = req.method === 'HEAD'
  if (answer.tagParts) setTagHeaders(res, weakTag([...context, ...answer.tagParts]))
  // A narrow report is read whole already; any other answer is read as it is
  // sent, its first chunk before the status line: a query that fails at once still gets its own status code.
  const whole = head ? undefined : slotsBody.whole(answer)
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
  await streamBody(res, body!, sendTimeoutMs)
}
