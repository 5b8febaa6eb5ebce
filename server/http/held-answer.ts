// Held answers (API.md, "Under load"; decision 0028): the bytes of a streamed
// answer that its client has not read yet, kept in memory and then in a
// temporary file, as nginx's proxy buffering keeps them, so that the database
// statement and its stream permit are done as soon as the rows are out, not
// when a slow client has read them. A process holds at most HOLD_MEMORY_BYTES
// in memory and HOLD_DISK_BYTES on disk over all its answers; an answer that
// would hold more is refused (push returns false), never made to wait with its
// permit. A disk that cannot be written (HOLD_DIR read-only, another user's,
// full) is a bound of 0 for as long as it fails: answers are held in memory only.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import { FILE_READ_BYTES, fileReadPool } from './chunk-pool.ts'

/** The most one answer holds in memory before the rest of it goes to its file: a few chunks, so many slow clients share HOLD_MEMORY_BYTES. */
export const ANSWER_MEMORY_BYTES = 4 * 1024 * 1024

/** After a file error, the disk is left alone this long; then one push tries it again. */
export const DISK_RETRY_MS = 60_000

/** What the start-up probe writes and removes in the process's directory: one block, as a held file's first write needs. */
const PROBE_BYTES = 4096

export interface HoldSettings {
  /** Bytes held in memory by all the process's answers together (HOLD_MEMORY_BYTES). */
  memoryBytes: number
  /** Bytes held in temporary files by all the process's answers together (HOLD_DISK_BYTES). */
  diskBytes: number
  /** The service's directory for them (HOLD_DIR): each process writes in a directory of its own under it (processDirName). */
  dir: string
}

/** What the process holds now, for GET /metrics. */
export interface HoldStats {
  memoryBytes: number
  diskBytes: number
  /** Answers that went on to a temporary file, since start. */
  spills: number
  /** File operations of HOLD_DIR that failed (the start-up probe, a held file's open or write), since start. */
  diskFailures: number
}

/** What the start-up probe of HOLD_DIR found (AnswerHolding.probeDisk). */
export type DiskProbe =
  /** A file was written and removed in the process's directory, `dir`. */
  | { kind: 'usable'; dir: string }
  /** HOLD_DISK_BYTES=0: nothing is held on disk, nothing was tried. */
  | { kind: 'off' }
  /** The process's directory or a file in it could not be made or written: `code` is the errno code (EACCES, EROFS, ENOSPC, ENOTDIR…). */
  | { kind: 'unusable'; code: string }

export interface HoldingOptions {
  /** Where a disk that stops (or starts again) working is told: one line each time, not one per answer. */
  log?: Logger | undefined
  /** The clock of DISK_RETRY_MS (tests set it). */
  now?: (() => number) | undefined
}

/** How a push may use the disk now (AnswerHolding.takeDisk): not at all, as usual, or as the one trial after a failure. */
export type DiskUse = 'refused' | 'granted' | 'trial'

/**
 * The held answers of one process (one per app): their bounds, their counts
 * and the directory of their files. Holding is off when both bounds are 0: a
 * client that reads slowly then holds its stream permit, as before 0028.
 */
export class AnswerHolding {
  readonly stats: HoldStats = { memoryBytes: 0, diskBytes: 0, spills: 0, diskFailures: 0 }
  readonly settings: HoldSettings
  /** Called when an answer first goes on to its file (GET /metrics counts it). */
  onSpill: (() => void) | undefined
  readonly #log: Logger | undefined
  readonly #now: () => number
  #processDir: string | undefined
  #files = 0
  /** Set while the disk is left alone after a file error: when one push may try it again. */
  #diskOffUntil: number | undefined
  /** The errno code of the last file error, while the disk is left alone. */
  #diskFault: string | undefined

  constructor(settings: HoldSettings, options: HoldingOptions = {}) {
    this.settings = settings
    this.#log = options.log
    this.#now = options.now ?? Date.now
  }

  get enabled(): boolean {
    return this.settings.memoryBytes > 0 || this.settings.diskBytes > 0
  }

