// takeNiceness (server/niceness.ts) in a process of its own each time, started
// at a given niceness with nice(1): it raises, never lowers, says which, and
// reaches every thread. planNiceness and ReportNiceness, each in a process of its
// own too: taken for good, or only while reports run.
import { expect } from 'chai'
import { getPriority } from 'node:os'
import { NO_LOWERING, noLoweringRuns, planIn, runNodeScript, runnerMayLowerNiceness } from '../support/niceness.ts'

const niceness = new URL('../../server/niceness.ts', import.meta.url).pathname

/** What takeNiceness(wanted) returns in a node process started `startedAt` nicer than this one. */
function takeIn(startedAt: number, wanted: number): unknown {
  return runNodeScript(`import { takeNiceness } from ${JSON.stringify(niceness)}; process.stdout.write(JSON.stringify(takeNiceness(${wanted})))`, ['nice', '-n', String(startedAt)])
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
    const threads = runNodeScript(script) as number[]
    expect(threads.length).to.be.above(3)
    expect(threads).to.deep.equal(threads.map(() => 10))
  })
})

describe('planNiceness (SERVICE_NICENESS for good, or only while reports run)', function () {
  before(function () {
    if (getPriority() !== 0) this.skip()
  })

  it('where a niceness can be lowered again (root here): every thread back as started, to step back while reports run', function () {
    if (!runnerMayLowerNiceness()) this.skip()
    expect(planIn(10)).to.deep.equal({ plan: { kind: 'while-reporting', base: 0, reporting: 10 }, threads: [0] })
    expect(planIn(19, ['nice', '-n', '3'])).to.deep.equal({ plan: { kind: 'while-reporting', base: 3, reporting: 19 }, threads: [3] })
  })

  it('where it cannot (RLIMIT_NICE 0, no CAP_SYS_NICE): every thread raised for good', function () {
    const under = runnerMayLowerNiceness() ? NO_LOWERING : []
    if (under.length > 0 && !noLoweringRuns()) this.skip()
    expect(planIn(10, under)).to.deep.equal({ plan: { kind: 'taken', before: 0, now: 10 }, threads: [10] })
  })

  it('keeps a process started as nice as wanted or nicer, whatever it may do', () => {
    expect(planIn(10, ['nice', '-n', '15'])).to.deep.equal({ plan: { kind: 'kept', now: 15 }, threads: [15] })
    expect(planIn(0)).to.deep.equal({ plan: { kind: 'kept', now: 0 }, threads: [0] })
  })
})

describe('ReportNiceness (SERVICE_NICENESS while reports run)', function () {
  before(function () {
    // Lowering again needs CAP_SYS_NICE here (the test runner's RLIMIT_NICE is 0 and cannot be raised without CAP_SYS_RESOURCE).
    if (getPriority() !== 0 || !runnerMayLowerNiceness()) this.skip()
  })

  const script = `import { readdirSync } from 'node:fs'; import { getPriority } from 'node:os'; import { ReportNiceness } from ${JSON.stringify(niceness)};
    const threads = () => [...new Set(readdirSync('/proc/self/task').map((t) => getPriority(Number(t))))]
    const stuck = []
    const reports = new ReportNiceness(0, 10, (reason) => stuck.push(reason))
    const seen = { before: threads() }
    const first = reports.startReport(); seen.one = threads()
    const second = reports.startReport(); first(); first(); seen.afterFirstEnded = threads(); seen.running = reports.reports
    second(); seen.afterBoth = threads(); seen.running2 = reports.reports; seen.stuck = stuck.length
    process.stdout.write(JSON.stringify(seen))`

  it('steps every thread back from the first report to the end of the last, once per end, then back', () => {
    expect(runNodeScript(script)).to.deep.equal({ before: [0], one: [10], afterFirstEnded: [10], running: 1, afterBoth: [0], running2: 0, stuck: 0 })
  })

  it('stays stepped back, and says so once, where lowering is refused after all', function () {
    if (!noLoweringRuns()) this.skip()
    expect(runNodeScript(script, NO_LOWERING)).to.deep.equal({ before: [0], one: [10], afterFirstEnded: [10], running: 1, afterBoth: [10], running2: 0, stuck: 1 })
  })
})
