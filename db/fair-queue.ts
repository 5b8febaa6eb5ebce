// The line that streamed answers wait in for one of DB_STREAM_CONNECTIONS'
// permits (API.md, "Under load"; docs/operations.md, "Under load"). Pure: no
// I/O, its clock and timers given, so the rules are unit-tested on their own.
// The same queue serves one process, or the cluster's primary on behalf of
// every worker (server/stream-permits.ts).
//
// - First come, first served, except that a caller already holding a permit
//   goes behind callers holding none (one script exporting in a loop must not
//   starve a dashboard), and that among either a short answer (`short`: a range
//   of at most a quarter) goes ahead of the others: forty full exports asked at
//   once kept a quarter's export waiting behind every one of them (issue 52).
// - Wide answers (`wide`: the whole table, or more than two years) hold at most
//   all the permits but one (one, when there is only one): forty full exports
//   once held both permits between them, so a quarter's export waited for one
//   of them to end, and ran beside the other (issue 52; decision 0031).
// - At most `maxWaiting` wait; each waits at most `timeoutMs`. Either refusal
//   carries a Retry-After estimated from the queue.

export type RefusalReason = 'queue_full' | 'waited_too_long'

/** How long an answer is expected to take (answerSize in server/domain/slots.ts): the line's order and the wide answers' share depend on it. */
export type AnswerSize = 'short' | 'long' | 'wide'

/** The most permits wide answers hold together: all but one, and at least one. */
export function wideAnswerPermits(permits: number): number {
  return Math.max(1, permits - 1)
}

export interface Refusal {
  reason: RefusalReason
  retryAfterSeconds: number
}

export interface FairQueueOptions {
  /** Permits at once: DB_STREAM_CONNECTIONS. */
  permits: number
  /** Waiting at most: DB_QUEUE_LENGTH. */
  maxWaiting: number
  /** Longest wait: DB_QUEUE_TIMEOUT_MS. */
  timeoutMs: number
  now?: () => number
  setTimer?: (run: () => void, ms: number) => unknown
  clearTimer?: (timer: unknown) => void
}

/** What the queue tells the one who entered: exactly one of these, once. */
export interface Entrant {
  granted(): void
  refused(refusal: Refusal): void
}

/** A place in the queue, or a permit once granted. leave() gives either back; it is idempotent. */
export interface Ticket {
  leave(): void
}

interface Waiter {
  caller: string
  entrant: Entrant
  timer: unknown
  ticket: TicketState
}

interface TicketState {
  state: 'waiting' | 'holding' | 'gone'
  caller: string
  size: AnswerSize
  grantedAt: number
}

/** Before any permit was given back, a hold is guessed to take this long (a year's export at a million bookings takes about that). */
export const FIRST_HOLD_GUESS_MS = 2_000
/** Retry-After never says more than this (and, a hold taking some time, never less than a second). */
export const MAX_RETRY_AFTER_SECONDS = 300

export class FairQueue {
  readonly #options: Required<FairQueueOptions>
  readonly #waiting: Waiter[] = []
  /** Permits held, by caller. */
  readonly #held = new Map<string, number>()
  #inUse = 0
  /** Permits held by wide answers (wideAnswerPermits). */
  #wideInUse = 0
  /** The average time a permit was held, over the last few (an exponential moving average). */
  #holdMs = FIRST_HOLD_GUESS_MS
  /** Told when the line goes from empty to not, and back (watchLine). */
  readonly #lineWatchers: Array<(waiting: boolean) => void> = []
  #lineWasWaiting = false

