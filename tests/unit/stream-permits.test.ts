// The permit protocol of WORKERS > 1 (server/stream-permits.ts), primary and
// workers joined by fake channels whose messages arrive only when a test
// delivers them: so a message can be held back (a silent primary), or two can
// cross (a `leave` on its way while a `granted` is on its way back).
import { expect } from 'chai'
import { EventEmitter } from 'node:events'
import { DbQueueRefusedError, type StreamGate } from '../../db/stream-gate.ts'
import { createClusterGate, servePermits, type PermitMessage, type PermitWorker } from '../../server/stream-permits.ts'
import type { PrimaryLink } from '../../server/ipc.ts'

/** One worker's channel, both ends: what each side sent, held until delivered. */
class FakeChannel {
  readonly toPrimary: unknown[] = []
  readonly toWorker: unknown[] = []
  connected = true
  readonly primaryEnd: PermitWorker & EventEmitter
  readonly workerEnd: PrimaryLink & EventEmitter

  constructor() {
    const isOpen = () => this.connected
    const toWorker = this.toWorker
    const toPrimary = this.toPrimary
    this.primaryEnd = Object.assign(new EventEmitter(), {
      isConnected: isOpen,
      send(message: unknown, callback: (error: Error | null) => void) {
        if (!isOpen()) throw new Error('a send to a gone worker reached the channel')
        toWorker.push(message)
        callback(null)
        return true
      },
    })
    this.workerEnd = Object.defineProperty(Object.assign(new EventEmitter(), {
      connected: true,
      send(message: unknown, callback: (error: Error | null) => void) {
        if (!isOpen()) throw new Error('a send to a gone primary reached the channel')
        toPrimary.push(message)
        callback(null)
      },
    }), 'connected', { get: isOpen })
  }

  /** Hands every message sent so far to the primary. */
  deliverToPrimary(): void {
    for (const message of this.toPrimary.splice(0)) this.primaryEnd.emit('message', message)
  }

  /** Hands every message sent so far to the worker. */
  deliverToWorker(): void {
    for (const message of this.toWorker.splice(0)) this.workerEnd.emit('message', message)
  }

  /** The worker dies: the channel closes, then node:cluster's 'exit'. */
  die(): void {
    this.connected = false
    this.toWorker.length = 0
    this.primaryEnd.emit('exit')
  }
}

