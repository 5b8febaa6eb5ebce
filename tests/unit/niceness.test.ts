// takeNiceness (server/niceness.ts) in a process of its own each time, started
// at a given niceness with nice(1): it raises, never lowers, says which, and
// reaches every thread.
import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import { getPriority } from 'node:os'

const niceness = new URL('../../server/niceness.ts', import.meta.url).pathname

/** What takeNiceness(wanted) returns in a node process started `startedAt` nicer than this one. */
function takeIn(startedAt: number, wanted: number): unknown {
  const script = `import { takeNiceness } from ${JSON.stringify(niceness)}; process.stdout.write(JSON.stringify(takeNiceness(${wanted})))`
  const run = spawnSync('nice', ['-n', String(startedAt), process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
  expect(run.status, run.stderr).to.equal(0)
  return JSON.parse(run.stdout)
}

describe('takeNiceness (SERVICE_NICENESS)', function () {
  // nice(1) adds to the test runner's own niceness; run niced already, the cases below would not hold.
  before(function () {
    if (getPriority() !== 0) this.skip()
  })

  it('raises a process to the niceness wanted, and says from what', () => {
    expect(takeIn(0, 10)).to.deep.equal({ kind: 'taken', before: 0, now: 10 })
    expect(takeIn(3, 19)).to.deep.equal({ kind: 'taken', before: 3, now: 19 })
  })

  it('keeps a process started nicer still, or as nice as wanted: it never lowers a niceness', () => {
    expect(takeIn(15, 10)).to.deep.equal({ kind: 'kept', now: 15 })
    expect(takeIn(10, 10)).to.deep.equal({ kind: 'kept', now: 10 })
    expect(takeIn(0, 0)).to.deep.equal({ kind: 'kept', now: 0 })
  })

  it('raises every thread of the process, not only the one that asks (Linux gives each its own)', () => {
    const script = `import { readdirSync } from 'node:fs'; import { getPriority } from 'node:os'; import { takeNiceness } from ${JSON.stringify(niceness)};
      takeNiceness(10); const threads = readdirSync('/proc/self/task').map(Number); process.stdout.write(JSON.stringify(threads.map((t) => getPriority(t))))`
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
    expect(run.status, run.stderr).to.equal(0)
    const threads = JSON.parse(run.stdout) as number[]
    expect(threads.length).to.be.above(3)
    expect(threads).to.deep.equal(threads.map(() => 10))
  })
})
