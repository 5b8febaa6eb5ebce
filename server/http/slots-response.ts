// Sends a `GET slots/` answer as JSON or CSV (API.md, "GET slots/", "CSV"):
// its headers, then nothing (HEAD), the whole body, or the body streamed.
import { createHash } from 'node:crypto'
import type { Request, Response } from 'express'
import type { AnswerSink, SendOutcome, SlotsAnswer } from '../domain/slots.ts'
import type { SlotsBody } from './slots-body.ts'
import { holdWholeBody, sendHeldWhole, sendWhole, startIterating, sendAsMade, streamHeldThenRest, type OthersWaiting } from './stream-body.ts'
import { pagingLinks } from './paging.ts'
import { addLink } from './api-root-link.ts'
import { addVary } from './negotiate.ts'
import { addRowsSent } from './response-locals.ts'
import { cutWholeAnswerWhenClientStopsReading } from './cut-answer.ts'
import { ifNoneMatchOf, sendNotModifiedIfHeld, setTagHeaders } from './conditional.ts'
import { weakTag } from './entity-tag.ts'
import { AnswerHolding } from './held-answer.ts'
import { giveBackChunk } from './chunk-pool.ts'
import { RowTagger } from './row-tagger.ts'
import type { RowsDigest } from '../../db/row-digest.ts'

export interface SlotsResponse {
  body: SlotsBody
  csv: boolean
  /** What besides the bookings shapes the body, for the entity tag (API.md, "Conditional requests"). */
  context: readonly unknown[]
  sendTimeoutMs: number
  /** Where a streamed body's unread bytes are held, so the snapshot ends when its rows are out (held-answer.ts). */
  holding?: AnswerHolding | undefined
  /** Whether other streamed answers wait for a permit (StreamGate.othersWaiting). */
  othersWaiting: OthersWaiting
}

/** A body made from a streamed answer's rows as they are read (SlotsBody, or a feed's IcsBody), for sendStreamedAnswer. */
export interface StreamedBody {
  /** Where rowsInto's rows go (after the RowTagger, when the answer is tagged). */
  readonly list: AnswerSink
  /** Whether `list` takes rows as the database's bytes (else parsed). */
  readonly takesBytes: boolean
  chunksFrom(answer: SlotsAnswer, rows: AsyncIterable<number>, onRows: (rows: number) => void): AsyncGenerator<Buffer>
}

export interface StreamedResponse {
  body: StreamedBody
  /** What besides the bookings shapes the body, for the entity tag. */
  context: readonly unknown[]
  sendTimeoutMs: number
  holding: AnswerHolding | undefined
  othersWaiting: OthersWaiting
  /** Every header but the tag's: X-WP-Total (answer.total, or a count) and the content type. */
  setHeaders: () => Promise<void>
}

export async function sendSlotsAnswer(req: Request, res: Response, answer: SlotsAnswer, response: SlotsResponse): Promise<SendOutcome> {
  const { body: slotsBody, csv, context, sendTimeoutMs, holding, othersWaiting } = response
  if (answer.rowsInto && !answer.written) {
    return await sendStreamedAnswer(req, res, answer, { body: slotsBody, context, sendTimeoutMs, holding, othersWaiting, setHeaders: () => setSlotsHeaders(req, res, answer, csv) })
  }
  const head = req.method === 'HEAD'
  // A narrow report read whole already, or records in memory (a page, a narrow report with _fields).
  const whole = head && answer.tagFromContent !== true ? undefined : slotsBody.whole(answer)
  const tag = slotsTag(context, answer, whole)
  if (tag !== undefined && sendNotModifiedIfHeld(req, res, tag)) return
  if (tag !== undefined) setTagHeaders(res, tag)
  const body = head || whole ? undefined : await startIterating(slotsBody.chunks(answer, (rows) => addRowsSent(res, rows)))
  await setSlotsHeaders(req, res, answer, csv)
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
  await sendAsMade(res, body!, sendTimeoutMs, holding, othersWaiting)
}

/** The tag of a streamed answer tagged by its rows (SlotsAnswer.rowsDigest, or RowTagger's), beside what else shapes its body. */
export function rowTag(context: readonly unknown[], answer: SlotsAnswer, digest: RowsDigest): string {
  return weakTag([...context, 'rows', ...answer.rowTagParts!, digest.rows, digest.crcSum, digest.serviceNames])
}

/** A process that holds nothing: an answer counted as read is then read again, counted first. */
const HOLDING_NOTHING = new AnswerHolding({ memoryBytes: 0, diskBytes: 0, dir: '/nonexistent' })