  /**
   * Whether an answer may go on to a file now: HOLD_DISK_BYTES is not 0, and
   * no file operation failed in the last DISK_RETRY_MS (once that has passed,
   * the next push that needs the disk tries it again). False: the disk bound
   * is 0 for now, and an answer past its memory is refused.
   */
  get diskUsable(): boolean {
    return this.settings.diskBytes > 0 && (this.#diskOffUntil === undefined || this.#now() >= this.#diskOffUntil)
  }

  /** The errno code of the file error that keeps the disk unused now; undefined while it is usable. */
  get diskFault(): string | undefined {
    return this.#diskOffUntil === undefined ? undefined : this.#diskFault
  }

  open(onChunkDone?: (chunk: Buffer) => void): HeldAnswer {
    return new HeldAnswer(this, onChunkDone)
  }

  /**
   * At the start of a serving process: makes the process's directory and
   * writes and removes a file in it, so that a HOLD_DIR that cannot be written
   * is known (and logged, by startHolding) before any answer needs it. A
   * failure leaves the disk unused, as a failure while holding does.
   */
  probeDisk(): DiskProbe {
    if (this.settings.diskBytes === 0) return { kind: 'off' }
    try {
      const dir = this.#ensureProcessDir()
      const probe = join(dir, 'probe')
      writeFileSync(probe, Buffer.alloc(PROBE_BYTES), { mode: 0o600 })
      rmSync(probe)
      return { kind: 'usable', dir }
    } catch (error) {
      // Not logged here: the start-up line (startHolding) says it.
      this.#leaveDisk(errnoCode(error), false)
      return { kind: 'unusable', code: errnoCode(error) }
    }
  }

  /**
   * For HeldAnswer.push, before it writes: refused while the disk is left
   * alone; once DISK_RETRY_MS has passed, one push at a time gets a trial
   * (the others are refused until it succeeds, or for another DISK_RETRY_MS).
   */
  takeDisk(): DiskUse {
    if (this.settings.diskBytes === 0) return 'refused'
    if (this.#diskOffUntil === undefined) return 'granted'
    const now = this.#now()
    if (now < this.#diskOffUntil) return 'refused'
    this.#diskOffUntil = now + DISK_RETRY_MS
    return 'trial'
  }

  /** For HeldAnswer.push: its write went through. After a trial, the disk is used again. */
  diskWorked(use: DiskUse): void {
    if (use !== 'trial' || this.#diskOffUntil === undefined) return
    this.#diskOffUntil = undefined
    this.#diskFault = undefined
    this.#log?.info({ holdDir: this.settings.dir }, 'HOLD_DIR can be written again: answers are held on disk too')
  }

  /** For HeldAnswer.push: its open or write failed. The disk is left alone for DISK_RETRY_MS; told once, not once per answer. */
  diskFailed(error: unknown): void {
    this.#leaveDisk(errnoCode(error), true)
  }

  #leaveDisk(code: string, tell: boolean): void {
    const now = this.#now()
    this.stats.diskFailures++
    // Counted, not told again: a failure while the disk is left alone already (answers that were
    // writing at once), or a trial's (told when one works again).
    const wasUsed = this.#diskOffUntil === undefined
    this.#diskOffUntil = now + DISK_RETRY_MS
    this.#diskFault = code
    if (tell && wasUsed) {
      this.#log?.warn({ holdDir: this.settings.dir, code, retryInSeconds: DISK_RETRY_MS / 1000 },
        'HOLD_DIR cannot be written: answers are held in memory only, and the disk is tried again in a minute')
    }
  }

  /** A new file's path in this process's directory, made (0700) on first use and removed when the process exits. */
  nextFilePath(): string {
    return join(this.#ensureProcessDir(), `${++this.#files}-${randomBytes(6).toString('hex')}.held`)
  }

  #ensureProcessDir(): string {
    if (this.#processDir === undefined) {
      const dir = processHoldDir(this.settings.dir)
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      removeAtExit(dir)
      this.#processDir = dir
    }
    return this.#processDir
  }
}

/**
 * The holding of a serving process, at its start: the files of processes
 * that are gone swept (sweepHeldFiles), HOLD_DIR probed, and one line logged:
 * where answers are held and the bounds, or (warn) that HOLD_DIR cannot be
 * written, its errno code, and that answers are held in memory only.
 */
export function startHolding(settings: HoldSettings, log: Logger): AnswerHolding {
  sweepHeldFiles(settings.dir)
  const holding = new AnswerHolding(settings, { log })
  const probe = holding.probeDisk()
  const bounds = { memoryBytes: settings.memoryBytes, answerMemoryBytes: ANSWER_MEMORY_BYTES, diskBytes: settings.diskBytes }
  if (probe.kind === 'unusable') {
    log.warn({ holdDir: settings.dir, code: probe.code, ...bounds },
      'HOLD_DIR cannot be written: answers are held in memory only (HOLD_MEMORY_BYTES), and the disk is tried again in a minute')
  } else if (!holding.enabled) {
    log.info(bounds, 'held answers: off (HOLD_MEMORY_BYTES=0, HOLD_DISK_BYTES=0): a client that reads slowly holds its stream permit')
  } else if (probe.kind === 'off') {
    log.info(bounds, 'held answers: in memory only (HOLD_DISK_BYTES=0)')
  } else {
    log.info({ holdDir: probe.dir, ...bounds }, 'held answers: in memory, then in files under HOLD_DIR')
  }
  return holding
}

function errnoCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' ? code : 'EUNKNOWN'
}

/** The process's directories of held files, removed by one listener when it exits. */
const exitRemoves = new Set<string>()

/** A normal exit leaves nothing; a crash leaves the directory for the next start's sweep (sweepHeldFiles). */
function removeAtExit(dir: string): void {
  if (exitRemoves.size === 0) process.once('exit', () => { for (const each of exitRemoves) rmSync(each, { recursive: true, force: true }) })
  exitRemoves.add(dir)
}

/**
 * A process's start time, in clock ticks after boot (field 22 of
 * /proc/PID/stat, proc(5)); undefined where there is no /proc (macOS) or the
 * process is gone or hidden. A pid is used again by a later process; a pid
 * and its start time name one process.
 */
export function processStartTime(pid: number): string | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return undefined
  }
  // Field 2, the command, is in parentheses and may hold spaces and ')': fields 3 on follow the last ')'.
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  return start !== undefined && /^\d+$/.test(start) ? start : undefined
}

