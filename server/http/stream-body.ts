// Writes a body made of UTF-8 chunks: a small one at once, a long one through
// stream.pipeline, where back-pressure from the socket reaches the database
// cursor, and a client that hangs up ends the generator, which releases the connection.
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Response } from 'express'

/** Chunks of about this many bytes go to the socket at once. */
export const CHUNK_BYTES = 64 * 1024

/** A body up to this size is sent at once: a typical report, a page, a narrow answer of up to a thousand bookings. */
const SMALL_BODY_BYTES = 512 * 1024

export async function streamBody(res: Response, chunks: AsyncIterable<Buffer>): Promise<void> {
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
    // The whole body is here: sent at once, with a Content-Length, without the
    // stream machinery a long answer needs (measured in scripts/bench/README.md).
    // Its chunks go out corked, in one write with the headers, not copied into one buffer first.
    if (head.length <= 1) {
      res.end(head[0])
      return
    }
    res.setHeader('Content-Length', size)
    res.cork()
    for (const chunk of head.slice(0, -1)) res.write(chunk)
    res.end(head.at(-1))
    return
  }
  // One chunk ahead is enough: the socket's own buffer holds the next. The
  // default (16 chunks of up to a batch each) held megabytes per slow client.
  await pipeline(Readable.from(prepend(head, iterator), { highWaterMark: 1 }), res)
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
 * scripts/bench/README.md. Given a string, Node's HTTP response would also
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
    this.#buffer ??= Buffer.allocUnsafe(CHUNK_BYTES)
    this.#used += this.#buffer.write(text, this.#used, 'utf8')
  }

  /**
   * The chunk being filled, with room for `bytes` more (at most CHUNK_BYTES)
   * from `used` on: for bytes written in place, after which `used` moves past them.
   */
  room(bytes: number): Buffer {
    if (bytes > CHUNK_BYTES - this.#used) this.#finishChunk()
    return (this.#buffer ??= Buffer.allocUnsafe(CHUNK_BYTES))
  }

  /** Bytes of the chunk being filled that are written (see room). */
  get used(): number {
    return this.#used
  }

  set used(bytes: number) {
    this.#used = bytes
  }

  /** Bytes written and not yet taken by full() or end(). */
  get held(): number {
    let bytes = this.#used
    for (const chunk of this.#full) bytes += chunk.length
    return bytes
  }

  /** Forgets every byte not yet taken. */
  clear(): void {
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
