// Answers the database's log vouches for (API.md, "Conditional requests" and
// "GET changes/"; docs/changes.md, "Revalidation"): in the log source only.
//
// - A tag is remembered with the log position taken before its answer was
//   read. A conditional request for the same question reads only the server's
//   position now; when the log shows nothing an answer is made of changed in
//   between, it is 304 without a row read. In doubt (not read that far in
//   time, or no longer remembered), the answer is read as always.
// - Identical questions share one read: a request that finds the same
//   question being answered, with no change in the log between that answer's
//   position and its own, is sent the same status, headers and bytes as they
//   are written. It joins only while the answer's first bytes are still kept
//   (SHARED_ANSWER_BYTES); a joiner that falls SHARED_LAG_BYTES behind what it
//   was given is cut, visibly, and never slows the answer it shares. An answer
//   kept whole stays for the next identical question (KEPT_ANSWERS_BYTES in
//   all), sent again while the log shows no change since it was read.
// The bytes kept are copies: the writer's chunks go back to its pool once
// its own socket has sent them (http/chunk-pool.ts).
//
// A question is its route, its query as given, the Accept and Origin it
// comes with (the Vary of every tagged answer), and whether the caller sees
// customer data. Only questions whose answer is made of the tables alone
// qualify: no feed (DTSTAMP, ranges from today), and a range given whole where
// a route's default range starts today.
import type { Request, RequestHandler, Response } from 'express'
import type { Deps } from '../deps.ts'
import type { ChangeLog, LogPosition } from '../../db/change-log.ts'
import { noneMatchHits } from './entity-tag.ts'
import { ifNoneMatchOf } from './conditional.ts'
import { sendAsMade } from './stream-body.ts'

/** How many bytes of an answer are kept for requests that join it; past them, none joins. */
export const SHARED_ANSWER_BYTES = 64 * 1024 * 1024
/** A joiner whose client lags this far behind the answer it shares (past what it was given at once when it joined) is cut. */
export const SHARED_LAG_BYTES = 16 * 1024 * 1024
/** Whole answers kept for the next identical question, in all; the oldest used goes first. */
export const KEPT_ANSWERS_BYTES = 64 * 1024 * 1024
const REMEMBERED_TAGS = 10_000

interface RememberedTag {
  tag: string
  /** Where the log stood before the answer was read; moved on by every 304 since. */
  position: LogPosition
  vary: string | undefined
  cacheControl: string | undefined
}

interface SharedAnswer {
  position: LogPosition
  status?: number
  headers?: Record<string, number | string | string[]>
  chunks: Buffer[]
  bytes: number
  /** Whether a request may still join: its first bytes are all kept. */
  open: boolean
  ended: boolean
  /** Each joiner, with the bytes it was given at once when it joined: its lag is counted past them. */
  joiners: Map<Response, number>
  /** The chunks it was kept with when it ended whole (KeptAnswer.chunks), to know it again. */
  keptChunks?: Buffer[]
}

/** An answer kept whole: what a shared answer was when it ended. */
interface KeptAnswer {
  position: LogPosition
  status: number
  headers: Record<string, number | string | string[]>
  chunks: Buffer[]
  bytes: number
}

/** Routes whose default range starts today: they qualify only with start and end given. */
const RANGE_FROM_TODAY = new Set(['disabled-time', 'summary', 'availability'])

export interface LogAnswers {
  /** The middleware for a tagged route (`route`: its name). */
  handler(route: string): RequestHandler
  /** For tests: tags remembered, answers shared. */
  counts(): { notModified: number; joined: number }
}

