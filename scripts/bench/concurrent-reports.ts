// Concurrent reports beside a live site (issue 43; docs/performance.md):
// REPORT_CLIENTS clients ask for the same year report, each as soon as its
// last answer ended, for REPORT_SECONDS, while a probe asks WordPress's own
// /wp-json/wp/v2/posts?per_page=5 every 200 ms (the site's visitors). In turn:
// nothing else (idle), through WordPress's PHP route, through the service at
// its default settings, and the floor: as many `mariadb` command-line clients
// running the service's own statement. 2xx and other answers are counted apart.
// Every contender's clients are processes of their own (curl, mariadb), so the
// bench process only times the probe.
import { spawn, type ChildProcess } from 'node:child_process'
import { setMaxListeners } from 'node:events'
import { request, Agent } from 'node:http'
import mysql from 'mysql2'
import type { BenchContext, ReaderDb } from './context.ts'

export const REPORT_CLIENTS = 16
export const REPORT_SECONDS = Number(process.env.BENCH_REPORT_SECONDS ?? 30)
const PROBE_EVERY_MS = 200
const PROBE_PATH = '/wp-json/wp/v2/posts?per_page=5'

export interface Tally {
  ok: number
  notOk: number
  errors: number
  /** Non-2xx statuses and errors seen, with their counts. */
  kinds: Map<string, number>
}

