// takeNiceness (server/niceness.ts) in a process of its own each time, started
// at a given niceness with nice(1): it raises, never lowers, says which, and
// reaches every thread. mayLowerNiceness reads /proc's text; ReportNiceness steps a
// process back while reports run, in a process of its own too.
import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import { getPriority } from 'node:os'
import { mayLowerNiceness, thisProcessMayLowerNiceness } from '../../server/niceness.ts'

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

describe('mayLowerNiceness (whether SERVICE_NICENESS can be taken only while reports run)', () => {
  const status = (capEff: string) => `Name:\tnode\nCapInh:\t0000000000000000\nCapPrm:\t${capEff}\nCapEff:\t${capEff}\nCapBnd:\t000001ffffffffff\n`
  const limits = (soft: string, hard = soft) => `Limit                     Soft Limit           Hard Limit           Units     \nMax open files            1024                 1048576              files     \nMax nice priority         ${soft.padEnd(20)} ${hard.padEnd(20)} \nMax realtime priority     0                    0                    \n`

  it('says yes with CAP_SYS_NICE (bit 23) among the effective capabilities, whatever the limit', () => {
    expect(mayLowerNiceness(0, status('000001ffffffffff'), limits('0'))).to.equal(true)
    expect(mayLowerNiceness(0, status('0000000000800000'), limits('0'))).to.equal(true)
  })

  it('says no without it and with the default RLIMIT_NICE of 0, or without the capability bit next to it', () => {
    expect(mayLowerNiceness(0, status('0000000000000000'), limits('0'))).to.equal(false)
    expect(mayLowerNiceness(0, status('00000000a87fffff'), limits('0'))).to.equal(false)
    expect(mayLowerNiceness(0, status('0000000001000000'), limits('0'))).to.equal(false)
  })

  it('says yes for a soft RLIMIT_NICE that reaches the niceness to go back to (20 - limit), and no for one short of it', () => {
    const none = status('0000000000000000')
    expect(mayLowerNiceness(0, none, limits('20'))).to.equal(true)
    expect(mayLowerNiceness(0, none, limits('19', '20'))).to.equal(false)
    expect(mayLowerNiceness(3, none, limits('17'))).to.equal(true)
    expect(mayLowerNiceness(3, none, limits('16'))).to.equal(false)
    expect(mayLowerNiceness(0, none, limits('40'))).to.equal(true)
    expect(mayLowerNiceness(0, none, limits('unlimited'))).to.equal(true)
  })

  it('says no when it cannot tell: no such lines, or a limit it cannot read', () => {
    expect(mayLowerNiceness(0, '', '')).to.equal(false)
    expect(mayLowerNiceness(0, status('0000000000000000'), limits('-1'))).to.equal(false)
    expect(mayLowerNiceness(0, 'CapEff:\tzz\n', limits('x'))).to.equal(false)
  })
})

/** What a script prints, run in a node process of its own (before: a command it runs under, as setpriv). */
function runScript(script: string, before: string[] = []): unknown {
  const [command, ...args] = [...before, process.execPath, '--import', 'tsx', '--input-type=module', '-e', script]
  const run = spawnSync(command, args, { encoding: 'utf8' })
  expect(run.status, run.stderr).to.equal(0)
  return JSON.parse(run.stdout)
}

/** setpriv(1) (util-linux) taking CAP_SYS_NICE away from what it runs, even as root. */
const WITHOUT_SYS_NICE = ['setpriv', '--bounding-set=-sys_nice', '--inh-caps=-sys_nice']

describe('ReportNiceness (SERVICE_NICENESS while reports run)', function () {
  before(function () {
    // Lowering again needs CAP_SYS_NICE here (the test runner's RLIMIT_NICE is 0 and cannot be raised without CAP_SYS_RESOURCE).
    if (getPriority() !== 0 || !thisProcessMayLowerNiceness(0)) this.skip()
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
    expect(runScript(script)).to.deep.equal({ before: [0], one: [10], afterFirstEnded: [10], running: 1, afterBoth: [0], running2: 0, stuck: 0 })
  })

  it('stays stepped back, and says so once, where lowering is refused after all', function () {
    if (spawnSync('setpriv', ['--version']).status !== 0) this.skip()
    expect(runScript(script, WITHOUT_SYS_NICE)).to.deep.equal({ before: [0], one: [10], afterFirstEnded: [10], running: 1, afterBoth: [10], running2: 0, stuck: 1 })
  })
})
