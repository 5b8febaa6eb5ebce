// Held answers (server/http/held-answer.ts; decision 0028): the bytes a client
// has not read, in memory then in a file, in order, within the process's
// bounds; every byte and file let go on discard; the files of processes that
// are gone swept at start. Over a real temporary directory, no database.
import { expect } from 'chai'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ANSWER_MEMORY_BYTES, AnswerHolding, sweepHeldFiles } from '../../server/http/held-answer.ts'

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
    expect(Buffer.concat(read).equals(Buffer.concat(Array.from({ length: count }, (_, i) => chunk(i % 251))))).to.equal(true)
    expect([holding.stats.memoryBytes, holding.stats.diskBytes]).to.deep.equal([0, 0])
    await held.discard()
    expect(files()).to.deep.equal([])
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