/** A gate's promise, its outcome readable once settled. */
function track(promise: Promise<() => void>): { outcome: () => 'waiting' | 'granted' | Error; release: () => void } {
  let outcome: 'waiting' | 'granted' | Error = 'waiting'
  let release = () => {}
  promise.then((give) => { outcome = 'granted'; release = give }, (error: Error) => { outcome = error })
  return { outcome: () => outcome, release: () => release() }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

function primaryWithOnePermit(): ReturnType<typeof servePermits> {
  return servePermits({ permits: 1, maxWaiting: 10, timeoutMs: 60_000 })
}

function workerOn(channel: FakeChannel, timeoutMs = 60_000, silenceMarginMs = 5_000): StreamGate {
  return createClusterGate(timeoutMs, channel.workerEnd, silenceMarginMs)
}

const sentToPrimary = (channel: FakeChannel) => channel.toPrimary.map((message) => (message as PermitMessage).act)

describe('stream permits across the cluster (server/stream-permits.ts)', () => {
  it('a worker that dies holding a permit gives it back, and the next waiter, on another worker, is granted', async () => {
    const primary = primaryWithOnePermit()
    const [a, b] = [new FakeChannel(), new FakeChannel()]
    primary.attach(a.primaryEnd)
    primary.attach(b.primaryEnd)
    const holder = track(workerOn(a).enter({ caller: 'a' }))
    a.deliverToPrimary()
    a.deliverToWorker()
    await settle()
    expect(holder.outcome()).to.equal('granted')

    const waiter = track(workerOn(b).enter({ caller: 'b' }))
    b.deliverToPrimary()
    b.deliverToWorker()
    await settle()
    expect(waiter.outcome()).to.equal('waiting')
    expect(primary.queue.waiting).to.equal(1)

    a.die()
    b.deliverToWorker()
    await settle()
    expect(waiter.outcome()).to.equal('granted')
    expect(primary.queue.inUse).to.equal(1)
  })

  it('a worker that dies while waiting leaves the line: it is never granted a permit no one gives back', async () => {
    const primary = primaryWithOnePermit()
    const [a, b, c] = [new FakeChannel(), new FakeChannel(), new FakeChannel()]
    for (const channel of [a, b, c]) primary.attach(channel.primaryEnd)
    const holder = track(workerOn(a).enter({ caller: 'a' }))
    a.deliverToPrimary()
    track(workerOn(b).enter({ caller: 'b' }))
    b.deliverToPrimary()
    const third = track(workerOn(c).enter({ caller: 'c' }))
    c.deliverToPrimary()
    a.deliverToWorker()
    await settle()
    expect(primary.queue.waiting).to.equal(2)

    b.die()
    expect(primary.queue.waiting).to.equal(1)
    holder.release()
    a.deliverToPrimary()
    c.deliverToWorker()
    await settle()
    expect(third.outcome()).to.equal('granted')
  })

  it('a silent primary: a worker\'s wait ends at DB_QUEUE_TIMEOUT_MS plus the margin, refused with a Retry-After (503), and it says it left', async () => {
    const channel = new FakeChannel()
    const started = Date.now()
    const refusal = await workerOn(channel, 40, 60).enter({ caller: 'a' }).then(() => undefined, (error: Error) => error)
    const waitedMs = Date.now() - started
    expect(refusal).to.be.instanceOf(DbQueueRefusedError)
    expect((refusal as DbQueueRefusedError).reason).to.equal('waited_too_long')
    expect((refusal as DbQueueRefusedError).retryAfterSeconds).to.be.at.least(1)
    expect(waitedMs).to.be.within(95, 1_000)
    // The leave goes out so that a primary that answers late gives the permit back.
    expect(sentToPrimary(channel)).to.deep.equal(['enter', 'leave'])
  })

  it('a primary whose channel is closed: the wait is bounded all the same', async () => {
    const channel = new FakeChannel()
    channel.connected = false
    const entered = track(workerOn(channel, 20, 20).enter({ caller: 'a' }))
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(entered.outcome()).to.be.instanceOf(DbQueueRefusedError)
    expect(channel.toPrimary).to.deep.equal([])
  })

  it('a `leave` that crosses a `granted` (the client hung up as the permit came) does not leak the permit', async () => {
    const primary = primaryWithOnePermit()
    const channel = new FakeChannel()
    primary.attach(channel.primaryEnd)
    const gate = workerOn(channel)
    const hangUp = new AbortController()
    const first = track(gate.enter({ caller: 'a', signal: hangUp.signal }))
    channel.deliverToPrimary()
    expect(primary.queue.inUse).to.equal(1)
    // `granted` is on its way to the worker; the client hangs up before it arrives.
    hangUp.abort(new Error('gone'))
    await settle()
    expect(first.outcome()).to.be.instanceOf(Error)
    channel.deliverToWorker()
    channel.deliverToPrimary()
    expect(primary.queue.inUse).to.equal(0)

    const next = track(gate.enter({ caller: 'b' }))
    channel.deliverToPrimary()
    channel.deliverToWorker()
    await settle()
    expect(next.outcome()).to.equal('granted')
  })

  it('a `leave` that crosses a `granted` when the worker stopped waiting on its own (the silence bound) does not leak the permit', async () => {
    const primary = servePermits({ permits: 1, maxWaiting: 10, timeoutMs: 60_000 })
    const channel = new FakeChannel()
    primary.attach(channel.primaryEnd)
    const gate = workerOn(channel, 10, 10)
    const first = track(gate.enter({ caller: 'a' }))
    channel.deliverToPrimary()
    await new Promise((resolve) => setTimeout(resolve, 80))
    expect(first.outcome()).to.be.instanceOf(DbQueueRefusedError)
    channel.deliverToWorker()
    channel.deliverToPrimary()
    expect(primary.queue.inUse).to.equal(0)
  })

  it('the primary sends nothing to a worker that is gone, and does not throw', async () => {
    const primary = primaryWithOnePermit()
    const [a, b] = [new FakeChannel(), new FakeChannel()]
    primary.attach(a.primaryEnd)
    primary.attach(b.primaryEnd)
    track(workerOn(a).enter({ caller: 'a' }))
    a.deliverToPrimary()
    track(workerOn(b).enter({ caller: 'b' }))
    b.deliverToPrimary()
    // b's channel closes before its exit is known; a gives its permit back, and the line grants b.
    b.connected = false
    const toB = b.toWorker.length
    a.die()
    expect(b.toWorker.slice(toB)).to.deep.equal([])
    b.primaryEnd.emit('exit')
    expect(primary.queue.inUse).to.equal(0)
  })
  it('an answer\'s size reaches the primary\'s line: two wide answers from two workers take one permit of two, and a short one the other', async () => {
    const primary = servePermits({ permits: 2, maxWaiting: 10, timeoutMs: 60_000 })
    const [a, b] = [new FakeChannel(), new FakeChannel()]
    primary.attach(a.primaryEnd)
    primary.attach(b.primaryEnd)
    const wideA = track(workerOn(a).enter({ caller: 'a', size: 'wide' }))
    const wideB = track(workerOn(b).enter({ caller: 'b', size: 'wide' }))
    for (const channel of [a, b, a, b]) {
      channel.deliverToPrimary()
      channel.deliverToWorker()
    }
    await settle()
    expect([wideA.outcome(), wideB.outcome(), primary.queue.inUse]).to.deep.equal(['granted', 'waiting', 1])
    const quarter = track(workerOn(b).enter({ caller: 'c', size: 'short' }))
    b.deliverToPrimary()
    b.deliverToWorker()
    await settle()
    expect([quarter.outcome(), primary.queue.inUse]).to.deep.equal(['granted', 2])
  })

  it('a size the primary does not know (a worker of another version) waits as a long answer', () => {
    const primary = servePermits({ permits: 2, maxWaiting: 10, timeoutMs: 60_000 })
    const a = new FakeChannel()
    primary.attach(a.primaryEnd)
    for (const [id, size] of [[1, 'wide'], [2, 'huge'], [3, undefined]] as const) {
      a.primaryEnd.emit('message', { type: 'booking-calendar-api:permit', act: 'enter', id, caller: `c${id}`, size })
    }
    const grants = a.toWorker.filter((message) => (message as PermitMessage).act !== 'line')
    expect(grants.map((message) => (message as PermitMessage).act), 'huge and undefined are not wide: the second permit is theirs').to.deep.equal(['granted', 'granted'])
    expect((grants[1] as { id: number }).id).to.equal(2)
  })

  it('every worker hears when someone starts waiting in the line, and when no one waits any more (othersWaiting)', async () => {
    const primary = primaryWithOnePermit()
    const [a, b] = [new FakeChannel(), new FakeChannel()]
    primary.attach(a.primaryEnd)
    primary.attach(b.primaryEnd)
    const [gateA, gateB] = [workerOn(a), workerOn(b)]
    const first = track(gateA.enter({ caller: 'a' }))
    a.deliverToPrimary()
    a.deliverToWorker()
    await settle()
    expect([first.outcome(), gateA.othersWaiting(), gateB.othersWaiting()]).to.deep.equal(['granted', false, false])
    const second = track(gateB.enter({ caller: 'b' }))
    b.deliverToPrimary()
    a.deliverToWorker()
    b.deliverToWorker()
    expect([second.outcome(), gateA.othersWaiting(), gateB.othersWaiting()]).to.deep.equal(['waiting', true, true])
    first.release()
    a.deliverToPrimary()
    a.deliverToWorker()
    b.deliverToWorker()
    await settle()
    expect([second.outcome(), gateA.othersWaiting(), gateB.othersWaiting()]).to.deep.equal(['granted', false, false])
  })
})