/**
 * A streamed answer (no per_page), inside its snapshot and its stream permit,
 * its rows read once (decisions 0028, 0034 and 0035):
 * - tagged, with If-None-Match or for HEAD: the database first computes the
 *   rows' digest, sending no row; a 304, or HEAD, has read them once and sent
 *   nothing. Past maxTaggedRows the answer goes untagged.
 * - tagged, or counted as read: its rows hashed (and counted) as the body is
 *   made, into a held answer (memory, then a file), sent whole with its tag
 *   and Content-Length once the rows are out; the permit goes then, whatever
 *   the client's pace.
 * - counted first and untagged: sent as it is made, through the hold (sendAsMade).
 * An answer the hold cannot take whole is sent as it is made, untagged, when
 * it was counted first; counted as read, its rows are read to their end,
 * counting, keeping nothing, and answerSlots reads them again (SendOutcome).
 */
export async function sendStreamedAnswer(req: Request, res: Response, answer: SlotsAnswer, response: StreamedResponse): Promise<SendOutcome> {
  const { body, context, sendTimeoutMs, holding, othersWaiting, setHeaders } = response
  const condition = ifNoneMatchOf(req)
  const head = req.method === 'HEAD'
  let tagged = answer.rowTagParts !== undefined && (answer.total ?? 0) <= answer.maxTaggedRows
  if (tagged && (condition !== undefined || head) && answer.rowsDigest) {
    // Counts the rows too (answer.total).
    const digest = await answer.rowsDigest()
    tagged = digest.rows <= answer.maxTaggedRows
    if (tagged) {
      const tag = rowTag(context, answer, digest)
      if (sendNotModifiedIfHeld(req, res, tag, condition)) return
      if (head) setTagHeaders(res, tag)
    }
    // Not held by the client: the rows again, into the body, in the same snapshot (the same tag).
  }
  if (head) {
    await setHeaders()
    res.end()
    return
  }
  const tagger = tagged ? new RowTagger(body.list, body.takesBytes) : undefined
  const rows = answer.rowsInto!(tagger ?? body.list)
  if (!tagged && answer.total !== undefined) {
    // Counted first and untagged: its first chunk before the status line (a query that fails at once gets its own status), then as it is made.
    const chunks = await startIterating(body.chunksFrom(answer, rows, (read) => addRowsSent(res, read)))
    await setHeaders()
    await sendAsMade(res, chunks, sendTimeoutMs, holding, othersWaiting)
    return
  }
  const held = (holding ?? HOLDING_NOTHING).open(giveBackChunk)
  const rest = await holdWholeBody(body.chunksFrom(answer, rows, () => {}), held)
  if (rest !== undefined && answer.total === undefined) {
    // Counted as read and not held whole: nothing was sent. Its rows are read to the end, counted, kept nowhere.
    await held.discard()
    tagger!.handOnNothing()
    for await (const chunk of rest) giveBackChunk(chunk)
    return { notHeld: true, rows: tagger!.rows }
  }
  addRowsSent(res, answer.total!)
  if (rest === undefined && tagger && tagger.rows <= answer.maxTaggedRows) setTagHeaders(res, rowTag(context, answer, tagger.digest()))
  await setHeaders()
  if (rest === undefined) sendHeldWhole(res, held, sendTimeoutMs)
  // Counted first, and more than the hold takes: untagged, what was held first, then the rest as it is made.
  else await streamHeldThenRest(res, held, rest, sendTimeoutMs, othersWaiting)
}

/** X-WP-Total (and the paging headers), Vary and the content type of a slots/ answer. */
async function setSlotsHeaders(req: Request, res: Response, answer: SlotsAnswer, csv: boolean): Promise<void> {
  res.setHeader('X-WP-Total', String(answer.total ?? await answer.count()))
  if (answer.paging) {
    res.setHeader('X-WP-TotalPages', String(answer.paging.totalPages))
    const link = pagingLinks(req, answer.paging.page, answer.paging.totalPages)
    if (link) addLink(res, link)
  }
  addVary(res, 'Accept')
  if (csv) {
    res.setHeader('Content-Type', 'text/csv; charset=utf-8')
    res.setHeader('Content-Disposition', 'attachment; filename="bookings.csv"')
  } else {
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
  }
}

/**
 * The tag of a slots/ answer (or its feed) read whole in one statement (a
 * narrow answer, a page): the SHA-256 of its records or of its body's bytes
 * (`whole`). Undefined: it goes untagged, or is tagged by its rows (rowTag).
 */
export function slotsTag(context: readonly unknown[], answer: SlotsAnswer, whole: readonly Buffer[] | undefined): string | undefined {
  if (typeof answer.tagFromContent === 'string') return weakTag([...context, 'records', answer.tagFromContent])
  if (answer.tagFromContent === true && whole) {
    const hash = createHash('sha256')
    for (const chunk of whole) hash.update(chunk)
    return weakTag([...context, 'body', hash.digest('base64url')])
  }
  return undefined
}
