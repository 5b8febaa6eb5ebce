import { expect } from 'chai'
import { jsonListChunks, lineChunks } from '../../server/http/text-chunks.ts'
import { CHUNK_BYTES } from '../../server/http/stream-body.ts'

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = []
  for await (const chunk of chunks) out.push(Buffer.from(chunk)) // copied: a chunk's buffer is used again once given back
  return out
}

const text = async (chunks: AsyncIterable<Buffer>) => Buffer.concat(await collect(chunks)).toString('utf8')

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
  })

  it('a long list in chunks of at most CHUNK_BYTES, characters outside Latin-1 as UTF-8, none split between chunks wrongly', async () => {
    const items = Array.from({ length: 5000 }, (_, i) => ({ id: i, slug: i % 7 === 0 ? 'стрижка 💇' : `service-${i}` }))
    const chunks = await collect(jsonListChunks({ groups: items, total: items.length }, 'groups', (item: typeof items[number]) => item))
    expect(chunks.length).to.be.above(2)
    for (const chunk of chunks.slice(0, -1)) expect(chunk.length).to.be.within(1, CHUNK_BYTES)
    expect(Buffer.concat(chunks).toString('utf8')).to.equal(JSON.stringify({ groups: items, total: items.length }))
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
