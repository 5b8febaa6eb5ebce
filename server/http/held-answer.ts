// Held answers (API.md, "Under load"; decision 0028): the bytes of a streamed
// answer that its client has not read yet, kept in memory and then in a
// temporary file, as nginx's proxy buffering keeps them, so that the database
// statement and its stream permit are done as soon as the rows are out, not
// when a slow client has read them. A process holds at most HOLD_MEMORY_BYTES
// in memory and HOLD_DISK_BYTES on disk over all its answers; an answer that
// would hold more is cut (cut-answer.ts), never made to wait with its permit.
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { FILE_READ_BYTES, fileReadPool } from './chunk-pool.ts'

/** The most one answer holds in memory before the rest of it goes to its file: a few chunks, so many slow clients share HOLD_MEMORY_BYTES. */
export const ANSWER_MEMORY_BYTES = 4 * 1024 * 1024

export interface HoldSettings {
  /** Bytes held in memory by all the process's answers together (HOLD_MEMORY_BYTES). */
  memoryBytes: number
  /** Bytes held in temporary files by all the process's answers together (HOLD_DISK_BYTES). */
  diskBytes: number
  /** The service's directory for them (HOLD_DIR): each process writes in a directory of its own under it, named by its pid. */
  dir: string
}

/** What the process holds now, for GET /metrics. */
export interface HoldStats {
  memoryBytes: number
  diskBytes: number
  /** Answers that went on to a temporary file, since start. */
  spills: number
}

/**
 * The held answers of one process (one per app): their bounds, their counts
 * and the directory of their files. Holding is off when both bounds are 0: a
 * client that reads slowly then holds its stream permit, as before 0028.
 */
export class AnswerHolding {
  readonly stats: HoldStats = { memoryBytes: 0, diskBytes: 0, spills: 0 }
  readonly settings: HoldSettings
  /** Called when an answer first goes on to its file (GET /metrics counts it). */
  onSpill: (() => void) | undefined
  #processDir: string | undefined
  #files = 0

  constructor(settings: HoldSettings) {
    this.settings = settings
  }

  get enabled(): boolean {
    return this.settings.memoryBytes > 0 || this.settings.diskBytes > 0
  }

  open(onChunkDone?: (chunk: Buffer) => void): HeldAnswer {
    return new HeldAnswer(this, onChunkDone)
  }

  /** A new file's path in this process's directory, made (0700) on first use and removed when the process exits. */
  nextFilePath(): string {
    if (this.#processDir === undefined) {
      const dir = join(this.settings.dir, String(process.pid))
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      removeAtExit(dir)
      this.#processDir = dir
    }
    return join(this.#processDir, `${++this.#files}-${randomBytes(6).toString('hex')}.held`)
  }
}

/** The process's directories of held files, removed by one listener when it exits. */
const exitRemoves = new Set<string>()

/** A normal exit leaves nothing; a crash leaves the directory for the next start's sweep (sweepHeldFiles). */
function removeAtExit(dir: string): void {
  if (exitRemoves.size === 0) process.once('exit', () => { for (const each of exitRemoves) rmSync(each, { recursive: true, force: true }) })
  exitRemoves.add(dir)
}

/**
 * Removes the held files of processes that are gone (a crash, a kill): each
 * process's directory under `dir` is named by its pid. Run at the start of
 * each serving process (every worker, or the one process of WORKERS=1), so a
 * worker forked again sweeps the one that died. Returns how many directories went.
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
    const pid = /^\d+$/.test(entry) ? Number(entry) : undefined
    // A directory of this pid is an earlier process's that had it: none is made before this sweep.
    if (pid !== undefined && pid !== process.pid && isRunning(pid)) continue
    rmSync(join(dir, entry), { recursive: true, force: true })
    removed++
  }
  return removed
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
   * spent (or the answer was discarded): the answer must be cut. A chunk held
   * in memory is kept as it is; one written to the file is given to
   * onChunkDone (its buffer may be used again) once written; one held in
   * memory is given to it if the answer is discarded before sending it.
   */
  async push(chunk: Buffer): Promise<boolean> {
    if (this.#discarded || this.#ended) return false
    const { stats, settings } = this.#holding
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
    stats.diskBytes += size
    if (!this.#spilled) {
      this.#spilled = true
      stats.spills++
      this.#holding.onSpill?.()
    }
    try {
      await this.#onFile(async (file) => {
        await file.write(chunk, 0, size, this.#writtenAt)
        this.#writtenAt += size
      })
    } catch (error) {
      stats.diskBytes -= size
      if (this.#discarded) return false
      throw error
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
    while (!this.#discarded && this.heldBytes > 0) await new Promise<void>((resolve) => this.#takers.push(resolve))
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
