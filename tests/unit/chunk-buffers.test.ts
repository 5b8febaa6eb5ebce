// The buffers chunks are written into, used again once the socket has written
// them (server/http/stream-body.ts): only the pool's own, each once, and a bounded number.
import { expect } from 'chai'
import { CHUNK_BYTES, FREE_CHUNKS, giveBackChunk, takeChunkBuffer } from '../../server/http/stream-body.ts'

describe('chunk buffers used again', () => {
  it('a chunk given back has its whole buffer taken next, the bytes written before it included', () => {
    const buffer = takeChunkBuffer()
    expect(buffer.length).to.equal(CHUNK_BYTES)
    buffer.write('first answer', 0, 'latin1')
    // What Utf8Chunks hands out: the written part of its buffer.
    giveBackChunk(buffer.subarray(0, 12))
    const again = takeChunkBuffer()
    expect(again.buffer).to.equal(buffer.buffer)
    expect(again.length).to.equal(CHUNK_BYTES)
    expect(again.toString('latin1', 0, 12)).to.equal('first answer')
  })

  it('a buffer the pool did not make is never taken, nor is nothing', () => {
    const foreign = Buffer.alloc(CHUNK_BYTES)
    giveBackChunk(foreign)
    giveBackChunk(undefined)
    expect(takeChunkBuffer().buffer).to.not.equal(foreign.buffer)
  })

  it('a buffer given back twice is taken once', () => {
    const buffer = takeChunkBuffer()
    giveBackChunk(buffer)
    giveBackChunk(buffer.subarray(0, 10))
    const first = takeChunkBuffer()
    const second = takeChunkBuffer()
    expect(first.buffer).to.equal(buffer.buffer)
    expect(second.buffer).to.not.equal(buffer.buffer)
  })

  it(`keeps at most ${FREE_CHUNKS} buffers waiting`, () => {
    const count = FREE_CHUNKS + 8
    const taken = Array.from({ length: count }, () => takeChunkBuffer())
    expect(new Set(taken.map((b) => b.buffer)).size).to.equal(count)
    for (const buffer of taken) giveBackChunk(buffer)
    const memories = new Set(taken.map((b) => b.buffer))
    const again = Array.from({ length: count }, () => takeChunkBuffer())
    expect(again.filter((b) => memories.has(b.buffer))).to.have.length(FREE_CHUNKS)
  })
})
