// The primary's restart budget: a worker that dies is restarted, but a
// crash loop ends instead of forking forever.
import { expect } from 'chai'
import { restartAllowed, RESTART_LIMIT, RESTART_WINDOW_MS } from '../../server/cluster.ts'

describe('the restart budget', () => {
  it('allows RESTART_LIMIT restarts within the window and refuses the next', () => {
    let recent: number[] = []
    for (let i = 0; i < RESTART_LIMIT; i++) {
      const next = restartAllowed(recent, 1_000 + i)
      expect(next.allowed, `restart ${i + 1}`).to.equal(true)
      recent = next.recent
    }
    expect(restartAllowed(recent, 2_000).allowed).to.equal(false)
  })

  it('forgets restarts older than the window', () => {
    const old = Array.from({ length: RESTART_LIMIT }, (_, i) => i)
    const next = restartAllowed(old, RESTART_WINDOW_MS + 10)
    expect(next).to.deep.equal({ allowed: true, recent: [RESTART_WINDOW_MS + 10] })
  })
})
