// The service now beside the service at a baseline commit (BENCH_ONLY=g;
// docs/performance.md, "Against the baseline"): is any report, export or
// small-request figure worse than at the baseline by more than this run's own
// noise? Every report the bench runs is compared, each by its whole download:
// (a) and (d) one at a time, (a) under load, (b) the year report, (c) as JSON
// and CSV, the year's summary/, a year's calendar feed, a month of
// availability/ windows. Both
// builds run at their defaults, started as the bench starts the service, on the
// bench's database, and are asked over HTTP only. The baseline runs as two
// independent instances, so that the spread between two runs of the same code
// (the A/A noise) is measured in the same rounds as the comparison.
import { spawnSync } from 'node:child_process'
import { existsSync, realpathSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BenchContext, Load, Serial } from './context.ts'
import { BENCH_QUERIES } from './queries.ts'
import { SUMMARY_PATH } from './summary.ts'
import { WINDOWS_PATH } from './availability.ts'

/** The commit compared with, the last release; BENCH_BASELINE_DIR names a checkout of it to use (built there if dist/ is missing). */
export const BASELINE_COMMIT = process.env.BENCH_BASELINE_COMMIT ?? '157e679'
/** Rounds in which the three instances take turns, each metric by each instance before the next metric. */
const ROUNDS = 3
const PREFIX = '/wp-json/booking-calendar/v1/'

/** What run.ts lends this phase: its own ways of starting the service and of measuring, so both builds are treated as the service is. */
export interface BaselineTools {
  /** The bench's service (run.ts startService: WORKERS, LOG_LEVEL, the reader's DATABASE_URL, the event-loop probe), from another main.js. */
  startService(label: string, main: string): Promise<{ url: string; stop(): Promise<void> }>
  serialTimes(url: string, seconds: number): Promise<number[]>
  serialSummary(times: number[]): Serial
  warmedLoad(url: string, latency: boolean, warmSeconds: number, seconds: number): Load
  combinedLoad(rounds: Load[]): Load
  /** One export by the bench's downloader (curl). */
  download(url: string): Promise<{ status: string; bytes: number; ms: number }>
  /** mysql2 alone streaming (c)'s rows in a process of its own (raw-sql.ts stream): rows/s. */
  floorRowsPerSecond(): number
  warmupSeconds: number
  workers: number
}

