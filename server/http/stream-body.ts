// Writes a body made of UTF-8 chunks: a small one at once, a long one chunk by
// chunk, where back-pressure from the socket reaches the database cursor, and a
// client that hangs up ends the generator, which releases the connection.
import type { Response } from 'express'
import { cutWhenClientStopsReading, markCut } from './cut-answer.ts'
import type { AnswerHolding, HeldAnswer } from './held-answer.ts'
import { requestLogger } from './request-log.ts'
import { CHUNK_BYTES, chunkPool, giveBackChunk } from './chunk-pool.ts'

/** A body up to this size is sent at once: a typical report, a page, a narrow answer of up to a thousand bookings. */
const SMALL_BODY_BYTES = 512 * 1024

/**
 * Whether other streamed answers wait for a stream permit now
 * (StreamGate.othersWaiting): an answer whose client is slower than its
 * database, past the hold's bounds, then lets its permit go.
 */
export type OthersWaiting = () => boolean

/**
 * How long an answer past the hold's bounds may wait for its client to take
 * what it holds while other answers wait for a permit: a client that reads at
 * the network's pace takes a few chunks in far less; one slower keeps no
 * permit from the others, and its answer is cut visibly (API.md, "Under load").
 */
export const SLOW_CLIENT_GRACE_MS = 2_000

/**
 * A body sent as it is made (not held whole first): a small one at once, with
 * its Content-Length; a long one through the hold, or written as the client reads.
 * Every such answer is cut when its client reads nothing for `sendTimeoutMs`
 * (SEND_TIMEOUT_MS), so no caller can leave a stream connection to a client that stopped reading.
 * With `holding` (enabled), a long body is made as fast as its source gives it,
 * the bytes its client has not read held for it (held-answer.ts): the promise
 * resolves once the last chunk is made, while the socket may still be sending,
 * so whatever the source held (a snapshot, a stream permit) is given back then.
 * Past the hold's bounds, or with holding off, the body is made at its
 * client's pace while no other answer waits for a permit (holdChunks, writeChunks).
 */
export async function sendAsMade(res: Response, chunks: AsyncIterable<Buffer>, sendTimeoutMs: number, holding?: AnswerHolding, othersWaiting: OthersWaiting = () => false): Promise<void> {
  cutWhenClientStopsReading(res, sendTimeoutMs)
  const iterator = chunks[Symbol.asyncIterator]()
  const head: Buffer[] = []
  let size = 0
  let next = await iterator.next()
  while (!next.done && size <= SMALL_BODY_BYTES) {
    head.push(next.value)
    size += next.value.length
    if (size <= SMALL_BODY_BYTES) next = await iterator.next()
  }
  if (next.done) {
    sendWhole(res, head)
    return
  }
  if (holding?.enabled) await holdChunks(res, prepend(head, iterator), holding.open(giveBackChunk), othersWaiting)
  else await writeChunks(res, prepend(head, iterator), othersWaiting)
}

/**
 * A long body made into a held answer as fast as `chunks` come, and sent from
 * it as the client reads (sendHeld, which this does not wait for). A chunk
 * the hold refuses (its bounds spent, its disk failing) waits until the client
 * has taken all the answer holds, then goes past the bounds, one chunk ahead
 * of the client, as with holding off; while other answers wait for a permit,
 * a client that takes longer than SLOW_CLIENT_GRACE_MS has its answer cut
 * (counted as hold_full). A client gone or a failed source end the chunks,
 * which releases the connection, and the held bytes go.
 */
async function holdChunks(res: Response, chunks: AsyncGenerator<Buffer>, held: HeldAnswer, othersWaiting: OthersWaiting): Promise<void> {
  void sendHeld(res, held)
  let done = false
  try {
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
      if (res.destroyed) throw prematureClose()
      // While no other answer waits for a permit, keeping this one costs no one: a chunk
      // that would go to the file waits for the client to take some of the memory held
      // instead, which spares the file's writes and reads (a lone export ran 1.27× its
      // floor through the file, 1.06× without). Once one waits, the file takes it at once.
      while (!held.fitsInMemory(next.value.length) && held.heldBytes > 0 && !othersWaiting() && !res.destroyed) {
        await Promise.race([held.nextTaken(), sleep(LOOK_AGAIN_MS)])
      }
      if (await held.push(next.value)) continue
      if (!await clientTookAll(res, held, othersWaiting) || !held.pushPastBounds(next.value)) {
        if (res.destroyed) throw prematureClose()
        cutForOthers(res, held.heldBytes)
        throw prematureClose()
      }
    }
    held.end()
    done = true
  } catch (error) {
    res.destroy()
    await held.discard()
    throw error
  } finally {
    if (!done) await chunks.return(undefined)
  }
}

/**
 * Waits until the client has taken every byte `held` holds: true; false when
 * the client is gone, or other answers wait for a permit and it has been
 * slower than SLOW_CLIENT_GRACE_MS.
 */