export function logAnswers(deps: Deps): LogAnswers {
  const remembered = new Map<string, RememberedTag>()
  const inFlight = new Map<string, SharedAnswer>()
  const kept = new Map<string, KeptAnswer>()
  let keptBytes = 0
  let notModified = 0
  let joined = 0
  const forget = (key: string) => {
    const answer = kept.get(key)
    if (answer === undefined) return
    kept.delete(key)
    keptBytes -= answer.bytes
  }
  const keep = (key: string, answer: KeptAnswer) => {
    forget(key)
    if (answer.bytes > KEPT_ANSWERS_BYTES) return
    while (keptBytes + answer.bytes > KEPT_ANSWERS_BYTES) forget(kept.keys().next().value!)
    kept.set(key, answer)
    keptBytes += answer.bytes
  }
  const waitMs = deps.config.changesLogWaitMs

  const handler = (route: string): RequestHandler => async (req, res, next) => {
    if (req.method !== 'GET' || !qualifies(route, req)) return next()
    const source = deps.changes.status().source === 'log' ? await deps.changes.source() : undefined
    if (source?.kind !== 'log') return next()
    const log = source.log
    const key = questionKey(route, req, deps.exposeCustomer(req))
    let now: LogPosition
    try {
      now = await log.serverPosition()
    } catch {
      return next()
    }
    const condition = ifNoneMatchOf(req)
    if (condition !== undefined) {
      const known = remembered.get(key)
      if (known && noneMatchHits(condition, known.tag) && await unchanged(log, known.position, now, waitMs)) {
        known.position = now
        // Most recently used last: the oldest question is the one forgotten.
        remembered.delete(key)
        remembered.set(key, known)
        notModified++
        res.locals.answeredByLog = 'not-modified'
        if (known.vary !== undefined) res.setHeader('Vary', known.vary)
        res.setHeader('ETag', known.tag)
        if (known.cacheControl !== undefined) res.setHeader('Cache-Control', known.cacheControl)
        res.status(304).end()
        return
      }
    } else {
      const answer = kept.get(key)
      if (answer !== undefined) {
        if (await unchanged(log, answer.position, now, waitMs) && kept.get(key) === answer) {
          answer.position = now
          // Most recently used last: the oldest is the one forgotten.
          kept.delete(key)
          kept.set(key, answer)
          res.locals.answeredByLog = 'kept'
          await sendKept(res, answer, deps.config.sendTimeoutMs)
          return
        }
        if (kept.get(key) === answer) forget(key)
      }
      const shared = inFlight.get(key)
      if (shared?.open && await unchanged(log, shared.position, now, waitMs)) {
        if (shared.open) {
          joined++
          res.locals.answeredByLog = 'shared'
          join(shared, res)
          return
        }
        // It ended while the log was asked: kept whole, it is the same answer.
        const ended = kept.get(key)
        if (ended !== undefined && ended.chunks === shared.keptChunks) {
          res.locals.answeredByLog = 'kept'
          await sendKept(res, ended, deps.config.sendTimeoutMs)
          return
        }
      }
    }
    rememberWhenSent(key, now, res)
    if (condition === undefined && !inFlight.has(key)) share(key, now, res)
    next()
  }

  const rememberWhenSent = (key: string, position: LogPosition, res: Response) => {
    res.once('finish', () => {
      const tag = res.getHeader('ETag')
      if ((res.statusCode !== 200 && res.statusCode !== 304) || typeof tag !== 'string') return
      remembered.delete(key)
      if (remembered.size >= REMEMBERED_TAGS) remembered.delete(remembered.keys().next().value!)
      const vary = res.getHeader('Vary')
      const cacheControl = res.getHeader('Cache-Control')
      remembered.set(key, {
        tag, position,
        vary: vary === undefined ? undefined : String(vary),
        cacheControl: cacheControl === undefined ? undefined : String(cacheControl),
      })
    })
  }

  /** Records what `res` writes, for requests that join it, and passes each write on to them. */
  const share = (key: string, position: LogPosition, res: Response) => {
    const shared: SharedAnswer = { position, chunks: [], bytes: 0, open: true, ended: false, joiners: new Map() }
    inFlight.set(key, shared)
    const done = () => {
      if (inFlight.get(key) === shared) inFlight.delete(key)
      shared.open = false
      shared.chunks = []
    }
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response
    const write = res.write.bind(res) as (...args: unknown[]) => boolean
    const end = res.end.bind(res) as (...args: unknown[]) => Response
    const headersOnce = () => {
      if (shared.headers !== undefined) return
      shared.status = res.statusCode
      const headers: Record<string, number | string | string[]> = {}
      for (const [name, value] of Object.entries(res.getHeaders())) if (value !== undefined && name !== 'x-request-id') headers[name] = value
      shared.headers = headers
      for (const joiner of shared.joiners.keys()) startJoiner(shared, joiner)
    }
    const record = (chunk: unknown, encoding: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return
      // A copy: the writer's buffer goes back to its pool once its own socket sent it.
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8') : Buffer.from(chunk as Uint8Array)
      if (bytes.length === 0) return
      headersOnce()
      if (shared.open) {
        shared.chunks.push(bytes)
        shared.bytes += bytes.length
        if (shared.bytes > SHARED_ANSWER_BYTES) {
          shared.open = false
          shared.chunks = []
        }
      }
      for (const [joiner, given] of shared.joiners) {
        joiner.write(bytes)
        if (joiner.writableLength > SHARED_LAG_BYTES + given) cutJoiner(shared, joiner)
      }
    }
    res.writeHead = ((...args: unknown[]) => {
      const result = writeHead(...args)
      headersOnce()
      return result
    }) as typeof res.writeHead
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      record(chunk, rest[0])
      return write(chunk, ...rest)
    }) as typeof res.write
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      record(chunk, rest[0])
      headersOnce()
      shared.ended = true
      for (const joiner of shared.joiners.keys()) joiner.end()
      shared.joiners.clear()
      // Kept whole for the next identical question while the log shows no change.
      if (shared.open && shared.status === 200 && shared.headers !== undefined) {
        shared.keptChunks = shared.chunks
        keep(key, { position: shared.position, status: shared.status, headers: shared.headers, chunks: shared.chunks, bytes: shared.bytes })
      }
      done()
      return end(chunk, ...rest)
    }) as typeof res.end
    res.once('close', () => {
      // The answer did not end (its client went, or it was cut): its joiners are cut as visibly.
      if (!shared.ended) for (const joiner of [...shared.joiners.keys()]) cutJoiner(shared, joiner)
      done()
    })
  }

  const join = (shared: SharedAnswer, res: Response) => {
    shared.joiners.set(res, shared.bytes)
    res.once('close', () => shared.joiners.delete(res))
    if (shared.headers !== undefined) startJoiner(shared, res)
  }

  return { handler, counts: () => ({ notModified, joined }) }
}

