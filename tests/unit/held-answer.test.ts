// Held answers (server/http/held-answer.ts; decision 0028): the bytes a client
// has not read, in memory then in a file, in order, within the process's
// bounds; every byte and file let go on discard; the files of processes that
// are gone swept at start; a disk that cannot be written refused, never
// thrown. Over a real temporary directory (and, as root, a real tmpfs), no database.
import { expect } from 'chai'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { ANSWER_MEMORY_BYTES, AnswerHolding, DISK_RETRY_MS, processDirName, processHoldDir, processStartTime, startHolding, sweepHeldFiles } from '../../server/http/held-answer.ts'
import { FILE_READ_BYTES, giveBackChunk } from '../../server/http/chunk-pool.ts'
import { createLogger } from '../../server/log.ts'

const MiB = 1024 * 1024

describe('held answers', () => {
  let dir: string
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'held-unit-')) })
  afterEach(() => { rmSync(dir, { recursive: true, force: true }) })

  const files = () => {
    try {
      return readdirSync(processHoldDir(dir))
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

  it('sweepHeldFiles removes the directory of a crashed process whose pid runs again (another start time), and keeps those of processes that run', function () {
    const parentStart = processStartTime(process.ppid)
    if (parentStart === undefined) this.skip() // no /proc: directories are named by the pid alone
    const ownStart = processStartTime(process.pid)!
    expect(processDirName()).to.equal(`${process.pid}-${ownStart}`)
    const live = [`${process.ppid}-${parentStart}`, processDirName()]
    // A crashed process's: a pid that runs now, another process's since another time.
    const crashed = [`${process.ppid}-${Number(parentStart) + 1}`, `${process.pid}-${Number(ownStart) - 1}`, `4194305-${parentStart}`]
    for (const name of [...live, ...crashed]) {
      mkdirSync(join(dir, name))
      writeFileSync(join(dir, name, '1-a.held'), 'x')
    }
    expect(sweepHeldFiles(dir)).to.equal(crashed.length)
    expect(readdirSync(dir).sort()).to.deep.equal([...live].sort())
  })

  describe('a disk that cannot be written', () => {
    let now = 0
    const clock = () => now
    beforeEach(() => { now = 1_000_000 })

    it('a directory that cannot be made (a path under a regular file): push returns false, never throws, and holds nothing after', async () => {
      writeFileSync(join(dir, 'file'), 'x')
      const holding = new AnswerHolding({ memoryBytes: 64 * 1024, diskBytes: 64 * MiB, dir: join(dir, 'file', 'held') }, { now: clock })
      const held = holding.open()
      expect(await held.push(chunk(1)), 'in memory').to.equal(true)
      expect(await held.push(chunk(2)), 'past memory, to a file that cannot be made').to.equal(false)
      expect(holding.stats).to.deep.equal({ memoryBytes: 64 * 1024, diskBytes: 0, spills: 0, diskFailures: 1 })
      expect([holding.diskUsable, holding.diskFault]).to.deep.equal([false, 'ENOTDIR'])
      // What was held is still given, in order; then the answer ends.
      held.end()
      expect(await held.next()).to.deep.equal(chunk(1))
      expect(await held.next()).to.equal(undefined)
      await held.discard()
      expect(holding.stats).to.deep.equal({ memoryBytes: 0, diskBytes: 0, spills: 0, diskFailures: 1 })
    })

    it('leaves the disk alone for DISK_RETRY_MS after a failure, then lets one push try it again', async () => {
      writeFileSync(join(dir, 'file'), 'x')
      const holdDir = join(dir, 'file', 'held')
      const { logged, log } = collectedLog()
      const holding = new AnswerHolding({ memoryBytes: 0, diskBytes: 64 * MiB, dir: holdDir }, { now: clock, log })
      expect(await holding.open().push(chunk(1))).to.equal(false)
      expect(await holding.open().push(chunk(1)), 'not tried again at once').to.equal(false)
      expect(holding.stats.diskFailures).to.equal(1)
      now += DISK_RETRY_MS - 1
      expect(await holding.open().push(chunk(1))).to.equal(false)
      expect(holding.stats.diskFailures).to.equal(1)
      now += 1
      expect(holding.diskUsable, 'a minute on: a push may try it').to.equal(true)
      expect(await holding.open().push(chunk(1))).to.equal(false)
      expect([holding.stats.diskFailures, holding.diskUsable]).to.deep.equal([2, false])
      // The directory can be made now: after another minute, the next push writes, and the disk is used again.
      rmSync(join(dir, 'file'))
      now += DISK_RETRY_MS
      const trial = holding.open()
      const other = holding.open()
      const [tried, meanwhile] = await Promise.all([trial.push(chunk(3)), other.push(chunk(4))])
      expect([tried, meanwhile], 'one push tries the disk; the other waits for its outcome').to.deep.equal([true, false])
      expect([holding.diskUsable, holding.diskFault, holding.stats.diskBytes]).to.deep.equal([true, undefined, 64 * 1024])
      expect(await other.push(chunk(4))).to.equal(true)
      expect(existsSync(processHoldDir(holdDir))).to.equal(true)
      expect(logged.map((line) => [line.level, line.code, line.msg]), 'told when it fails and when it works again; not per answer, not per failed trial').to.deep.equal([
        [40, 'ENOTDIR', 'HOLD_DIR cannot be written: answers are held in memory only, and the disk is tried again in a minute'],
        [30, undefined, 'HOLD_DIR can be written again: answers are held on disk too'],
      ])
      await trial.discard()
      await other.discard()
    })

    it('a disk that fills mid-hold (a 1 MiB tmpfs, as root): push returns false, the bytes already written are read out in order, and stats return to zero', async function () {
      const mounted = mountTmpfs(dir, '1m')
      if (!mounted) this.skip() // mount(8) needs root, on Linux
      const { logged, log } = collectedLog()
      try {
        const holding = new AnswerHolding({ memoryBytes: 32 * MiB, diskBytes: 64 * MiB, dir: mounted }, { log, now: clock })
        const held = holding.open()
        const other = holding.open()
        const pushed: Buffer[] = []
        for (let i = 0; ; i++) {
          const next = chunk(i % 251)
          if (!await held.push(next)) break
          pushed.push(next)
        }
        const onDisk = pushed.length * 64 * 1024 - ANSWER_MEMORY_BYTES
        expect(onDisk, 'some of it went to the file before the disk was full').to.be.within(256 * 1024, MiB)
        expect(holding.stats).to.deep.equal({ memoryBytes: ANSWER_MEMORY_BYTES, diskBytes: onDisk, spills: 1, diskFailures: 1 })
        expect([holding.diskUsable, holding.diskFault]).to.deep.equal([false, 'ENOSPC'])
        // Another answer past its memory is refused without trying the disk; in memory it is held.
        for (let i = 0; i < ANSWER_MEMORY_BYTES / (64 * 1024); i++) expect(await other.push(chunk(7))).to.equal(true)
        expect(await other.push(chunk(7))).to.equal(false)
        expect(holding.stats.diskFailures).to.equal(1)
        expect(logged.filter((line) => line.msg === 'HOLD_DIR cannot be written: answers are held in memory only, and the disk is tried again in a minute'), 'one line')
          .to.have.length(1)
        expect(logged[0]).to.include({ level: 40, code: 'ENOSPC', holdDir: mounted })
        held.end()
        const read: Buffer[] = []
        for (let next = await held.next(); next !== undefined; next = await held.next()) {
          read.push(Buffer.from(next))
          giveBackChunk(next)
        }
        expect(Buffer.concat(read).equals(Buffer.concat(pushed)), 'every byte held, in order').to.equal(true)
        await held.discard()
        await other.discard()
        expect(holding.stats).to.deep.equal({ memoryBytes: 0, diskBytes: 0, spills: 1, diskFailures: 1 })
        expect(readdirSync(processHoldDir(mounted))).to.deep.equal([])
      } finally {
        unmount(mounted)
      }
    })

    it('a directory that cannot be written (a read-only tmpfs, as root): push returns false with EROFS, never throws', async function () {
      const mounted = mountTmpfs(dir, '1m')
      if (!mounted) this.skip() // mount(8) needs root, on Linux
      try {
        const holding = new AnswerHolding({ memoryBytes: 0, diskBytes: 64 * MiB, dir: mounted }, { now: clock })
        const first = holding.open()
        expect(await first.push(chunk(1)), 'written while it could be').to.equal(true)
        await first.discard()
        execFileSync('mount', ['-o', 'remount,ro', mounted])
        expect(await holding.open().push(chunk(1))).to.equal(false)
        expect([holding.diskFault, holding.stats.diskBytes, holding.stats.diskFailures]).to.deep.equal(['EROFS', 0, 1])
      } finally {
        unmount(mounted)
      }
    })

    it('startHolding logs one line at start: where and the bounds, or (warn) that HOLD_DIR cannot be written, with its code', () => {
      const { logged, log } = collectedLog()
      const usable = startHolding({ memoryBytes: 32 * MiB, diskBytes: 64 * MiB, dir }, log)
      expect(usable.diskUsable).to.equal(true)
      expect(readdirSync(processHoldDir(dir)), 'the probe\'s file is gone').to.deep.equal([])
      writeFileSync(join(dir, 'file'), 'x')
      const unusable = startHolding({ memoryBytes: 32 * MiB, diskBytes: 64 * MiB, dir: join(dir, 'file', 'held') }, log)
      expect([unusable.diskUsable, unusable.stats.diskFailures]).to.deep.equal([false, 1])
      expect(logged.map((line) => [line.level, line.msg])).to.deep.equal([
        [30, 'held answers: in memory, then in files under HOLD_DIR'],
        [40, 'HOLD_DIR cannot be written: answers are held in memory only (HOLD_MEMORY_BYTES), and the disk is tried again in a minute'],
      ])
      expect(logged[0]).to.include({ holdDir: processHoldDir(dir), memoryBytes: 32 * MiB, diskBytes: 64 * MiB })
      expect(logged[1]).to.include({ holdDir: join(dir, 'file', 'held'), code: 'ENOTDIR', memoryBytes: 32 * MiB })
    })
  })
})

/** A logger whose lines are kept, parsed. */
function collectedLog(): { logged: Record<string, unknown>[]; log: ReturnType<typeof createLogger> } {
  const logged: Record<string, unknown>[] = []
  const log = createLogger('info', new Writable({ write(line, _encoding, done) { logged.push(JSON.parse(String(line)) as Record<string, unknown>); done() } }))
  return { logged, log }
}

/** A tmpfs of `size` mounted on a new directory under `dir`; undefined where mount(8) cannot (not root, not Linux). */
function mountTmpfs(dir: string, size: string): string | undefined {
  const mountPoint = join(dir, 'tmpfs')
  mkdirSync(mountPoint)
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', mountPoint], { stdio: 'ignore' })
    return mountPoint
  } catch {
    return undefined
  }
}

/** Unmounts it; lazily when a file of it is still open (a failed test), so no mount outlives the test. */
function unmount(mountPoint: string): void {
  try {
    execFileSync('umount', [mountPoint], { stdio: 'ignore' })
  } catch {
    execFileSync('umount', ['--lazy', mountPoint], { stdio: 'ignore' })
  }
}