let ownDirName: string | undefined

/** This process's directory's name under HOLD_DIR: `<pid>-<start time>`, or `<pid>` where the start time cannot be read. */
export function processDirName(): string {
  if (ownDirName === undefined) {
    const start = processStartTime(process.pid)
    ownDirName = start === undefined ? String(process.pid) : `${process.pid}-${start}`
  }
  return ownDirName
}

/** This process's directory of held files under `holdDir` (HOLD_DIR). */
export function processHoldDir(holdDir: string): string {
  return join(holdDir, processDirName())
}

/**
 * Removes the held files of processes that are gone (a crash, a kill): each
 * process's directory under `dir` is named by its pid and start time
 * (processDirName), so a later process given the same pid does not keep a
 * dead one's files. Kept: the directories of processes that run (this one,
 * another instance sharing HOLD_DIR), and a bare `<pid>` (as older versions
 * named them, or where there is no /proc) whose pid runs. Run at the start of
 * each serving process (every worker, or the one process of WORKERS=1), so a
 * worker forked again sweeps the one that died. One that cannot be removed
 * (another user's) stays. Returns how many directories went.
 */
export function sweepHeldFiles(dir: string): number {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return 0
  }
  let removed = 0
  for (const entry of entries) {
    if (isLiveProcessDir(entry)) continue
    try {
      rmSync(join(dir, entry), { recursive: true, force: true })
      removed++
    } catch {
      // Not ours to remove (EACCES, EPERM): its owner sweeps it.
    }
  }
  return removed
}

/** Whether a directory named `entry` under HOLD_DIR is that of a process that runs. */
function isLiveProcessDir(entry: string): boolean {
  const named = /^(\d+)(?:-(\d+))?$/.exec(entry)
  if (named === null) return false
  const pid = Number(named[1])
  const start = named[2]
  if (start === undefined) {
    // A bare pid tells no start time: this process's own pid was an earlier process's (none is made before this sweep).
    return pid !== process.pid && isRunning(pid)
  }
  const runningSince = processStartTime(pid)
  // No /proc/PID: gone, or hidden (hidepid) as another user's that runs, which may be the one: left alone.
  if (runningSince === undefined) return isRunning(pid)
  return runningSince === start
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as { code?: string }).code === 'EPERM'
  }
}

