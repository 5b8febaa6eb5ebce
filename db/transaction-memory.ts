// What the log source's reader remembers (db/binlog-change-log.ts): per
// transaction that touched what an answer is made of, its end, its booking ids,
// and why it expires earlier positions (only those transactions are held). Kept as
// parallel arrays of numbers, not an object per transaction: a million
// one-booking transactions take some 40 MB, where objects took 155 MB.
import { comparePositions, type LogPosition } from './change-log.ts'

/** What (from, to] holds. */
export interface Between {
  /** Each id once, in the order of its last change (API.md: one booking at most once, in its last state). */
  ids: number[]
  /** Any booking, rule, service post or watched option changed, or a reset. */
  changed: boolean
  /** The first reset in the range: a statement that expires every earlier position. */
  reset?: { reason: string; at: LogPosition }
}

export class TransactionMemory {
  /** Memory holds every such transaction ending after this position. */
  start: LogPosition
  /** Booking ids held, plus one per transaction: what the cap counts. */
  size = 0
  private readonly files: string[] = []
  private fileOf: number[] = []
  private endOf: number[] = []
  /** Where each transaction's ids start in `ids`; they end where the next one's start. */
  private idFrom: number[] = []
  private ids: number[] = []
  /** Reasons of resets, by index in the arrays. */
  private resets = new Map<number, string>()
  /** Transactions before `head` are forgotten; the arrays are cut now and then. */
  private head = 0

  constructor(start: LogPosition) {
    this.start = start
  }

  get count(): number {
    return this.endOf.length - this.head
  }

  /** A transaction that changed what an answer is made of (bookings `ids`, or something else), in commit order. */
  push(end: LogPosition, ids: readonly number[], reset?: string): void {
    let file = this.files.length - 1
    if (file < 0 || this.files[file] !== end.file) {
      this.files.push(end.file)
      file += 1
    }
    const index = this.endOf.length
    this.fileOf.push(file)
    this.endOf.push(end.position)
    this.idFrom.push(this.ids.length)
    for (const id of ids) this.ids.push(id)
    if (reset !== undefined) this.resets.set(index, reset)
    this.size += ids.length + 1
  }

  /** The oldest transaction's end; undefined when none is held. */
  oldestEnd(): LogPosition | undefined {
    return this.head < this.endOf.length ? this.endAt(this.head) : undefined
  }

  /** Forgets the oldest transaction: memory starts at its end. */
  forgetOldest(): void {
    if (this.head >= this.endOf.length) return
    this.size -= this.idsEnd(this.head) - this.idFrom[this.head]! + 1
    this.start = this.endAt(this.head)
    this.resets.delete(this.head)
    this.head += 1
    if (this.head > 1024 && this.head * 2 > this.endOf.length) this.compact()
  }

  /** What the transactions ending in (from, to] changed; `from` must not be before `start`. */
  between(from: LogPosition, to: LogPosition): Between {
    let low = this.head
    let high = this.endOf.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (comparePositions(this.endAt(middle), from) <= 0) low = middle + 1
      else high = middle
    }
    const order = new Map<number, true>()
    let changed = false
    let reset: Between['reset']
    for (let i = low; i < this.endOf.length && comparePositions(this.endAt(i), to) <= 0; i++) {
      changed = true
      const reason = this.resets.get(i)
      if (reason !== undefined && reset === undefined) reset = { reason, at: this.endAt(i) }
      for (let j = this.idFrom[i]!; j < this.idsEnd(i); j++) {
        const id = this.ids[j]!
        order.delete(id)
        order.set(id, true)
      }
    }
    return { ids: [...order.keys()], changed, ...(reset && { reset }) }
  }

  private endAt(index: number): LogPosition {
    return { file: this.files[this.fileOf[index]!]!, position: this.endOf[index]! }
  }

  private idsEnd(index: number): number {
    return index + 1 < this.idFrom.length ? this.idFrom[index + 1]! : this.ids.length
  }

  private compact(): void {
    const cut = this.head
    const idCut = this.idFrom[cut] ?? this.ids.length
    this.fileOf = this.fileOf.slice(cut)
    this.endOf = this.endOf.slice(cut)
    this.idFrom = this.idFrom.slice(cut).map((from) => from - idCut)
    this.ids = this.ids.slice(idCut)
    this.resets = new Map([...this.resets].map(([index, reason]) => [index - cut, reason]))
    this.head = 0
  }
}