interface ProbeResult { answered: number; sent: number; p50: number; p99: number }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** One GET, the body read and dropped; resolves with the status, or rejects on an error or `signal`. */
export function getAndDrop(url: string, agent: Agent, signal: AbortSignal, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, signal, headers }, (res) => {
      res.on('data', () => {})
      res.on('end', () => resolve(res.statusCode!))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

/** The site's visitors: a GET every 200 ms until `until`, each timed; one still unanswered then is not. */
async function probeSite(wordpressUrl: string, until: number, signal: AbortSignal): Promise<ProbeResult> {
  const agent = new Agent({ keepAlive: false })
  const latencies: number[] = []
  const pending: Promise<void>[] = []
  let sent = 0
  while (Date.now() < until) {
    const started = process.hrtime.bigint()
    sent++
    pending.push(getAndDrop(`${wordpressUrl}${PROBE_PATH}`, agent, signal).then((status) => {
      if (status >= 200 && status < 300) latencies.push(Number(process.hrtime.bigint() - started) / 1e6)
    }, () => {}))
    await sleep(PROBE_EVERY_MS)
  }
  await Promise.all(pending)
  latencies.sort((a, b) => a - b)
  return { answered: latencies.length, sent, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

function tally(): Tally {
  return { ok: 0, notOk: 0, errors: 0, kinds: new Map() }
}

function count(t: Tally, kind: string): void {
  t.kinds.set(kind, (t.kinds.get(kind) ?? 0) + 1)
}

/** REPORT_CLIENTS HTTP clients asking `url` back to back until `until`; what ends after it is not counted. */
async function httpReports(url: string, until: number, signal: AbortSignal, headers?: Record<string, string>): Promise<Tally> {
  const t = tally()
  await Promise.all(Array.from({ length: REPORT_CLIENTS }, async () => {
    // A connection per report, as php -S closes each after its answer: the same for both contenders.
    const agent = new Agent({ keepAlive: false, maxSockets: 1 })
    while (Date.now() < until) {
      try {
        const status = await getAndDrop(url, agent, signal, headers)
        if (Date.now() > until) break
        if (status >= 200 && status < 300) t.ok++
        else {
          t.notOk++
          count(t, String(status))
          // A refused client waits as a report tool would before asking again (at most a second here).
          await sleep(Math.min(1_000, until - Date.now()))
        }
      } catch (error) {
        if (signal.aborted) break
        t.errors++
        count(t, (error as { code?: string }).code ?? 'error')
      }
    }
    agent.destroy()
  }))
  return t
}

/** What one report's process left: its exit code (-1: it could not start) and the output taken from it. */
interface Ended { code: number | null; output: string }

/**
 * REPORT_CLIENTS clients, each running `command` as a process of its own per
 * report, back to back until `until` (or `signal`). What is still running when
 * the window ends is killed and not counted. `judge` tallies each report that
 * ended within the window from its exit code and its `output` (stdout or
 * stderr), and says how many ms its client waits before the next.
 */
async function processReports(command: string, args: readonly string[], output: 'stdout' | 'stderr', until: number, signal: AbortSignal | undefined,
  judge: (t: Tally, ended: Ended) => number): Promise<Tally> {
  const t = tally()
  const running = new Set<ChildProcess>()
  const stop = () => { for (const child of running) child.kill('SIGKILL') }
  const timer = setTimeout(stop, Math.max(0, until - Date.now()))
  signal?.addEventListener('abort', stop, { once: true })
  await Promise.all(Array.from({ length: REPORT_CLIENTS }, async () => {
    while (Date.now() < until && !signal?.aborted) {
      const child = spawn(command, args, { stdio: ['ignore', output === 'stdout' ? 'pipe' : 'ignore', output === 'stderr' ? 'pipe' : 'ignore'] })
      running.add(child)
      let text = ''
      child[output]!.on('data', (chunk: Buffer) => { text += chunk.toString() })
      const code = await new Promise<number | null>((resolve) => {
        child.once('error', () => resolve(-1))
        child.once('close', (exitCode) => resolve(exitCode))
      })
      running.delete(child)
      if (Date.now() > until || signal?.aborted) break
      const wait = judge(t, { code, output: text })
      if (wait > 0) await sleep(Math.min(wait, until - Date.now()))
    }
  }))
  clearTimeout(timer)
  signal?.removeEventListener('abort', stop)
  return t
}

/**
 * REPORT_CLIENTS clients asking `url` back to back until `until`, each report
 * by a `curl` process of its own (a fresh connection, the body dropped), as
 * the floor runs a `mariadb` process per statement. The bench process stays
 * free for the probe: 16 node:http readers in it took CPU from the cores the
 * service, MariaDB and WordPress share, and held up the probe's own timing
 * (measured when reports were first read by curl: decision 0032, in git at 9164263:docs/performance.md).
 */
export function curlReports(url: string, until: number, signal: AbortSignal): Promise<Tally> {
  // -q: no ~/.curlrc; --noproxy: straight to loopback, as node:http went.
  const args = ['-q', '-s', '--noproxy', '*', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '120', url]
  return processReports('curl', args, 'stdout', until, signal, (t, { code, output }) => {
    const status = Number(output.trim())
    if (code !== 0) {
      t.errors++
      count(t, `curl exit ${code}`)
      return 0
    }
    if (status >= 200 && status < 300) {
      t.ok++
      return 0
    }
    t.notOk++
    count(t, String(status))
    // A refused client waits as a report tool would before asking again (at most a second here).
    return 1_000
  })
}

/** REPORT_CLIENTS `mariadb` command-line clients running `statement` back to back until `until`. */
export function mariadbReports(db: ReaderDb, statement: string, until: number): Promise<Tally> {
  const args = ['--quick', '--batch', '--skip-column-names', `--host=${db.host}`, `--port=${db.port}`, `--user=${db.user}`, `--password=${db.password}`, db.database, '-e', statement]
  return processReports('mariadb', args, 'stderr', until, undefined, (t, { code, output }) => {
    if (code === 0) t.ok++
    else {
      t.errors++
      count(t, output.trim().split('\n')[0]?.slice(0, 60) || `exit ${code}`)
    }
    return 0
  })
}

/** REPORT_CLIENTS mysql2 connections in a process of their own (mysql2-clients.ts), running `statement` back to back until `until`. */
async function mysql2Reports(db: ReaderDb, statement: string, until: number): Promise<Tally> {
  const t = tally()
  const seconds = Math.max(1, Math.round((until - Date.now()) / 1000))
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./mysql2-clients.ts', import.meta.url).pathname, String(REPORT_CLIENTS), String(seconds)], {
    env: { ...process.env, BENCH_DB: JSON.stringify(db), BENCH_SQL: statement }, stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  if (code === 0) t.ok = (JSON.parse(out.trim().split('\n').at(-1)!) as { done: number }).done
  else count(t, `exit ${code}`)
  return t
}

/**
 * Waits until WordPress answers the probe quickly again (within a second), for
 * at most two minutes: php -S goes on working through the reports a load left
 * queued after its clients went, which would fall on the next contender's probe
 * (or on the serial rounds of run.ts). Resolves to the ms waited.
 */
export async function untilSiteIdle(wordpressUrl: string): Promise<number> {
  const started = Date.now()
  const agent = new Agent({ keepAlive: false })
  while (Date.now() - started < 120_000) {
    const asked = Date.now()
    const answered = await getAndDrop(`${wordpressUrl}${PROBE_PATH}`, agent, AbortSignal.timeout(60_000)).then(() => true, () => false)
    if (answered && Date.now() - asked < 1_000) break
    await sleep(500)
  }
  return Date.now() - started
}

export interface ReportRun { tally?: Tally; probe: ProbeResult }

/** One contender's load with the probe beside it (or the probe alone). */
export async function reportLoad(wordpressUrl: string, contender: ((until: number, signal: AbortSignal) => Promise<Tally>) | undefined): Promise<ReportRun> {
  const until = Date.now() + REPORT_SECONDS * 1000
  const controller = new AbortController()
  setMaxListeners(0, controller.signal)
  // Nothing goes on long past the window: what is still in flight 30 s after it is cut.
  const stop = setTimeout(() => controller.abort(), REPORT_SECONDS * 1000 + 30_000)
  const [tallied, probe] = await Promise.all([contender?.(until, controller.signal), probeSite(wordpressUrl, until, controller.signal)])
  clearTimeout(stop)
  controller.abort()
  return { tally: tallied, probe }
}

function kindsOf(t: Tally | undefined): string {
  return t && t.kinds.size > 0 ? ` (${[...t.kinds].map(([kind, n]) => `${n}× ${kind}`).join(', ')})` : ''
}

/** How the service is set for this load: its defaults, or the settings the bench's environment gives it. */
function serviceSettings(): string {
  const given = ['SERVICE_NICENESS', 'DB_STREAM_CONNECTIONS', 'DB_QUEUE_LENGTH', 'DB_QUEUE_TIMEOUT_MS'].filter((name) => process.env[name] !== undefined)
  if (given.length === 0) return 'The service runs at its default settings (`SERVICE_NICENESS`, `DB_STREAM_CONNECTIONS`, `DB_QUEUE_*` unset).'
  return `The service runs at its defaults but for ${given.map((name) => `\`${name}=${process.env[name]}\``).join(', ')}, from the bench's environment.`
}

/**
 * The load of issue 43. `serviceUrl`: a service at its default settings.
 * `reportPath`: the year report's path and query under the namespace.
 */
export async function benchConcurrentReports(ctx: BenchContext, serviceUrl: string, reportPath: string, statement: { sql: string; values: unknown[] }): Promise<string[]> {
  const verdicts: string[] = []
  const wordpressReport = `${ctx.wordpressUrl}/wp-json/booking-calendar-bench/v1/${reportPath}`
  const serviceReport = `${serviceUrl}/wp-json/booking-calendar/v1/${reportPath}`
  const sql = mysql.format(statement.sql, statement.values as Parameters<typeof mysql.format>[1])
  ctx.say(`concurrent reports: ${REPORT_CLIENTS} clients, ${REPORT_SECONDS} s each, probe ${PROBE_PATH} every ${PROBE_EVERY_MS} ms`)
  const idle = await reportLoad(ctx.wordpressUrl, undefined)
  const throughWordPress = await reportLoad(ctx.wordpressUrl, (until, signal) => curlReports(wordpressReport, until, signal))
  ctx.say(`concurrent reports: WordPress worked off what was left queued for ${((await untilSiteIdle(ctx.wordpressUrl)) / 1000).toFixed(1)} s before the next load`)
  const throughService = await reportLoad(ctx.wordpressUrl, (until, signal) => curlReports(serviceReport, until, signal))
  await untilSiteIdle(ctx.wordpressUrl)
  // How this load read the service before: node:http in the bench process. Shown, not the verdict.
  const throughServiceByNode = await reportLoad(ctx.wordpressUrl, (until, signal) => httpReports(serviceReport, until, signal))
  await untilSiteIdle(ctx.wordpressUrl)
  const floor = await reportLoad(ctx.wordpressUrl, (until) => mariadbReports(ctx.readerDb, sql, until))
  await untilSiteIdle(ctx.wordpressUrl)
  const nodeFloor = await reportLoad(ctx.wordpressUrl, (until) => mysql2Reports(ctx.readerDb, sql, until))

  const ms = (n: number) => (Number.isNaN(n) ? '—' : n.toFixed(0))
  const row = (label: string, run: ReportRun) => {
    const t = run.tally
    return `| ${label} | ${t ? t.ok : '—'} | ${t ? t.notOk : '—'}${kindsOf(t)} | ${t ? t.errors : '—'} | ${ms(run.probe.p50)} / ${ms(run.probe.p99)} | ${run.probe.answered} of ${run.probe.sent} |`
  }
  ctx.table('', `### Concurrent reports: ${REPORT_CLIENTS} clients asking for \`${reportPath}\` back to back for ${REPORT_SECONDS} s, beside the site`, '',
    `The site's visitors: \`GET ${PROBE_PATH}\` of WordPress every ${PROBE_EVERY_MS} ms, timed to its last byte. ${serviceSettings()} Each report through WordPress or the service is a \`curl\` process of its own (a fresh connection, the body dropped). The floor is ${REPORT_CLIENTS} \`mariadb\` command-line clients, a process per statement, running the service's own statement (rows read and dropped). Between loads the bench waits until WordPress answers the probe within a second again (php -S works off what a load left queued).`, '',
    '| reports through | reports done (2xx) | non-2xx | errors | the site\'s p50 / p99 ms meanwhile | probes answered |', '|---|---:|---:|---:|---|---:|',
    row('nothing (idle)', idle),
    row('WordPress\'s PHP route', throughWordPress),
    row('the service, defaults', throughService),
    row('the service, defaults, read by node:http in the bench process (not the verdict: the readers share the cores and the probe\'s process)', throughServiceByNode),
    row(`${REPORT_CLIENTS} \`mariadb\` clients (the floor)`, floor),
    row(`${REPORT_CLIENTS} mysql2 connections in one Node process (the Node floor: rows read as objects, no HTTP)`, nodeFloor))
  const service = throughService.tally!
  verdicts.push(
    ctx.verdict('concurrent reports: the service\'s non-2xx answers and errors', service.notOk + service.errors, 0, '×', 'lower'),
    ctx.verdict('concurrent reports: the service\'s reports done, over WordPress\'s route\'s', service.ok / Math.max(1, throughWordPress.tally!.ok), 1, '×', 'higher'),
    ctx.verdict('concurrent reports: the service\'s reports done, over the floor\'s (mariadb clients)', service.ok / Math.max(1, floor.tally!.ok), 0.8, '×', 'higher'),
    `- limit, measured: mysql2 alone (the stack's driver, no HTTP, ${REPORT_CLIENTS} connections) did **${(nodeFloor.tally!.ok / Math.max(1, floor.tally!.ok)).toFixed(2)}×** the \`mariadb\` clients' reports; the service did **${(service.ok / Math.max(1, nodeFloor.tally!.ok)).toFixed(2)}×** mysql2's`,
    ctx.verdict(`concurrent reports: the site's p99 while they go through the service, over its idle p99 (${ms(idle.probe.p99)} ms; through WordPress's route ${ms(throughWordPress.probe.p99)} ms)`,
      throughService.probe.p99 / idle.probe.p99, 3, '×', 'lower'),
  )
  return verdicts
}
