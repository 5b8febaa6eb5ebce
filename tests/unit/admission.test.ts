// A request's admission (server/http/admission.ts) through a real line
// (db/stream-gate.ts): a report steps its process back (SERVICE_NICENESS) from
// its permit to its answer's end, and nothing else does.
import { expect } from 'chai'
import { EventEmitter } from 'node:events'
import type { Request, Response } from 'express'
import { admitRequest } from '../../server/http/admission.ts'
import { createLocalGate } from '../../db/stream-gate.ts'
import type { ReportNiceness } from '../../server/niceness.ts'
import type { AnswerSize } from '../../db/fair-queue.ts'

/** A response as admitRequest sees it: its 'close', whether it closed, its locals. */
function fakeResponse(): Response & EventEmitter {
  return Object.assign(new EventEmitter(), { closed: false, writableFinished: false, locals: {} }) as unknown as Response & EventEmitter
}

const request = { get: () => undefined, query: {}, ip: '127.0.0.1', socket: {} } as unknown as Request

/** A ReportNiceness that counts its reports' starts and ends. */
function countingNiceness(): { niceness: ReportNiceness; starts: number; ends: number } {
  const counts = { starts: 0, ends: 0 }
  const niceness = { startReport: () => { counts.starts++; return () => { counts.ends++ } } } as unknown as ReportNiceness
  return Object.assign(counts, { niceness })
}

describe('admitRequest with SERVICE_NICENESS while reports run', () => {
  const gate = () => createLocalGate({ permits: 4, maxWaiting: 4, timeoutMs: 1_000 })

  it('starts a report when a long or wide answer (or one of no size) gets its permit, and ends it when its response closes', async () => {
    const counted = countingNiceness()
    const line = gate()
    const responses = [fakeResponse(), fakeResponse(), fakeResponse()]
    const sizes: (AnswerSize | undefined)[] = ['wide', 'long', undefined]
    const leaves = await Promise.all(responses.map((res, at) => {
      const admission = admitRequest(request, res, counted.niceness)
      admission.size = sizes[at]
      return line.enter(admission)
    }))
    expect([counted.starts, counted.ends]).to.deep.equal([3, 0])
    // The permit given back is not the end: a held answer is still sent to its client.
    for (const leave of leaves) leave()
    expect(counted.ends).to.equal(0)
    responses[0]!.emit('close')
    expect(counted.ends).to.equal(1)
    responses[1]!.emit('close')
    responses[2]!.emit('close')
    expect([counted.starts, counted.ends]).to.deep.equal([3, 3])
  })

  /** A request of `size` admitted and granted its permit, then given back; `closedFirst`: its response closed before the permit came. */
  async function grantedOnce(size: AnswerSize, closedFirst: boolean): Promise<{ starts: number; ends: number }> {
    const counted = countingNiceness()
    const res = fakeResponse()
    const admission = admitRequest(request, res, counted.niceness)
    admission.size = size
    if (closedFirst) (res as unknown as { closed: boolean }).closed = true
    ;(await gate().enter(admission))()
    if (!closedFirst) res.emit('close')
    return { starts: counted.starts, ends: counted.ends }
  }

  it('leaves a short answer as it is', async () => {
    expect(await grantedOnce('short', false)).to.deep.equal({ starts: 0, ends: 0 })
  })

  it('starts nothing for a response already closed when the permit comes', async () => {
    expect(await grantedOnce('wide', true)).to.deep.equal({ starts: 0, ends: 0 })
  })

  it('adds nothing to an admission without it (tests, or SERVICE_NICENESS taken for good at start)', () => {
    const admission = admitRequest(request, fakeResponse())
    expect(admission).to.not.have.property('onGranted')
  })
})
