// The buffers a streamed body is made of, used again once the socket is done
// with them: the chunks answers are written into (64 KiB), and the larger ones
// a held answer's temporary file is read back into (held-answer.ts). Both come
// back through giveBackChunk, whichever pool a buffer is from.

/** Chunks of about this many bytes go to the socket at once. */
export const CHUNK_BYTES = 64 * 1024

/** The bytes a held answer's file read gives the sender at once. */
export const FILE_READ_BYTES = 256 * 1024

/**
 * Buffers of `sliceBytes`, slices of one block used again once the socket is
 * done with them (its write's callback, or Utf8Chunks.clear): a new buffer per
 * chunk cost the workers about twice the full collections, and a new buffer
 * per file read of a held answer cost a 26 MB export about 100 ms of CPU, half
 * of it the kernel's (docs/performance.md, "The design that got there").
 * With every slice out, buffers of their own; slices never
 * given back (an answer that failed) make the pool start a new block after a
 * while.
 */
export class ChunkPool {
  readonly #slices: number
  readonly #sliceBytes: number
  #block: Buffer | undefined
  readonly #free: number[] = []
  readonly #isFree: Uint8Array
  /** Buffers of their own handed out since a slice last came back. */
  #without = 0

  constructor(slices: number, sliceBytes: number = CHUNK_BYTES) {
    this.#slices = slices
    this.#sliceBytes = sliceBytes
    this.#isFree = new Uint8Array(slices)
  }

  /** A buffer of the pool's slice size: a free slice of the block, or a buffer of its own. */
  take(): Buffer {
    if (this.#block === undefined || (this.#free.length === 0 && this.#without >= this.#slices * NEW_BLOCK_AFTER)) this.#newBlock()
    const slice = this.#free.pop()
    if (slice === undefined) {
      this.#without++
      return Buffer.allocUnsafe(this.#sliceBytes)
    }
    this.#isFree[slice] = 0
    return this.#block!.subarray(slice * this.#sliceBytes, (slice + 1) * this.#sliceBytes)
  }

  /** A buffer nothing uses any more: its slice, if it is one of the block's, may be taken again. */
  giveBack(chunk: Buffer | undefined): void {
    const block = this.#block
    if (chunk === undefined || block === undefined || chunk.buffer !== block.buffer) return
    const slice = Math.floor((chunk.byteOffset - block.byteOffset) / this.#sliceBytes)
    if (slice < 0 || slice >= this.#slices || this.#isFree[slice] === 1) return
    this.#isFree[slice] = 1
    this.#free.push(slice)
    this.#without = 0
  }

  #newBlock(): void {
    this.#block = Buffer.allocUnsafeSlow(this.#slices * this.#sliceBytes)
    this.#free.length = 0
    for (let slice = this.#slices - 1; slice >= 0; slice--) {
      this.#free.push(slice)
      this.#isFree[slice] = 1
    }
    this.#without = 0
  }
}

/** A new block after this many times its slices were handed out as buffers of their own, none coming back. */
export const NEW_BLOCK_AFTER = 64

/** The process's chunks: 32 slices of CHUNK_BYTES, 2 MiB. */
export const chunkPool = new ChunkPool(32)

/** What held answers' files are read into: 8 slices of FILE_READ_BYTES, 2 MiB, made at the first spill. */
export const fileReadPool = new ChunkPool(8, FILE_READ_BYTES)

/** A buffer the socket is done with, back to the pool it came from (none, for a buffer of its own). */
export function giveBackChunk(chunk: Buffer): void {
  chunkPool.giveBack(chunk)
  fileReadPool.giveBack(chunk)
}
