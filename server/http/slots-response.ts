// Sends a `GET slots/` answer as JSON or CSV (API.md, "GET slots/", "CSV"):
// its headers, then nothing (HEAD), the whole body, or the body streamed.
import { createHash } from 'node:crypto'
import type { Request, Response } from 'express'
import { RecountNeeded, type AnswerSink, type SlotsAnswer } from '../domain/slots.ts'
import type { SlotsBody } from './slots-body.ts'
import { holdWholeBody, sendHeldWhole, sendWhole, startIterating, streamBody, streamHeldThenRest } from './stream-body.ts'
import { pagingLinks } from './paging.ts'
import { addLink } from './api-root-link.ts'
import { addVary } from './negotiate.ts'
import { addRowsSent } from './response-locals.ts'
import { cutWholeAnswerWhenClientStopsReading } from './cut-answer.ts'
import { ifNoneMatchOf, sendNotModifiedIfHeld, setTagHeaders } from './conditional.ts'
import { weakTag } from './entity-tag.ts'
import { AnswerHolding } from './held-answer.ts'
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
}

/** A body made from a streamed answer's rows as they are read (SlotsBody, or a feed's IcsBody), for sendRowTagged. */
export interface RowTaggedBody {
  /** Where rowsInto's rows go, after the RowTagger has hashed them. */
  readonly list: AnswerSink
  /** Whether `list` takes rows as the database's bytes (else parsed). */
  readonly takesBytes: boolean
  chunksFrom(answer: SlotsAnswer, rows: AsyncIterable<number>, onRows: (rows: number) => void): AsyncGenerator<Buffer>
}

export interface RowTaggedResponse {
  body: RowTaggedBody
  /** What besides the bookings shapes the body, for the entity tag. */
  context: readonly unknown[]
  sendTimeoutMs: number
  holding?: AnswerHolding | undefined
  /** Every header but the tag's: X-WP-Total (answer.total, or a count) and the content type. */
  setHeaders: () => Promise<void>
}

export async function sendSlotsAnswer(req: Request, res: Response, answer: SlotsAnswer, response: SlotsResponse): Promise<void> {
  const { body: slotsBody, csv, context, sendTimeoutMs, holding } = response
  if (answer.rowTagParts && answer.rowsInto) {
    return await sendRowTagged(req, res, answer, { body: slotsBody, context, sendTimeoutMs, holding, setHeaders: () => setSlotsHeaders(req, res, answer, csv) })
  }
  const head = req.method === 'HEAD'
  // A narrow report is read whole already; any other answer is read as it is
  // sent, its first chunk before the status line: a query that fails at once still gets its own status code.
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
  await streamBody(res, body!, sendTimeoutMs, holding)
}

/** The tag of a streamed answer tagged by its rows (SlotsAnswer.rowsDigest, or RowTagger's), beside what else shapes its body. */
export function rowTag(context: readonly unknown[], answer: SlotsAnswer, digest: RowsDigest): string {
  return weakTag([...context, 'rows', ...answer.rowTagParts!, digest.rows, digest.crcSum, digest.serviceNames])
}

/** A process that holds nothing: a tagged answer then goes untagged, streamed. */
const HOLDING_NOTHING = new AnswerHolding({ memoryBytes: 0, diskBytes: 0, dir: '/nonexistent' })

/**
 * A streamed answer tagged by its rows, read once, inside its snapshot and
 * its stream permit (decision 0028). With If-None-Match, or for HEAD, the
 * database first computes their digest, sending no row (decision 0034): a 304
 * has read them once and sent nothing. Else they are hashed as the body is
 * made, into a held answer (memory, then a file), sent whole with its ETag and
 * Content-Length once the rows are out; the permit goes then, whatever the
 * client's pace. Past the process's bounds the answer is streamed without a
 * tag, as one past ETAG_MAX_ROWS is.
 */
export async function sendRowTagged(req: Request, res: Response, answer: SlotsAnswer, { body, context, sendTimeoutMs, holding, setHeaders }: RowTaggedResponse): Promise<void> {
  const condition = ifNoneMatchOf(req)
  const head = req.method === 'HEAD'
  if ((condition !== undefined || head) && answer.rowsDigest) {
    const digest = await answer.rowsDigest()
    // Not counted first, and more rows than a tagged answer may have: it is no tagged answer.
    if (digest.rows > (answer.uncountedUpTo ?? Number.POSITIVE_INFINITY)) throw new RecountNeeded()
    const tag = rowTag(context, answer, digest)
    if (sendNotModifiedIfHeld(req, res, tag, condition)) return
    if (head) {
      setTagHeaders(res, tag)
      await setHeaders()
      res.end()
      return
    }
    // Not held by the client: the rows again, into the body, in the same snapshot (the same tag).
  }
  const tagger = new RowTagger(body.list, body.takesBytes)
  const rows = answer.uncountedUpTo === undefined ? answer.rowsInto!(tagger) : withinRows(answer.rowsInto!(tagger), tagger, answer.uncountedUpTo)
  const chunks = body.chunksFrom(answer, rows, (rows) => addRowsSent(res, rows))
  const { held, rest } = await holdWholeBody(chunks, holding ?? HOLDING_NOTHING)
  if (rest !== undefined && answer.uncountedUpTo !== undefined) {
    // Not counted first, and past the hold's bounds: without its total nothing can be sent.
    await held.discard()
    await rest.return(undefined)
    throw new RecountNeeded()
  }
  if (rest === undefined) setTagHeaders(res, rowTag(context, answer, tagger.digest()))
  await setHeaders()
  if (rest === undefined) sendHeldWhole(res, held, sendTimeoutMs)
  else await streamHeldThenRest(res, held, rest, sendTimeoutMs)
}

/** The batches of `rows`, until the tagger has seen more than `most` rows: then RecountNeeded. */
async function* withinRows(rows: AsyncIterable<number>, tagger: RowTagger, most: number): AsyncGenerator<number> {
  for await (const batch of rows) {
    if (tagger.rows > most) throw new RecountNeeded()
    yield batch
  }
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
