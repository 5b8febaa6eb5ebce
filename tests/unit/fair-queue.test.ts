// The line for stream permits (API.md, "Under load"): first come first served,
// callers holding none first, a bounded length and wait, and a Retry-After
// estimated from the line. A fake clock and timers, so no test waits.
import { expect } from 'chai'
import { FairQueue, FIRST_HOLD_GUESS_MS, MAX_RETRY_AFTER_SECONDS, wideAnswerPermits, type AnswerSize, type Refusal, type Ticket } from '../../db/fair-queue.ts'

interface Clock {
  now: number
  timers: Array<{ at: number; run: () => void; cleared: boolean }>
  advance(ms: number): void
}

function fakeClock(): Clock {
  const clock: Clock = {
    now: 0,
    timers: [],
    advance(ms) {
      clock.now += ms
      for (const timer of [...clock.timers]) {
        if (!timer.cleared && timer.at <= clock.now) {
          timer.cleared = true
          timer.run()
        }
      }
    },
  }
  return clock
}

function queueOf(permits: number, options: { maxWaiting?: number; timeoutMs?: number } = {}) {
  const clock = fakeClock()
  const queue = new FairQueue({
    permits, maxWaiting: options.maxWaiting ?? 100, timeoutMs: options.timeoutMs ?? 30_000,
    now: () => clock.now,
    setTimer: (run, ms) => {
      const timer = { at: clock.now + ms, run, cleared: false }
      clock.timers.push(timer)
      return timer
    },
    clearTimer: (timer) => { (timer as { cleared: boolean }).cleared = true },
  })
  const events: string[] = []
  const refusals: Record<string, Refusal> = {}
  const enter = (name: string, caller = name, size: AnswerSize = 'long'): Ticket => queue.enter(caller, {
    granted: () => events.push(`${name} granted`),
    refused: (refusal) => {
      refusals[name] = refusal
      events.push(`${name} refused ${refusal.reason}`)
    },
  }, size)
  return { queue, clock, events, refusals, enter }
}