/** The baseline's built main.js: BENCH_BASELINE_DIR, or a worktree of BASELINE_COMMIT under the temp dir, made and built when missing. */
function baselineMain(repo: string, say: (line: string) => void): string {
  const dir = process.env.BENCH_BASELINE_DIR ?? join(tmpdir(), `bc-bench-baseline-${BASELINE_COMMIT}`)
  const run = (command: string, args: string[], cwd: string) => {
    const done = spawnSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} failed in ${cwd}`)
    return done.stdout.trim()
  }
  if (!existsSync(dir)) {
    say(`baseline: git worktree add --detach ${dir} ${BASELINE_COMMIT}`)
    // --force: the temp dir may have been emptied while git still lists the worktree.
    run('git', ['worktree', 'add', '--force', '--detach', dir, BASELINE_COMMIT], repo)
  }
  // A reused worktree of the default path must still be at the commit (BENCH_BASELINE_DIR is taken as given).
  const head = run('git', ['rev-parse', 'HEAD'], dir)
  if (process.env.BENCH_BASELINE_DIR === undefined && head !== run('git', ['rev-parse', `${BASELINE_COMMIT}^{commit}`], repo)) {
    throw new Error(`${dir} is at ${head}, not ${BASELINE_COMMIT}: remove it (git worktree remove ${dir})`)
  }
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(realpathSync(join(repo, 'node_modules')), join(dir, 'node_modules'))
  const main = join(dir, 'dist/server/main.js')
  if (!existsSync(main)) {
    say(`baseline: npm run build in ${dir}`)
    run('npm', ['run', 'build', '--silent'], dir)
  }
  say(`baseline: ${head.slice(0, 12)} (${main})`)
  return main
}

interface Metric {
  name: string
  better: 'higher' | 'lower'
  /** The figure of one instance over all rounds, or in round `r` alone; and how it is shown. */
  value(i: Instance, r?: number): number
  show(i: Instance): string
}

interface Instance {
  label: string
  url: string
  stop(): Promise<void>
  /** Per round, (a)'s times one at a time. */
  serial: number[][]
  /** Per round, (d)'s times one at a time. */
  serialD: number[][]
  loads: Load[]
  exports: Record<string, Array<{ status: string; ms: number }>>
  /** Per report, one download a round. */
  reports: Record<string, Array<{ status: string; ms: number }>>
}

/** The reports downloaded whole in each round, beside (c): every other report the bench runs, by the service's path. */
const REPORTS: Record<string, string> = {
  [`(b) ${BENCH_QUERIES.find((q) => q.key === 'b')!.name}`]: `${PREFIX}${BENCH_QUERIES.find((q) => q.key === 'b')!.path}`,
  'summary/, a year by month and service': SUMMARY_PATH,
  'ICS feed, a year of every booking': `${PREFIX}slots?format=ics&start=2025-01-01&end=2025-12-31`,
  'availability/, a month of every service\'s windows': WINDOWS_PATH,
}

/** How far apart two figures are, as a factor less 1, the same whichever is larger: 1.6 and 1 are 60 % apart, and so are 1 and 1.6. */
const apart = (a: number, b: number) => Math.max(a / b, b / a) - 1
const percent = (n: number) => `${(100 * n).toFixed(1)} %`

/** The measurement; its Markdown lines and its verdict. */
export async function benchAgainstBaseline(ctx: BenchContext, tools: BaselineTools, repo: string): Promise<{ lines: string[]; verdicts: string[] }> {
  const started = Date.now()
  const base = baselineMain(repo, (line) => ctx.say(line))
  const small = `${PREFIX}${BENCH_QUERIES.find((q) => q.key === 'a')!.path}`
  const smallD = `${PREFIX}${BENCH_QUERIES.find((q) => q.key === 'd')!.path}`
  const everything = `${PREFIX}${BENCH_QUERIES.find((q) => q.key === 'c')!.path}`
  const formats = { JSON: everything, CSV: `${everything}?format=csv` }
  // A and A′ run the same code: their difference is the noise the comparison of A with B must beat.
  const specs = [[`baseline ${BASELINE_COMMIT}`, base], ['current', join(repo, 'dist/server/main.js')], [`baseline ${BASELINE_COMMIT}, second instance`, base]] as const
  const instances: Instance[] = []
  const floors: number[] = []
  try {
    for (const [label, main] of specs) {
      instances.push({ ...await tools.startService(label, main), label, serial: [], serialD: [], loads: [], exports: { JSON: [], CSV: [] }, reports: Object.fromEntries(Object.keys(REPORTS).map((name) => [name, []])) })
    }
    const [a, b, a2] = instances as [Instance, Instance, Instance]
    // Warmed up as the bench warms the service: the load for WARMUP_SECONDS, each export for WARMUP_SECONDS a worker.
    for (const i of instances) {
      ctx.load(`${i.url}${small}`, ctx.connections, tools.warmupSeconds)
      for (const path of [...Object.values(formats), ...Object.values(REPORTS)]) {
        const until = Date.now() + tools.warmupSeconds * tools.workers * 1000
        for (let done = 0; tools.warmupSeconds > 0 && (done < tools.workers || Date.now() < until); done++) await tools.download(`${i.url}${path}`)
      }
    }
    const roundSeconds = Math.max(1, Math.round(ctx.seconds / ROUNDS))
    for (let round = 0; round < ROUNDS; round++) {
      // Each round in another order (A B A′, B A′ A, A′ A B), so no instance always follows the same one.
      const order = instances.map((_, k) => instances[(k + round) % instances.length]!)
      for (const i of order) i.serial.push(await tools.serialTimes(`${i.url}${small}`, ctx.seconds / ROUNDS))
      for (const i of order) i.serialD.push(await tools.serialTimes(`${i.url}${smallD}`, ctx.seconds / ROUNDS))
      for (const i of order) i.loads.push(tools.warmedLoad(`${i.url}${small}`, true, 1, roundSeconds))
      for (const [format, path] of Object.entries(formats)) {
        for (const i of order) i.exports[format]!.push(await tools.download(`${i.url}${path}`))
      }
      for (const [name, path] of Object.entries(REPORTS)) {
        for (const i of order) i.reports[name]!.push(await tools.download(`${i.url}${path}`))
      }
      floors.push(tools.floorRowsPerSecond())
    }
    const floor = Math.max(...floors)
    const serialOf = (i: Instance, r?: number) => tools.serialSummary(r === undefined ? i.serial.flat() : i.serial[r]!)
    const serialDOf = (i: Instance, r?: number) => tools.serialSummary(r === undefined ? i.serialD.flat() : i.serialD[r]!)
    // A report's figure is its fastest round, as an export's; a failed download counts as never done (Infinity ms).
    const reportMs = (i: Instance, name: string, r?: number) => {
      const runs = r === undefined ? i.reports[name]! : [i.reports[name]![r]!]
      if (runs.some((run) => run.status !== '200')) return Infinity
      return Math.min(...runs.map((run) => run.ms))
    }
    const reportShown = (i: Instance, name: string) => {
      const failed = i.reports[name]!.find((run) => run.status !== '200')
      return failed ? `failed (${failed.status})` : reportMs(i, name).toFixed(1)
    }
    const loadOf = (i: Instance, r?: number) => (r === undefined ? tools.combinedLoad(i.loads) : i.loads[r]!)
    // An export's figure is its fastest round, as in (c); a failed download counts as 0 rows/s.
    const rate = (i: Instance, format: string, r?: number) => {
      const runs = r === undefined ? i.exports[format]! : [i.exports[format]![r]!]
      if (runs.some((run) => run.status !== '200')) return 0
      return ctx.bookings / (Math.min(...runs.map((run) => run.ms)) / 1000)
    }
    const rowsPerSecond = (n: number) => `${Math.round(n).toLocaleString('en')} rows/s (${(ctx.bookings / n).toFixed(2)} s, ${(n / floor).toFixed(2)}× floor)`
    const metrics: Metric[] = [
      { name: '(a) one at a time, p50 ms', better: 'lower', value: (i, r) => serialOf(i, r).p50, show: (i) => serialOf(i).p50.toFixed(2) },
      { name: '(a) one at a time, mean ms', better: 'lower', value: (i, r) => serialOf(i, r).mean, show: (i) => serialOf(i).mean.toFixed(2) },
      {
        name: `(a) ${ctx.connections} connections, req/s`, better: 'higher', value: (i, r) => loadOf(i, r).rps,
        show: (i) => `${loadOf(i).rps.toFixed(0)}${loadOf(i).failures > 0 ? ` (failed: ${loadOf(i).failureKinds})` : ''}`,
      },
      { name: '(d) one at a time, p50 ms', better: 'lower', value: (i, r) => serialDOf(i, r).p50, show: (i) => serialDOf(i).p50.toFixed(2) },
      ...Object.keys(formats).map((format): Metric => ({
        name: `(c) everything, ${format}, customer data hidden`, better: 'higher', value: (i, r) => rate(i, format, r), show: (i) => rowsPerSecond(rate(i, format)),
      })),
      ...Object.keys(REPORTS).map((name): Metric => ({
        name: `${name}, ms to the last byte`, better: 'lower', value: (i, r) => reportMs(i, name, r), show: (i) => reportShown(i, name),
      })),
    ]
    const worse: string[] = []
    const rows = metrics.map((m) => {
      const ratio = m.value(b) / m.value(a)
      // The same code's spread: A′ against A over all rounds, and in each round alone (a round's
      // figure rests on fewer answers, so it spreads wider: the noise is not underrated).
      const rounds = Array.from({ length: ROUNDS }, (_, r) => r)
      const noise = Math.max(apart(m.value(a2), m.value(a)), ...rounds.map((r) => apart(m.value(a2, r), m.value(a, r))))
      const perRound = (i: Instance) => rounds.map((r) => m.value(i, r).toFixed(m.better === 'lower' ? 2 : 0)).join(' / ')
      ctx.say(`  ${m.name}, round by round: A ${perRound(a)}; B ${perRound(b)}; A′ ${perRound(a2)}`)
      // Worse (or better) by a factor: B at 0.6× of A is as far below as A′ at 1.67× of A is above.
      const worseBy = m.better === 'higher' ? 1 / ratio : ratio
      const verdict = Number.isNaN(worseBy) ? 'not measured' : worseBy - 1 > noise ? 'worse beyond noise' : 1 / worseBy - 1 > noise ? 'better' : 'within noise'
      if (verdict !== 'within noise' && verdict !== 'better') worse.push(m.name)
      return `| ${m.name} | ${m.show(a)} | ${m.show(b)} | ${ratio.toFixed(3)} | ${percent(noise)} (A′: ${m.show(a2)}) | ${verdict} |`
    })
    const seconds = (Date.now() - started) / 1000
    ctx.say(`against ${BASELINE_COMMIT}: ${worse.length === 0 ? 'nothing worse beyond noise' : `worse beyond noise: ${worse.join(', ')}`} (${seconds.toFixed(0)} s)`)
    const lines = [
      '', `### Against the baseline ${BASELINE_COMMIT}: the service at ${BASELINE_COMMIT} (A, and a second instance A′) and now (B), each at its defaults, in ${ROUNDS} rounds taking turns`, '',
      `(a) and (d) one at a time ${(ctx.seconds / ROUNDS).toFixed(1)} s a round and (a) at ${ctx.connections} connections ${roundSeconds} s a round (after 1 s unmeasured); (c) and every other report one download a round by the bench's downloader, the fastest of ${ROUNDS}; the mysql2 floor streamed once a round, the fastest: ${Math.round(floor).toLocaleString('en')} rows/s. ` +
      `A/A noise: the furthest A′ (the same code as A) fell from A on the same figure, over all rounds or in any one round, as a factor either way (A′ at 1.6× or at 0.625× of A: 60 %); a figure of B is worse beyond noise when it is further from A than that, on the worse side.`, '',
      '| metric | baseline (A) | current (B) | current ÷ baseline | A/A noise | verdict |', '|---|---:|---:|---:|---:|---|',
      ...rows,
    ]
    const verdicts = [
      `- ${worse.length === 0 ? '**met**' : '**NOT met**'}: no report, export or small-request figure worse than at ${BASELINE_COMMIT} by more than this run's A/A noise${worse.length === 0 ? '' : ` (worse: ${worse.join('; ')})`}`,
    ]
    return { lines, verdicts }
  } finally {
    for (const i of instances) await i.stop()
  }
}