async function clientTookAll(res: Response, held: HeldAnswer, othersWaiting: OthersWaiting): Promise<boolean> {
  const started = Date.now()
  while (held.heldBytes > 0) {
    if (res.destroyed) return false
    if (othersWaiting() && Date.now() - started >= SLOW_CLIENT_GRACE_MS) return false
    await Promise.race([held.taken(), sleep(LOOK_AGAIN_MS)])
  }
  return !res.destroyed
}

/** How often an answer waiting for its client looks at the line for permits again. */
const LOOK_AGAIN_MS = 100

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Cuts an answer whose client is slower than its database while others wait for a permit (API.md, "Under load"). */
function cutForOthers(res: Response, heldBytes: number): void {
  markCut(res, 'hold_full')
  if (res.req.baseLog) {
    requestLogger(res.req).warn({ heldBytes, graceMs: SLOW_CLIENT_GRACE_MS },
      'answer cut: its client reads slower than the database, past the hold\'s bounds, while other answers wait for a stream permit')
  }
  res.destroy()
}

/**
 * Every chunk of `chunks` into `held`, for an answer sent whole once it is
 * made (its tag, or its total, is made of all of it): the source (its
 * snapshot, its permit) is done when this resolves undefined. When the hold
 * refuses a chunk first (bounds spent, its disk failing), the chunks not
 * held, that one first: the answer cannot be sent whole.
 */
export async function holdWholeBody(chunks: AsyncIterable<Buffer>, held: HeldAnswer): Promise<AsyncGenerator<Buffer> | undefined> {
  const iterator = chunks[Symbol.asyncIterator]() as AsyncGenerator<Buffer>
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (!await held.push(next.value)) return prepend([next.value], iterator)
    }
  } catch (error) {
    await held.discard()
    throw error
  }
  held.end()
  return undefined
}

/** A held answer, whole, with its Content-Length; sent as its client reads (not waited for), cut when it reads nothing for `sendTimeoutMs`. */
export function sendHeldWhole(res: Response, held: HeldAnswer, sendTimeoutMs: number): void {
  res.setHeader('Content-Length', held.pushedBytes)
  cutWhenClientStopsReading(res, sendTimeoutMs)
  void sendHeld(res, held)
}

/** What was held of an answer that could not be held whole, then the rest through the same hold, as sendAsMade sends a long body. */
export async function streamHeldThenRest(res: Response, held: HeldAnswer, rest: AsyncGenerator<Buffer>, sendTimeoutMs: number, othersWaiting: OthersWaiting): Promise<void> {
  cutWhenClientStopsReading(res, sendTimeoutMs)
  await holdChunks(res, rest, held, othersWaiting)
}

/** The held answer's chunks to the socket as it takes them; ends the response when they are all sent, and lets the held bytes go on every path. */
async function sendHeld(res: Response, held: HeldAnswer): Promise<void> {
  try {
    for (let chunk = await held.next(); chunk !== undefined; chunk = await held.next()) {
      if (res.destroyed) return
      const sent = chunk
      if (!res.write(sent, () => giveBackChunk(sent))) await drainedOrClosed(res)
    }
    if (!res.destroyed) await endAndFinish(res)
  } catch {
    // A file that could not be read, a client gone while the end was written: the answer is cut.
    res.destroy()
  } finally {
    await held.discard()
  }
}

/**
 * A whole body, sent at once with a Content-Length, without the stream
 * machinery a long answer needs (measured in docs/performance.md). Its
 * chunks go out corked, in one write with the headers, not copied into one buffer first.
 */
export function sendWhole(res: Response, chunks: readonly Buffer[]): void {
  if (chunks.length === 0) {
    res.end()
    return
  }
  let size = 0
  for (const chunk of chunks) size += chunk.length
  res.setHeader('Content-Length', size)
  res.cork()
  for (const chunk of chunks) res.write(chunk, () => giveBackChunk(chunk))
  res.end()
}

/**
 * A long body, chunk by chunk: the next one is made while the socket sends the
 * current one, and no more (stream.pipeline's default of 16 chunks ahead held
 * megabytes per slow client). Each chunk goes back to the pool once the socket
 * is done with it, which stream.pipeline could not tell. As with
 * stream.pipeline: a client gone rejects with ERR_STREAM_PREMATURE_CLOSE, and a
 * failed source cuts the answer (no last chunk), so it never looks complete;
 * either way the rest of the chunks is ended, which releases the connection.
 */
async function writeChunks(res: Response, chunks: AsyncGenerator<Buffer>, othersWaiting: OthersWaiting): Promise<void> {
  let done = false
  try {
    let next = await chunks.next()
    while (!next.done) {
      if (res.destroyed) throw prematureClose()
      const chunk = next.value
      const flowing = res.write(chunk, () => giveBackChunk(chunk))
      // The next chunk is made while the socket sends this one (stream.pipeline's one chunk ahead).
      const following = chunks.next()
      // Awaited below, where a failure is thrown; until then it is not an unhandled rejection.
      following.catch(() => {})
      if (!flowing && !await drainedInTime(res, othersWaiting)) {
        cutForOthers(res, res.writableLength)
        throw prematureClose()
      }
      next = await following
    }
    if (res.destroyed) throw prematureClose()
    await endAndFinish(res)
    done = true
  } catch (error) {
    res.destroy()
    throw error
  } finally {
    if (!done) await chunks.return(undefined)
  }
}