/**
 * One answer's bytes between its producer (the rows) and its sender (the
 * socket), in order: memory while the bounds allow, then its file. Once a
 * byte is in the file, every later one goes there too until the sender has
 * read the file out; then memory again, and the file starts over.
 */
export class HeldAnswer {
  readonly #holding: AnswerHolding
  readonly #onChunkDone: ((chunk: Buffer) => void) | undefined
  readonly #memory: Buffer[] = []
  #memoryBytes = 0
  #pushedBytes = 0
  #file: FileHandle | undefined
  #filePath: string | undefined
  /** The file's bytes from #readAt to #writtenAt are held; written ones only. */
  #readAt = 0
  #writtenAt = 0
  #spilled = false
  #ended = false
  #discarded = false
  /** File operations, one at a time: a read never passes a write, the file is closed after both. */
  #fileQueue: Promise<unknown> = Promise.resolve()
  #wake: (() => void) | undefined
  /** Producers waiting in taken(), woken whenever the sender takes bytes. */
  #takers: Array<() => void> = []

  constructor(holding: AnswerHolding, onChunkDone?: (chunk: Buffer) => void) {
    this.#holding = holding
    this.#onChunkDone = onChunkDone
  }

  /** Bytes pushed since the start: a whole answer's Content-Length. */
  get pushedBytes(): number {
    return this.#pushedBytes
  }

  /** Bytes held now, in memory and on disk. */
  get heldBytes(): number {
    return this.#memoryBytes + (this.#writtenAt - this.#readAt)
  }

