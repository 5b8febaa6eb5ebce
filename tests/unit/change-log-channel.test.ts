// The log source's questions from a worker to the reader in the primary
// (server/change-log-channel.ts), over a fake channel: each arrives as asked and
// its answer comes back as the reader gave it.
import { EventEmitter } from 'node:events'
import type { Worker } from 'node:cluster'
import { expect } from 'chai'
import { askPrimaryForChanges, serveChangeLog } from '../../server/change-log-channel.ts'
import type { ChangesFeed } from '../../server/change-source.ts'
import type { PrimaryLink } from '../../server/ipc.ts'
import type { ChangeLog, LogPosition } from '../../db/change-log.ts'

/** A worker and its primary joined by a channel that delivers each message on a later turn, as node:cluster's does. */
function channel(): { worker: Worker; primary: PrimaryLink } {
  const workerSide = new EventEmitter()
  const primarySide = new EventEmitter()
  const worker = Object.assign(workerSide, {
    isConnected: () => true,
    send: (message: unknown, callback: (error: Error | null) => void) => { setImmediate(() => { primarySide.emit('message', message); callback(null) }); return true },
  }) as unknown as Worker
  const primary: PrimaryLink = {
    connected: true,
    send: (message, callback) => { setImmediate(() => { workerSide.emit('message', message); callback(null) }) },
    on: (event, listener) => { primarySide.on(event, listener) },
  }
  return { worker, primary }
}

const at = (position: number): LogPosition => ({ file: 'bin.000001', position })

describe('the change log over the cluster\'s channel', () => {
  it('a worker\'s bookingsChangedSoFar and bookingsChanged reach the reader with their positions, and bring back its answers', async () => {
    const asked: string[] = []
    const reader: ChangeLog = {
      state: () => ({ connected: true }),
      serverPosition: async () => at(1),
      bookingsChanged: async (from, to) => { asked.push(`changed ${from.position}..${to.position}`); return { kind: 'changes', ids: [7, 3] } },
      bookingsChangedSoFar: async (from) => { asked.push(`so far ${from.position}`); return from.position > 50 ? { kind: 'not-now' } : { kind: 'changes', ids: [4], to: at(42) } },
      changedBetween: async () => 'unknown',
      stop: async () => {},
    }
    const feed: ChangesFeed = { source: async () => ({ kind: 'log', log: reader }), status: () => ({ source: 'log' }), stop: async () => {} }
    const { worker, primary } = channel()
    const served = serveChangeLog(feed)
    try {
      served.attach(worker)
      const source = await askPrimaryForChanges({ primary, marginMs: 1_000 }).source()
      if (source.kind !== 'log') throw new Error(`the worker's source is ${source.kind}`)
      expect(await source.log.bookingsChangedSoFar(at(10))).to.deep.equal({ kind: 'changes', ids: [4], to: at(42) })
      expect(await source.log.bookingsChangedSoFar(at(60))).to.deep.equal({ kind: 'not-now' })
      expect(await source.log.bookingsChanged(at(10), at(20), 1_000)).to.deep.equal({ kind: 'changes', ids: [7, 3] })
      expect(asked).to.deep.equal(['so far 10', 'so far 60', 'changed 10..20'])
    } finally {
      served.stop()
    }
  })
})
