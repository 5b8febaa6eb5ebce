// The signal a request's statements listen to for its client hanging up
// (server/http/cut-answer.ts): an AbortSignal's behaviour, without AbortController.
import { expect } from 'chai'
import { ClientGoneSignal } from '../../server/http/cut-answer.ts'

describe('ClientGoneSignal', () => {
  it('runs each listener still attached once, with the reason set, and none added after', () => {
    const signal = new ClientGoneSignal()
    const heard: string[] = []
    const first = () => heard.push(`first ${signal.reason?.message}`)
    const removed = () => heard.push('removed')
    signal.addEventListener('abort', first)
    signal.addEventListener('abort', removed)
    signal.addEventListener('abort', () => heard.push(`second ${String(signal.aborted)}`))
    signal.removeEventListener('abort', removed)
    expect(signal.aborted).to.equal(false)
    expect(signal.reason).to.equal(undefined)
    const gone = new Error('gone')
    signal.abort(gone)
    signal.abort(new Error('again'))
    signal.addEventListener('abort', () => heard.push('late'))
    expect(heard).to.deep.equal(['first gone', 'second true'])
    expect(signal.reason).to.equal(gone)
  })

  it('removing a listener never attached changes nothing', () => {
    const signal = new ClientGoneSignal()
    let runs = 0
    signal.addEventListener('abort', () => runs++)
    signal.removeEventListener('abort', () => runs++)
    signal.abort(new Error('gone'))
    expect(runs).to.equal(1)
  })
})