function startJoiner(shared: SharedAnswer, joiner: Response): void {
  if (joiner.headersSent) return
  for (const [name, value] of Object.entries(shared.headers!)) joiner.setHeader(name, value)
  joiner.statusCode = shared.status!
  joiner.flushHeaders()
  for (const chunk of shared.chunks) joiner.write(chunk)
}

/** A kept answer sent again: its status, headers and bytes, at the client's pace (a client that stops reading is cut, as any answer's). */
async function sendKept(res: Response, answer: KeptAnswer, sendTimeoutMs: number): Promise<void> {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value)
  res.status(answer.status)
  await sendAsMade(res, (async function* () { yield* answer.chunks })(), sendTimeoutMs)
}

function cutJoiner(shared: SharedAnswer, joiner: Response): void {
  shared.joiners.delete(joiner)
  joiner.destroy()
}

async function unchanged(log: ChangeLog, from: LogPosition, to: LogPosition, waitMs: number): Promise<boolean> {
  try {
    return await log.changedBetween(from, to, waitMs) === false
  } catch {
    return false
  }
}

function qualifies(route: string, req: Request): boolean {
  const query = req.query as Record<string, unknown>
  const format = typeof query.format === 'string' ? query.format.toLowerCase() : undefined
  if (format === 'ics' || /text\/calendar/i.test(req.get('accept') ?? '')) return false
  if (RANGE_FROM_TODAY.has(route) && (query.start === undefined || query.end === undefined)) return false
  return true
}

function questionKey(route: string, req: Request, exposeCustomer: boolean): string {
  const queryAt = req.originalUrl.indexOf('?')
  return JSON.stringify([route, queryAt < 0 ? '' : req.originalUrl.slice(queryAt + 1), req.get('accept') ?? '', req.get('origin') ?? '', exposeCustomer])
}
