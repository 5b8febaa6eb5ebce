import { expect } from 'chai'
import { jsonListChunks, lineChunks } from '../../server/http/text-chunks.ts'
import { CHUNK_BYTES } from '../../server/http/chunk-pool.ts'

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = []
  for await (const chunk of chunks) out.push(Buffer.from(chunk)) // copied: a chunk's buffer is used again once given back
  return out
}

const text = async (chunks: AsyncIterable<Buffer>) => Buffer.concat(await collect(chunks)).toString('utf8')

/** For each chunk, how many turns the event loop had taken when it came. */
async function turnsBefore(chunks: AsyncIterable<Buffer>): Promise<number[]> {
  let turns = 0
  const count = () => { turns++; if (turns < 1000) setImmediate(count) }
  setImmediate(count)
  const seen: number[] = []
  for await (const _chunk of chunks) seen.push(turns)
  turns = 1000
  return seen
}

describe('jsonListChunks', () => {
  it('writes what JSON.stringify writes, the list wherever it stands, each item as mapItem makes it', async () => {
    const object = { start: '2026-01-01', groups: [{ a: 1, b: 'x' }, { a: 2, b: 'y' }], totals: { a: 3 }, group_by: ['day'] }
    const mapped = { ...object, groups: object.groups.map((group) => ({ b: group.b })) }
    expect(await text(jsonListChunks(object, 'groups', (group: { b: string }) => ({ b: group.b })))).to.equal(JSON.stringify(mapped))
  })

  it('leaves out a member JSON leaves out, writes an item it cannot write as null, and an empty list as []', async () => {
    const object = { gone: undefined, list: [1, 2], after: null }
    expect(await text(jsonListChunks(object, 'list', (n: number) => (n === 1 ? undefined : n)))).to.equal('{"list":[null,2],"after":null}')
    expect(await text(jsonListChunks({ list: [] }, 'list', (n: number) => n))).to.equal('{"list":[]}')
    expect(await text(jsonListChunks({ only: undefined, list: [] }, 'list', (n: number) => n))).to.equal('{"list":[]}')
    expect(await text(jsonListChunks({ only: undefined }, 'list', (n: number) => n))).to.equal('{}')
  })

  it('lets the event loop turn between the chunks of a long list, and not within a short one', async () => {
    // Chunks the socket takes at once never make the writer wait: without these turns a long answer was made in one go.
    const long = Array.from({ length: 5000 }, (_, i) => ({ id: i, slug: `service-${i}` }))
    const seen = await turnsBefore(jsonListChunks({ groups: long }, 'groups', (item: typeof long[number]) => item))
    expect(seen.length).to.be.above(2)
    expect(seen.at(-1)!, 'turns while the chunks were made').to.be.at.least(seen.length - 1)
    expect(await turnsBefore(jsonListChunks({ groups: long.slice(0, 50) }, 'groups', (item: typeof long[number]) => item))).to.deep.equal([0])
    expect(await turnsBefore(lineChunks(['a\r\n', 'b\r\n']))).to.deep.equal([0])
    const lines = await turnsBefore(lineChunks(Array.from({ length: 20_000 }, (_, i) => `${i},line\r\n`)))
    expect(lines.at(-1)!).to.be.at.least(lines.length - 1)
  })

  it('a long list in chunks of at most CHUNK_BYTES, characters outside Latin-1 as UTF-8, none split between chunks wrongly', async () => {
    const items = Array.from({ length: 5000 }, (_, i) => ({ id: i, slug: i % 7 === 0 ? 'стрижка 💇' : `service-${i}` }))
    const chunks = await collect(jsonListChunks({ groups: items, total: items.length }, 'groups', (item: typeof items[number]) => item))
    expect(chunks.length).to.be.above(2)
    for (const chunk of chunks.slice(0, -1)) expect(chunk.length).to.be.within(1, CHUNK_BYTES)
    expect(Buffer.concat(chunks).toString('utf8')).to.equal(JSON.stringify({ groups: items, total: items.length }))
  })
})

describe('jsonListChunks over a list that is not an array (items made as they are written)', () => {
  function* made<T>(items: T[]): Generator<T> {
    yield* items
  }

  it('writes the items its iterator gives as JSON.stringify writes the array, an item it cannot write as null', async () => {
    const cases: Array<[number[], string]> = [
      [[], '{"list":[],"total":0}'],
      [[1], '{"list":[1],"total":0}'],
      [[1, 2, 3], '{"list":[1,null,3],"total":0}'],
      [[2, 2], '{"list":[null,null],"total":0}'],
    ]
    for (const [items, expected] of cases) {
      const written = await text(jsonListChunks({ list: made(items), total: 0 }, 'list', (n: number) => (n === 2 ? undefined : n)))
      expect(written, JSON.stringify(items)).to.equal(expected)
      expect(JSON.parse(written), JSON.stringify(items)).to.deep.equal({ list: items.map((n) => (n === 2 ? null : n)), total: 0 })
    }
  })

  it('reads an array by index, never through its iterator', async () => {
    const items = [1, 2, 3]
    Object.defineProperty(items, Symbol.iterator, { value: () => { throw new Error('read by its iterator') } })
    expect(await text(jsonListChunks({ list: items }, 'list', (n: number) => n * 10))).to.equal('{"list":[10,20,30]}')
  })

  it('a long one in chunks of at most CHUNK_BYTES, with a turn of the event loop between them, and none within a short one', async () => {
    const items = Array.from({ length: 5000 }, (_, i) => ({ id: i, slug: i % 7 === 0 ? 'стрижка 💇' : `service-${i}` }))
    const chunks = await collect(jsonListChunks({ groups: made(items), total: items.length }, 'groups', (item: typeof items[number]) => item))
    expect(chunks.length).to.be.above(2)
    for (const chunk of chunks.slice(0, -1)) expect(chunk.length).to.be.within(1, CHUNK_BYTES)
    expect(Buffer.concat(chunks).toString('utf8')).to.equal(JSON.stringify({ groups: items, total: items.length }))
    const seen = await turnsBefore(jsonListChunks({ groups: made(items) }, 'groups', (item: typeof items[number]) => item))
    expect(seen.length).to.be.above(2)
    expect(seen.at(-1)!, 'turns while the chunks were made').to.be.at.least(seen.length - 1)
    expect(await turnsBefore(jsonListChunks({ groups: made(items.slice(0, 50)) }, 'groups', (item: typeof items[number]) => item))).to.deep.equal([0])
  })
})

describe('lineChunks', () => {
  it('writes the lines one after another, in chunks of at most CHUNK_BYTES', async () => {
    const lines = Array.from({ length: 4000 }, (_, i) => `${i},стрижка,${'x'.repeat(i % 50)}\r\n`)
    const chunks = await collect(lineChunks(lines))
    expect(chunks.length).to.be.above(2)
    for (const chunk of chunks) expect(chunk.length).to.be.within(1, CHUNK_BYTES)
    expect(Buffer.concat(chunks).toString('utf8')).to.equal(lines.join(''))
    expect(await collect(lineChunks([]))).to.deep.equal([])
  })
})