  constructor(options: FairQueueOptions) {
    this.#options = {
      now: Date.now,
      setTimer: (run, ms) => setTimeout(run, ms),
      clearTimer: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
      ...options,
    }
  }

  get inUse(): number { return this.#inUse }
  get waiting(): number { return this.#waiting.length }
  get permits(): number { return this.#options.permits }

  /** Calls `watcher` whenever someone starts waiting in an empty line (true), or the last one stops (false). */
  watchLine(watcher: (waiting: boolean) => void): void {
    this.#lineWatchers.push(watcher)
  }

  /** Seconds until a request that joins the line now would likely get a permit. */
  retryAfterSeconds(): number {
    const { permits } = this.#options
    const rounds = Math.ceil((this.#waiting.length + 1) / permits)
    const seconds = Math.ceil((rounds * this.#holdMs) / 1000)
    return Math.min(MAX_RETRY_AFTER_SECONDS, seconds)
  }

  /**
   * Joins the line for `caller`, with the answer's expected size (see the top of this file).
   * The entrant hears granted() or refused() once, unless it leaves first.
   */
  enter(caller: string, entrant: Entrant, size: AnswerSize = 'long'): Ticket {
    const ticket: TicketState = { state: 'waiting', caller, size, grantedAt: 0 }
    const leave = () => this.#leave(ticket)
    if (this.#inUse < this.#options.permits && this.#mayHold(ticket)) {
      this.#grant(ticket)
      entrant.granted()
      return { leave }
    }
    if (this.#waiting.length >= this.#options.maxWaiting) {
      ticket.state = 'gone'
      entrant.refused({ reason: 'queue_full', retryAfterSeconds: this.retryAfterSeconds() })
      return { leave }
    }
    const waiter: Waiter = { caller, entrant, ticket, timer: undefined }
    // Cleared when the waiter leaves or is granted: it fires only for one still waiting.
    waiter.timer = this.#options.setTimer(() => {
      this.#remove(waiter)
      ticket.state = 'gone'
      entrant.refused({ reason: 'waited_too_long', retryAfterSeconds: this.retryAfterSeconds() })
    }, this.#options.timeoutMs)
    this.#waiting.push(waiter)
    this.#tellLine()
    return { leave }
  }

  /** Whether a free permit may go to this ticket: a wide answer only within wideAnswerPermits. */
  #mayHold(ticket: TicketState): boolean {
    return ticket.size !== 'wide' || this.#wideInUse < wideAnswerPermits(this.#options.permits)
  }

  #grant(ticket: TicketState): void {
    ticket.state = 'holding'
    ticket.grantedAt = this.#options.now()
    this.#inUse++
    if (ticket.size === 'wide') this.#wideInUse++
    this.#held.set(ticket.caller, (this.#held.get(ticket.caller) ?? 0) + 1)
  }

  #leave(ticket: TicketState): void {
    // Asked by name: a ticket left, refused or timed out is 'gone', and a second leave() finds it so.
    if (ticket.state === 'gone') return
    if (ticket.state === 'waiting') {
      const waiter = this.#waiting.find((w) => w.ticket === ticket)!
      this.#remove(waiter)
      this.#options.clearTimer(waiter.timer)
      ticket.state = 'gone'
      return
    }
    ticket.state = 'gone'
    this.#inUse--
    if (ticket.size === 'wide') this.#wideInUse--
    const held = this.#held.get(ticket.caller)! - 1
    if (held === 0) this.#held.delete(ticket.caller)
    else this.#held.set(ticket.caller, held)
    const heldMs = this.#options.now() - ticket.grantedAt
    this.#holdMs = 0.8 * this.#holdMs + 0.2 * heldMs
    this.#admitNext()
  }

  /**
   * The freed permit goes to the first waiter whose caller holds none, a short
   * answer first; failing that, to the first short answer, then the first
   * waiter. A wide answer is passed over while wide ones hold their share: the
   * permit then stays free for the next answer that is not wide. One permit is
   * freed per call, and a waiter that may hold one was granted it on entering
   * when one was free, so one grant per call leaves no permit idle that a waiter could take.
   */
  #admitNext(): void {
    // Called as a permit is given back, so one is free.
    const may = this.#waiting.filter((w) => this.#mayHold(w.ticket))
    const next = may.find((w) => w.ticket.size === 'short' && !this.#held.has(w.caller))
      ?? may.find((w) => !this.#held.has(w.caller))
      ?? may.find((w) => w.ticket.size === 'short')
      ?? may[0]
    if (next === undefined) return
    this.#remove(next)
    this.#options.clearTimer(next.timer)
    this.#grant(next.ticket)
    next.entrant.granted()
  }

  #remove(waiter: Waiter): void {
    this.#waiting.splice(this.#waiting.indexOf(waiter), 1)
    this.#tellLine()
  }

  #tellLine(): void {
    const waiting = this.#waiting.length > 0
    if (waiting === this.#lineWasWaiting) return
    this.#lineWasWaiting = waiting
    for (const watcher of this.#lineWatchers) watcher(waiting)
  }
}