/**
 * Waits for the socket to take what is written (or close): false when other
 * answers wait for a permit and the client has been slower than SLOW_CLIENT_GRACE_MS.
 */
async function drainedInTime(res: Response, othersWaiting: OthersWaiting): Promise<boolean> {
  const started = Date.now()
  let drained = false
  const waiting = drainedOrClosed(res).then(() => { drained = true })
  while (!drained) {
    if (othersWaiting() && Date.now() - started >= SLOW_CLIENT_GRACE_MS) return false
    await Promise.race([waiting, sleep(LOOK_AGAIN_MS)])
  }
  return true
}

function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const go = () => {
      res.off('drain', go)
      res.off('close', go)
      resolve()
    }
    res.on('drain', go)
    res.on('close', go)
  })
}

function endAndFinish(res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    const closed = () => { if (!res.writableFinished) reject(prematureClose()) }
    res.once('close', closed)
    res.end(() => {
      res.off('close', closed)
      resolve()
    })
  })
}

function prematureClose(): Error {
  return Object.assign(new Error('The client closed the connection before the answer was sent.'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })
}

/** The chunks already read, then the rest; ending early ends the rest too. */
async function* prepend<T>(head: T[], rest: AsyncIterator<T>): AsyncGenerator<T> {
  try {
    yield* head
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value
  } finally {
    await rest.return?.()
  }
}

/**
 * Text encoded as UTF-8 into chunks of about CHUNK_BYTES, each piece as it is
 * written. Encoding a whole chunk's string at once cost three times as much as
 * this whenever one character of it was outside Latin-1 (an emoji in one note
 * makes V8 store the whole string two bytes a character): measured in
 * docs/performance.md. Given a string, Node's HTTP response would also
 * measure its UTF-8 length in one pass and encode it in another.
 */
export class Utf8Chunks {
  // Allocated on the first write after a chunk is given away: a small answer
  // fills one buffer and never pays for a second it would not use.
  #buffer: Buffer | undefined
  #used = 0
  readonly #full: Buffer[] = []

  write(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8 (a surrogate pair, two units, takes 4).
    if (text.length * 3 > CHUNK_BYTES - this.#used) {
      this.#finishChunk()
      if (text.length * 3 > CHUNK_BYTES) {
        this.#full.push(Buffer.from(text, 'utf8'))
        return
      }
    }
    this.#buffer ??= chunkPool.take()
    this.#used += this.#buffer.write(text, this.#used, 'utf8')
  }

  /**
   * The chunk being filled, with room for `bytes` more (at most CHUNK_BYTES)
   * from `used` on: for bytes written in place, after which `used` moves past them.
   */
  room(bytes: number): Buffer {
    if (bytes > CHUNK_BYTES - this.#used) this.#finishChunk()
    return (this.#buffer ??= chunkPool.take())
  }

  /** Bytes of the chunk being filled that are written (see room). */
  get used(): number {
    return this.#used
  }

  set used(bytes: number) {
    this.#used = bytes
  }

  /** Whether a chunk is filled and not yet taken by full(). */
  get hasFull(): boolean {
    return this.#full.length > 0
  }

  /** Forgets every byte not yet taken. */
  clear(): void {
    // Never sent: their slices may be written again at once.
    for (const chunk of this.#full) chunkPool.giveBack(chunk)
    this.#full.length = 0
    this.#used = 0
  }

  /** The chunks filled so far; the one being filled stays. */
  *full(): Generator<Buffer> {
    while (this.#full.length > 0) yield this.#full.shift()!
  }

  /** Every chunk left, the last one partly filled. */
  *end(): Generator<Buffer> {
    this.#finishChunk()
    yield* this.full()
  }

  #finishChunk(): void {
    if (this.#used === 0 || this.#buffer === undefined) return
    // The socket may still hold the chunk given away: the next one is a new buffer.
    this.#full.push(this.#buffer.subarray(0, this.#used))
    this.#buffer = undefined
    this.#used = 0
  }
}

/**
 * Reads the first item before anything is sent, so that a query that fails at
 * once (a time-out, a lost connection) still gets its own status code instead
 * of a cut-off 200.
 */
export async function startIterating<T>(items: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = items[Symbol.asyncIterator]()
  const first = await iterator.next()
  return {
    [Symbol.asyncIterator]: () => {
      let pending: IteratorResult<T> | undefined = first
      return {
        next: async () => {
          if (pending) {
            const result = pending
            pending = undefined
            return result
          }
          return iterator.next()
        },
        return: async (value?: unknown) => {
          await iterator.return?.(value)
          return { done: true as const, value: undefined }
        },
      }
    },
  }
}
