// Held answers (server/http/held-answer.ts; decision 0028): the bytes a client
// has not read, in memory then in a file, in order, within the process's
// bounds; every byte and file let go on discard; the files of processes that
// are gone swept at start. Over a real temporary directory, no database.
import { expect } from 'chai'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ANSWER_MEMORY_BYTES, AnswerHolding, sweepHeldFiles } from '../../server/http/held-answer.ts'
import { FILE_READ_BYTES, giveBackChunk } from '../../server/http/chunk-pool.ts'

const MiB = 1024 * 1024

describe('held answers', () => {
  let dir: string
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'held-unit-')) })
  afterEach(() => { rmSync(dir, { recursive: true, force: true }) })

  const files = () => {
    try {
      return readdirSync(join(dir, String(process.pid)))
    } catch {
      return []
    }
  }
  const chunk = (byte: number, size = 64 * 1024) => Buffer.alloc(size, byte)

  it('gives the chunks back in order, from memory and then from the file, and counts what it holds and spills', async () => {
    const holding = new AnswerHolding({ memoryBytes: 32 * MiB, diskBytes: 64 * MiB, dir })
    let spills = 0
    holding.onSpill = () => spills++
    const held = holding.open()
    const count = (ANSWER_MEMORY_BYTES / (64 * 1024)) * 2
    for (let i = 0; i < count; i++) expect(await held.push(chunk(i % 251))).to.equal(true)
    expect(holding.stats.memoryBytes).to.equal(ANSWER_MEMORY_BYTES)
    expect(holding.stats.diskBytes).to.equal(ANSWER_MEMORY_BYTES)
    expect([holding.stats.spills, spills, files().length]).to.deep.equal([1, 1, 1])
    expect(held.pushedBytes).to.equal(count * 64 * 1024)
    held.end()
    const read: Buffer[] = []
    for (let next = await held.next(); next !== undefined; next = await held.next()) read.push(next)
    const whole = Buffer.concat(read)
    // As the sender does once the socket has sent them.
    for (const each of read) giveBackChunk(each)
    expect(whole.equals(Buffer.concat(Array.from({ length: count }, (_, i) => chunk(i % 251))))).to.equal(true)
    expect([holding.stats.memoryBytes, holding.stats.diskBytes]).to.deep.equal([0, 0])
    await held.discard()
    expect(files()).to.deep.equal([])
  })

  it('reads its file back into buffers used again once the sender gives them back, not a new buffer per read', async () => {
    const holding = new AnswerHolding({ memoryBytes: 32 * MiB, diskBytes: 64 * MiB, dir })
    // Room in memory for nothing: every chunk goes to the file.
    const answer = async (byte: number) => {
      const held = holding.open()
      for (let i = 0; i < ANSWER_MEMORY_BYTES / (64 * 1024) + 16; i++) await held.push(chunk(byte))
      held.end()
      return held
    }
    const first = await answer(7)
    const fromFile: Buffer[] = []
    for (let next = await first.next(); next !== undefined; next = await first.next()) {
      if (next.buffer.byteLength > FILE_READ_BYTES) fromFile.push(next)
    }
    expect(fromFile.length, 'a 256 KiB read of the file is a slice of one block').to.equal(4)
    expect(fromFile.every((read) => read.length === FILE_READ_BYTES && read.buffer === fromFile[0]!.buffer && read.every((b) => b === 7))).to.equal(true)
    for (const read of fromFile) giveBackChunk(read)
    await first.discard()
    const second = await answer(9)
    const again: Buffer[] = []
    for (let next = await second.next(); next !== undefined; next = await second.next()) {
      if (next.buffer === fromFile[0]!.buffer) again.push(next)
    }
    expect(again.map((read) => read.byteOffset).sort(), 'the slices given back are read into again').to.deep.equal(fromFile.map((read) => read.byteOffset).sort())
    expect(again.every((read) => read.every((b) => b === 9))).to.equal(true)
    await second.discard()
  })

  it('gives the chunks it still holds in memory back when it is discarded unsent', async () => {
    const holding = new AnswerHolding({ memoryBytes: 32 * MiB, diskBytes: 64 * MiB, dir })
    const givenBack: Buffer[] = []
    const held = holding.open((done) => givenBack.push(done))
    const pushed = [chunk(1), chunk(2), chunk(3)]
    for (const each of pushed) await held.push(each)
    const sent = await held.next()
    await held.discard()
    expect(sent).to.equal(pushed[0])
    expect(givenBack).to.deep.equal([pushed[1], pushed[2]])
  })

  it('refuses a chunk past both bounds of the process, and lets every byte and its file go on discard', async () => {
    const holding = new AnswerHolding({ memoryBytes: MiB, diskBytes: MiB, dir })
    const first = holding.open()
    const second = holding.open()
    let pushed = 0
    while (await first.push(chunk(1))) pushed++
    expect(pushed).to.equal(32)
    expect(await second.push(chunk(2)), 'the bounds are the process\'s, not the answer\'s').to.equal(false)
    expect(files()).to.have.length(1)
    await first.discard()
    expect([holding.stats.memoryBytes, holding.stats.diskBytes, files().length]).to.deep.equal([0, 0, 0])
    expect(await first.push(chunk(1)), 'a discarded answer takes nothing').to.equal(false)
    expect(await second.push(chunk(2))).to.equal(true)
  })

  it('is off with both bounds 0: nothing is held', async () => {
    const holding = new AnswerHolding({ memoryBytes: 0, diskBytes: 0, dir })
    expect(holding.enabled).to.equal(false)
    expect(await holding.open().push(chunk(1))).to.equal(false)
    expect(files()).to.deep.equal([])
  })

  it('a sender waiting for the next chunk gets it as it is pushed, and undefined once ended', async () => {
    const held = new AnswerHolding({ memoryBytes: MiB, diskBytes: 0, dir }).open()
    const next = held.next()
    await held.push(chunk(7, 10))
    expect(await next).to.deep.equal(chunk(7, 10))
    const last = held.next()
    held.end()
    expect(await last).to.equal(undefined)
  })

  it('sweepHeldFiles removes the directories of processes that are gone, and keeps those of processes that run', () => {
    // 4194305 is past Linux's largest pid: no process has it.
    for (const pid of ['4194305', String(process.ppid), 'stray']) {
      mkdirSync(join(dir, pid))
      writeFileSync(join(dir, pid, '1-a.held'), 'x')
    }
    expect(sweepHeldFiles(dir)).to.equal(2)
    expect(readdirSync(dir)).to.deep.equal([String(process.ppid)])
    expect(sweepHeldFiles(join(dir, 'none'))).to.equal(0)
  })
})