describe('FairQueue: the line for stream permits (DB_STREAM_CONNECTIONS)', () => {
  it('grants at once while permits are free, and makes the next wait', () => {
    const { queue, events, enter } = queueOf(2)
    enter('a')
    enter('b')
    enter('c')
    expect(events).to.deep.equal(['a granted', 'b granted'])
    expect(queue.inUse).to.equal(2)
    expect(queue.waiting).to.equal(1)
    expect(queue.permits).to.equal(2)
  })

  it('first come, first served between callers that hold nothing', () => {
    const { events, enter } = queueOf(1)
    const first = enter('a')
    enter('b')
    enter('c')
    enter('d')
    first.leave()
    expect(events).to.deep.equal(['a granted', 'b granted'])
  })

  it('hands each freed permit to the next in line, in order', () => {
    const { events, enter, queue } = queueOf(1)
    const a = enter('a')
    const b = enter('b')
    enter('c')
    a.leave()
    b.leave()
    expect(events).to.deep.equal(['a granted', 'b granted', 'c granted'])
    expect(queue.waiting).to.equal(0)
    expect(queue.inUse).to.equal(1)
  })

  it('fair between callers: a caller holding a permit goes behind one that holds none', () => {
    const { events, enter } = queueOf(2)
    const a1 = enter('a1', 'script')
    enter('a2', 'script')
    enter('a3', 'script')
    enter('b1', 'dashboard')
    a1.leave()
    expect(events).to.deep.equal(['a1 granted', 'a2 granted', 'b1 granted'])
  })

  it('a caller that holds nothing any more is first come, first served again', () => {
    const { events, enter } = queueOf(1)
    const a1 = enter('a1', 'script')
    enter('a2', 'script')
    enter('b1', 'dashboard')
    a1.leave()
    expect(events).to.deep.equal(['a1 granted', 'a2 granted'])
  })

  it('when every waiter\'s caller holds a permit, the first waiter goes first', () => {
    const { events, enter } = queueOf(2)
    const a1 = enter('a1', 'a')
    enter('b1', 'b')
    enter('b2', 'b')
    enter('a2', 'a')
    a1.leave()
    // a holds nothing now: a2 (a's) goes before b2, which came first but whose caller still holds b1.
    expect(events).to.deep.equal(['a1 granted', 'b1 granted', 'a2 granted'])
  })

  it('a short answer goes ahead of the others of one caller: a quarter behind forty full exports waits for one permit', () => {
    const { events, enter } = queueOf(2)
    const full = Array.from({ length: 40 }, (_, i) => enter(`full${i}`, 'site'))
    enter('quarter', 'site', 'short')
    full[0]!.leave()
    expect(events).to.deep.equal(['full0 granted', 'full1 granted', 'quarter granted'])
    full[1]!.leave()
    expect(events.at(-1), 'then first come, first served again').to.equal('full2 granted')
  })

  it('between callers, holding none still comes first; among them, a short answer first', () => {
    const { events, enter } = queueOf(2)
    enter('x1', 'script')
    const a1 = enter('a1', 'other')
    enter('x2', 'script', 'short')
    enter('b1', 'dashboard')
    enter('c1', 'calendar', 'short')
    a1.leave()
    expect(events, 'c1: short, its caller holding none; x2 is short, but its caller holds x1').to.deep.equal(['x1 granted', 'a1 granted', 'c1 granted'])
  })

  it('short answers among themselves: first come, first served', () => {
    const { events, enter } = queueOf(1)
    const first = enter('first', 'site')
    enter('long', 'site')
    enter('short1', 'site', 'short')
    enter('short2', 'site', 'short')
    first.leave()
    expect(events).to.deep.equal(['first granted', 'short1 granted'])
  })

  it('wide answers hold all permits but one: forty full exports leave a quarter its permit at once', () => {
    expect([1, 2, 3, 5].map(wideAnswerPermits)).to.deep.equal([1, 1, 2, 4])
    const { queue, events, enter } = queueOf(2)
    const full = Array.from({ length: 40 }, (_, i) => enter(`full${i}`, `reader${i}`, 'wide'))
    expect(events, 'the second permit stays free').to.deep.equal(['full0 granted'])
    expect(queue.inUse).to.equal(1)
    const quarter = enter('quarter', 'site', 'short')
    const year = enter('year', 'office', 'long')
    expect(events.slice(1), 'not wide: granted on entering').to.deep.equal(['quarter granted'])
    quarter.leave()
    expect(events.at(-1), 'the permit freed goes to the year, past thirty-nine wide answers that came first').to.equal('year granted')
    year.leave()
    expect(events.length, 'and stays free while a wide answer holds the other').to.equal(3)
    full[0]!.leave()
    expect(events.at(-1)).to.equal('full1 granted')
    expect(queue.inUse).to.equal(1)
  })

  it('with one permit, a wide answer may still hold it', () => {
    const { events, enter } = queueOf(1)
    const first = enter('full', 'a', 'wide')
    enter('next', 'b', 'wide')
    first.leave()
    expect(events).to.deep.equal(['full granted', 'next granted'])
  })

  it('with three permits, two wide answers hold two and a third waits while one is free', () => {
    const { queue, events, enter } = queueOf(3)
    const tickets = ['w1', 'w2', 'w3'].map((name) => enter(name, name, 'wide'))
    expect([events, queue.inUse, queue.waiting]).to.deep.equal([['w1 granted', 'w2 granted'], 2, 1])
    enter('long', 'x')
    expect(events.at(-1)).to.equal('long granted')
    tickets[0]!.leave()
    expect(events.at(-1)).to.equal('w3 granted')
  })

  it('counts a caller\'s permits: one given back of two still holds one', () => {
    const { events, enter } = queueOf(3)
    const a1 = enter('a1', 'a')
    enter('a2', 'a')
    const c1 = enter('c1', 'c')
    enter('a3', 'a')
    enter('b1', 'b')
    a1.leave()
    // a still holds a2: b1 goes first.
    expect(events.slice(3)).to.deep.equal(['b1 granted'])
    c1.leave()
    expect(events.slice(4)).to.deep.equal(['a3 granted'])
  })

  it('DB_QUEUE_LENGTH: one more than may wait is refused at once, queue_full', () => {
    const { events, enter, queue } = queueOf(1, { maxWaiting: 2 })
    enter('a')
    enter('b')
    enter('c')
    enter('d')
    expect(events).to.deep.equal(['a granted', 'd refused queue_full'])
    expect(queue.waiting).to.equal(2)
  })

  it('DB_QUEUE_LENGTH=0: nobody waits; a free permit is still granted', () => {
    const { events, enter } = queueOf(1, { maxWaiting: 0 })
    enter('a')
    enter('b')
    expect(events).to.deep.equal(['a granted', 'b refused queue_full'])
  })

  it('DB_QUEUE_TIMEOUT_MS: a wait that runs out is refused, waited_too_long, and leaves the line', () => {
    const { events, enter, clock, queue } = queueOf(1, { timeoutMs: 1_000 })
    enter('a')
    enter('b')
    clock.advance(999)
    expect(events).to.deep.equal(['a granted'])
    clock.advance(1)
    expect(events).to.deep.equal(['a granted', 'b refused waited_too_long'])
    expect(queue.waiting).to.equal(0)
  })

  it('a granted waiter\'s timer is stopped: no refusal after the grant', () => {
    const { events, enter, clock } = queueOf(1, { timeoutMs: 1_000 })
    const a = enter('a')
    enter('b')
    clock.advance(500)
    a.leave()
    clock.advance(5_000)
    expect(events).to.deep.equal(['a granted', 'b granted'])
  })

  it('a waiter that leaves (its client hung up) frees its place at once, and hears nothing', () => {
    const { events, enter, queue, clock } = queueOf(1, { maxWaiting: 1, timeoutMs: 1_000 })
    const a = enter('a')
    const b = enter('b')
    b.leave()
    expect(queue.waiting).to.equal(0)
    enter('c')
    clock.advance(500)
    a.leave()
    clock.advance(5_000)
    expect(events).to.deep.equal(['a granted', 'c granted'])
  })

  it('a waiter behind others that leaves takes its own place out, not another\'s', () => {
    const { events, enter, queue } = queueOf(1)
    const a = enter('a')
    enter('b')
    const c = enter('c')
    enter('d')
    c.leave()
    expect(queue.waiting).to.equal(2)
    a.leave()
    expect(events).to.deep.equal(['a granted', 'b granted'])
  })

  it('with its own timers (setTimeout): a wait runs out on the clock, and a granted waiter\'s timer is cleared', async () => {
    const queue = new FairQueue({ permits: 1, maxWaiting: 10, timeoutMs: 30 })
    const heard: string[] = []
    const entrant = (name: string) => ({ granted: () => heard.push(`${name} granted`), refused: (r: Refusal) => heard.push(`${name} ${r.reason}`) })
    const a = queue.enter('a', entrant('a'))
    queue.enter('b', entrant('b'))
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(heard).to.deep.equal(['a granted', 'b waited_too_long'])
    queue.enter('c', entrant('c'))
    a.leave()
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(heard).to.deep.equal(['a granted', 'b waited_too_long', 'c granted'])
    expect(queue.waiting).to.equal(0)
  })

  it('leave() is idempotent: a permit given back twice frees one permit', () => {
    const { events, enter, queue } = queueOf(2)
    const a = enter('a')
    enter('b')
    enter('c')
    enter('d')
    a.leave()
    a.leave()
    expect(events).to.deep.equal(['a granted', 'b granted', 'c granted'])
    expect(queue.inUse).to.equal(2)
  })

  it('leave() after a refusal changes nothing', () => {
    const { enter, queue } = queueOf(1, { maxWaiting: 0 })
    enter('a')
    const refused = enter('b')
    refused.leave()
    expect(queue.inUse).to.equal(1)
  })

  it('leave() after a wait that ran out changes nothing: the permit held stays held, the next in line waits', () => {
    const { events, enter, queue, clock } = queueOf(1, { timeoutMs: 1_000 })
    enter('a')
    const late = enter('b')
    clock.advance(1_000)
    late.leave()
    enter('c')
    expect([queue.inUse, queue.waiting]).to.deep.equal([1, 1])
    expect(events).to.deep.equal(['a granted', 'b refused waited_too_long'])
  })

  it('leave() twice by a waiter that left the line changes nothing the second time', () => {
    const { events, enter, queue } = queueOf(1)
    enter('a')
    const b = enter('b')
    b.leave()
    b.leave()
    enter('c')
    expect([queue.inUse, queue.waiting]).to.deep.equal([1, 1])
    expect(events).to.deep.equal(['a granted'])
  })

  it('Retry-After: from the line\'s length, the permits and the time a permit is held', () => {
    const { enter, clock, refusals, queue } = queueOf(2, { maxWaiting: 3 })
    // Nothing given back yet: a hold is guessed at FIRST_HOLD_GUESS_MS.
    expect(queue.retryAfterSeconds()).to.equal(Math.ceil(FIRST_HOLD_GUESS_MS / 1000))
    // Granted at 5 s: what counts is how long it is held, not when it was granted.
    clock.advance(5_000)
    const a = enter('a')
    enter('b')
    clock.advance(10_000)
    a.leave() // held 10 s: the average moves a fifth of the way, to 3.6 s
    enter('c')
    enter('d')
    enter('e')
    enter('f')
    enter('g')
    // c took the free permit; d, e and f wait; two permits: g would wait two rounds of 3.6 s.
    expect(refusals.g).to.deep.equal({ reason: 'queue_full', retryAfterSeconds: 8 })
  })

  it('Retry-After of a wait that ran out counts the line left behind', () => {
    const { enter, clock, refusals } = queueOf(1, { timeoutMs: 3_000 })
    enter('a')
    enter('b')
    enter('c')
    clock.advance(3_000)
    // b's refusal: c is still waiting, one permit, 2 s a hold (the first guess): (1 + 1) × 2 s.
    expect(refusals.b).to.deep.equal({ reason: 'waited_too_long', retryAfterSeconds: 4 })
  })

  it('Retry-After is at least one second and at most MAX_RETRY_AFTER_SECONDS', () => {
    const quick = queueOf(10)
    // Ten holds of no time take the average from 2 s to about 0.2 s.
    for (let i = 0; i < 10; i++) quick.enter(`h${i}`).leave()
    expect(quick.queue.retryAfterSeconds()).to.equal(1)

    const slow = queueOf(1, { maxWaiting: 1_000 })
    for (let i = 0; i < 500; i++) slow.enter(`s${i}`)
    expect(slow.queue.retryAfterSeconds()).to.equal(MAX_RETRY_AFTER_SECONDS)
  })
})