  /**
   * Holds `chunk` after those before it. False when the process's bounds are
   * spent, when it would go to the file and the disk cannot be written now
   * (AnswerHolding.diskUsable: a file error, here or in another answer, in
   * the last DISK_RETRY_MS), or when the answer was discarded: the chunk is
   * not held, and the caller still has it. Never throws: a file error (ENOSPC,
   * EROFS, EACCES…) is a false, its bytes given back to the stats; the bytes
   * already in the file are still given by next(). A chunk held in memory is
   * kept as it is; one written to the file is given to onChunkDone (its
   * buffer may be used again) once written; one held in memory is given to
   * it if the answer is discarded before sending it.
   */
  async push(chunk: Buffer): Promise<boolean> {
    if (this.#discarded || this.#ended) return false
    const holding = this.#holding
    const { stats, settings } = holding
    const size = chunk.length
    const fileHolds = this.#writtenAt > this.#readAt
    if (!fileHolds && this.#memoryBytes + size <= ANSWER_MEMORY_BYTES && stats.memoryBytes + size <= settings.memoryBytes) {
      this.#memory.push(chunk)
      this.#pushedBytes += size
      this.#memoryBytes += size
      stats.memoryBytes += size
      this.#wakeSender()
      return true
    }
    if (stats.diskBytes + size > settings.diskBytes) return false
    const use = holding.takeDisk()
    if (use === 'refused') return false
    stats.diskBytes += size
    try {
      await this.#onFile(async (file) => {
        await writeAll(file, chunk, this.#writtenAt)
        this.#writtenAt += size
      })
    } catch (error) {
      stats.diskBytes -= size
      // A write after discard fails on the closed file: no fault of the disk.
      if (!this.#discarded) holding.diskFailed(error)
      return false
    }
    holding.diskWorked(use)
    if (!this.#spilled) {
      this.#spilled = true
      stats.spills++
      holding.onSpill?.()
    }
    this.#pushedBytes += size
    this.#onChunkDone?.(chunk)
    if (this.#discarded) return false
    this.#wakeSender()
    return true
  }

  /**
   * Holds `chunk` in memory past the process's bounds: for an answer that
   * holds nothing else (its client has taken every byte), so that it goes on
   * at its client's pace, one chunk ahead, as an answer with holding off does.
   */
  pushPastBounds(chunk: Buffer): boolean {
    if (this.#discarded || this.#ended) return false
    this.#memory.push(chunk)
    this.#pushedBytes += chunk.length
    this.#memoryBytes += chunk.length
    this.#holding.stats.memoryBytes += chunk.length
    this.#wakeSender()
    return true
  }

  /** Resolves once the sender has taken every byte held (or the answer is discarded). */
  async taken(): Promise<void> {
    while (!this.#discarded && this.heldBytes > 0) await this.nextTaken()
  }

  /** Resolves when the sender next takes bytes (or the answer is discarded). */
  nextTaken(): Promise<void> {
    if (this.#discarded) return Promise.resolve()
    return new Promise<void>((resolve) => this.#takers.push(resolve))
  }

  /** Whether `bytes` more would be held in memory now, not in the file. */
  fitsInMemory(bytes: number): boolean {
    const { stats, settings } = this.#holding
    return this.#writtenAt === this.#readAt && this.#memoryBytes + bytes <= ANSWER_MEMORY_BYTES && stats.memoryBytes + bytes <= settings.memoryBytes
  }

  /** No more chunks will come: the sender ends once it has taken the rest. */
  end(): void {
    this.#ended = true
    this.#wakeSender()
  }

  /** The next chunk for the socket, waiting for one; undefined once the answer is ended and all of it taken (or discarded). */
  async next(): Promise<Buffer | undefined> {
    for (;;) {
      if (this.#discarded) return undefined
      const inMemory = this.#memory.shift()
      if (inMemory !== undefined) {
        this.#memoryBytes -= inMemory.length
        this.#holding.stats.memoryBytes -= inMemory.length
        this.#wakeTakers()
        return inMemory
      }
      if (this.#writtenAt > this.#readAt) {
        const read = await this.#readFile()
        this.#wakeTakers()
        return read
      }
      if (this.#ended) return undefined
      await new Promise<void>((resolve) => { this.#wake = resolve })
    }
  }

  /**
   * Forgets every byte held and removes the file: the answer is sent, cut,
   * or its client is gone. Idempotent; later pushes return false.
   */
  async discard(): Promise<void> {
    if (this.#discarded) return
    this.#discarded = true
    this.#wakeTakers()
    this.#holding.stats.memoryBytes -= this.#memoryBytes
    this.#memoryBytes = 0
    for (const chunk of this.#memory.splice(0)) this.#onChunkDone?.(chunk)
    this.#wakeSender()
    await this.#onFile(async (file) => {
      await file.close()
    }, false).catch(() => {})
    this.#holding.stats.diskBytes -= this.#writtenAt - this.#readAt
    this.#readAt = this.#writtenAt
    if (this.#filePath !== undefined) rmSync(this.#filePath, { force: true })
  }

  async #readFile(): Promise<Buffer | undefined> {
    return await this.#onFile(async (file) => {
      const size = Math.min(FILE_READ_BYTES, this.#writtenAt - this.#readAt)
      // Given back by the sender once the socket has sent it (giveBackChunk).
      const buffer = fileReadPool.take()
      let bytesRead: number
      try {
        ({ bytesRead } = await file.read(buffer, 0, size, this.#readAt))
      } catch (error) {
        fileReadPool.giveBack(buffer)
        throw error
      }
      this.#readAt += bytesRead
      this.#holding.stats.diskBytes -= bytesRead
      // Read out: the next bytes start the file over, so it never grows past what is held.
      if (this.#readAt === this.#writtenAt) {
        await file.truncate(0)
        this.#readAt = 0
        this.#writtenAt = 0
      }
      return buffer.subarray(0, bytesRead)
    })
  }

  /** Runs `work` on the answer's file (opened on first use, 0600) after the file operations before it. */
  #onFile<T>(work: (file: FileHandle) => Promise<T>, opening = true): Promise<T> {
    const run = this.#fileQueue.then(async () => {
      if (this.#file === undefined) {
        if (!opening) throw new Error('no file')
        if (this.#discarded) throw new Error('discarded')
        this.#filePath = this.#holding.nextFilePath()
        this.#file = await open(this.#filePath, 'wx+', 0o600)
      }
      return await work(this.#file)
    })
    this.#fileQueue = run.catch(() => {})
    return run
  }

  #wakeTakers(): void {
    for (const wake of this.#takers.splice(0)) wake()
  }

  #wakeSender(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}

/** All of `chunk` at `position`: a write may take fewer bytes than it is given (a disk filling up), and the rest then fails with its own error. */
async function writeAll(file: FileHandle, chunk: Buffer, position: number): Promise<void> {
  for (let written = 0; written < chunk.length;) {
    const { bytesWritten } = await file.write(chunk, written, chunk.length - written, position + written)
    if (bytesWritten === 0) throw Object.assign(new Error('A held file took no byte.'), { code: 'EIO' })
    written += bytesWritten
  }
}
