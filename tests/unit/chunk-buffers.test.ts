// The buffers chunks are written into, used again once the socket is done with
// them (server/http/stream-body.ts): slices of one block, each given back once,
// buffers of their own when every slice is out, and a new block when none comes back.
import { expect } from 'chai'
import { CHUNK_BYTES, ChunkPool, NEW_BLOCK_AFTER } from '../../server/http/chunk-pool.ts'

/** Where a buffer's bytes are: the same memory when both are equal. */
const memoryOf = (buffer: Buffer) => ({ block: buffer.buffer, at: buffer.byteOffset })

describe('chunk buffers used again', () => {
  it('a chunk given back has its whole slice taken next, the bytes written before it included', () => {
    const pool = new ChunkPool(4)
    const buffer = pool.take()
    expect(buffer.length).to.equal(CHUNK_BYTES)
    buffer.write('first answer', 0, 'latin1')
    // What Utf8Chunks hands out: the written part of its buffer.
    pool.giveBack(buffer.subarray(0, 12))
    const again = pool.take()
    expect(memoryOf(again)).to.deep.equal(memoryOf(buffer))
    expect(again.length).to.equal(CHUNK_BYTES)
    expect(again.toString('latin1', 0, 12)).to.equal('first answer')
  })

  it('a buffer that is no slice of the block is never taken, nor is nothing', () => {
    const pool = new ChunkPool(1)
    const slice = pool.take()
    const foreign = Buffer.alloc(CHUNK_BYTES)
    pool.giveBack(foreign)
    pool.giveBack(undefined)
    const next = pool.take()
    expect(next.buffer).to.not.equal(foreign.buffer)
    expect(next.buffer).to.not.equal(slice.buffer)
  })

  it('a slice given back twice is taken once', () => {
    const pool = new ChunkPool(2)
    const first = pool.take()
    const second = pool.take()
    pool.giveBack(first)
    pool.giveBack(first.subarray(0, 10))
    expect(memoryOf(pool.take())).to.deep.equal(memoryOf(first))
    const after = pool.take()
    expect(after.buffer).to.not.equal(first.buffer)
    expect(memoryOf(after)).to.not.deep.equal(memoryOf(second))
  })

  it('with every slice out, chunks get buffers of their own, and the slices given back are taken again', () => {
    const pool = new ChunkPool(3)
    const slices = [pool.take(), pool.take(), pool.take()]
    const block = slices[0]!.buffer
    expect(slices.every((b) => b.buffer === block)).to.equal(true)
    expect(new Set(slices.map((b) => b.byteOffset)).size).to.equal(3)
    const own = [pool.take(), pool.take()]
    expect(own.every((b) => b.buffer !== block && b.length === CHUNK_BYTES)).to.equal(true)
    expect(own[0]!.buffer).to.not.equal(own[1]!.buffer)
    for (const buffer of [...own, ...slices]) pool.giveBack(buffer)
    const again = [pool.take(), pool.take(), pool.take()]
    expect(new Set(again.map((b) => `${b.buffer === block}:${b.byteOffset}`))).to.deep.equal(new Set(slices.map((b) => `true:${b.byteOffset}`)))
  })

  it(`when no slice comes back for ${NEW_BLOCK_AFTER} times the slices, a new block; a slice of the old one is not taken again`, () => {
    const pool = new ChunkPool(2)
    const lost = [pool.take(), pool.take()]
    for (let i = 0; i < 2 * NEW_BLOCK_AFTER; i++) expect(pool.take().buffer).to.not.equal(lost[0]!.buffer)
    const fresh = pool.take()
    expect(fresh.buffer).to.not.equal(lost[0]!.buffer)
    expect(fresh.buffer.byteLength).to.equal(2 * CHUNK_BYTES)
    pool.giveBack(lost[0])
    const next = pool.take()
    expect(next.buffer).to.equal(fresh.buffer)
    expect(next.byteOffset).to.not.equal(fresh.byteOffset)
    expect(pool.take().buffer).to.not.equal(lost[0]!.buffer)
  })
})
