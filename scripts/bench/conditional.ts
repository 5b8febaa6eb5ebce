// Conditional requests (issue 44; docs/conditional-requests.md): the year
// report ((b), `pending,booked` over a year, flat) answered 304 against the
// same report answered 200, (1) one request at a time, best and median of
// several, taken in turn; and (2) under the 16-client load of the
// concurrent-reports issue, clients that send the tag against clients that do
// not, each for BENCH_REPORT_SECONDS beside the site's probe, answers completed.
// Called from run.ts as `table(...await phases.run('conditional', () => benchConditional(ctx, hidden.url, report.path)))`.
import { Agent, request } from 'node:http'
import mysql from 'mysql2/promise'
import type { BenchContext } from './context.ts'
import { getAndDrop, REPORT_CLIENTS, reportLoad } from './concurrent-reports.ts'

/**
 * The floor of any tag the database computes over the year report's rows:
 * MariaDB reading every column the answer shows of each row (through the
 * index and in the order the digest reads them), with no text built, nothing
 * hashed and nothing sent. A 304 cannot cost less than this (docs/conditional-requests.md).
 */
const READ_FLOOR_SQL = `SET STATEMENT optimizer_switch='mrr=on,mrr_sort_keys=on,mrr_cost_based=off' FOR
  SELECT COUNT(*), MAX(id), MAX(service_id), MAX(status), MAX(booking_date), MAX(time_from), MAX(time_to), MAX(note), MAX(created_at)
  FROM wp_booking_calendar_bookings FORCE INDEX (bc_api_date)
  WHERE status IN ('pending', 'booked') AND booking_date BETWEEN '2025-01-01' AND '2025-12-31'`

/** Pairs of one 200 and one 304, taken in turn so both see the same machine. */
const SERIAL_PAIRS = Number(process.env.BENCH_CONDITIONAL_PAIRS ?? 9)

export interface Timed { status: number; ms: number; etag: string | undefined; bytes: number }

/** One GET on a fresh connection, body read and dropped, timed from the request to the last byte (changes-log.ts too). */
export function timedGet(url: string, headers: Record<string, string> = {}): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const req = request(url, { headers, agent: false }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => resolve({ status: res.statusCode!, ms: Number(process.hrtime.bigint() - started) / 1e6, etag: res.headers.etag, bytes }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2
}

/** Answers completed by REPORT_CLIENTS clients back to back until `until`; a 304 is an answer (the client holds its body). */
async function clients(url: string, headers: Record<string, string>, until: number, signal: AbortSignal) {
  const t = { answered: 0, ok: 0, notModified: 0, other: new Map<string, number>() }
  await Promise.all(Array.from({ length: REPORT_CLIENTS }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    while (Date.now() < until) {
      try {
        const status = await getAndDrop(url, agent, signal, headers)
        if (Date.now() > until) break
        if (status === 200) t.ok++
        else if (status === 304) t.notModified++
        else t.other.set(String(status), (t.other.get(String(status)) ?? 0) + 1)
        if (status === 200 || status === 304) t.answered++
        else await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, Math.max(0, until - Date.now()))))
      } catch (error) {
        if (signal.aborted) break
        const kind = (error as { code?: string }).code ?? 'error'
        t.other.set(kind, (t.other.get(kind) ?? 0) + 1)
      }
    }
    agent.destroy()
  }))
  return t
}

/**
 * `serviceUrl`: the service the concurrent reports load (at its default
 * settings); `reportPath`: the year report's path and query under the namespace.
 */
export async function benchConditional(ctx: BenchContext, serviceUrl: string, reportPath: string): Promise<string[]> {
  const url = `${serviceUrl}/wp-json/booking-calendar/v1/${reportPath}`
  const first = await timedGet(url, {})
  if (first.status !== 200 || !first.etag) throw new Error(`the year report answered ${first.status} without an ETag`)
  const tag = first.etag
  const full: number[] = []
  const held: number[] = []
  const floor: number[] = []
  const reader = await mysql.createConnection({ ...ctx.readerDb })
  for (let pair = 0; pair < SERIAL_PAIRS; pair++) {
    const whole = await timedGet(url, {})
    const notModified = await timedGet(url, { 'If-None-Match': tag })
    if (whole.status !== 200 || notModified.status !== 304) throw new Error(`expected 200 and 304, got ${whole.status} and ${notModified.status}`)
    full.push(whole.ms)
    held.push(notModified.ms)
    const started = process.hrtime.bigint()
    await reader.query(READ_FLOOR_SQL)
    floor.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  await reader.end()
  const ratio = median(held) / median(full)
  ctx.say(`conditional: year report 200 median ${median(full).toFixed(1)} ms, 304 median ${median(held).toFixed(1)} ms`)

  // reportLoad passes back whatever its contender returns, beside the probe: here answers counted with 304s.
  const contender = (headers: Record<string, string>) => ((until: number, signal: AbortSignal) => clients(url, headers, until, signal)) as unknown as Parameters<typeof reportLoad>[1]
  const withTag = await reportLoad(ctx.wordpressUrl, contender({ 'If-None-Match': tag }))
  const without = await reportLoad(ctx.wordpressUrl, contender({}))
  const load = (run: typeof withTag) => (run as unknown as { tally: Awaited<ReturnType<typeof clients>> }).tally
  const tagged = load(withTag)
  const plain = load(without)
  const others = (t: typeof tagged) => [...t.other].map(([kind, n]) => `${kind}: ${n}`).join(', ') || '0'
  const loadRatio = tagged.answered / Math.max(1, plain.answered)
  return [
    '', `### Conditional requests (issue 44): the year report ((b), ${(first.bytes / 1e6).toFixed(1)} MB), 304 against 200`, '',
    `One request at a time, on a fresh connection each, ${SERIAL_PAIRS} pairs taken in turn (ms, request to last byte):`, '',
    '| answer | best | median |',
    '|---|---:|---:|',
    `| 200 (no If-None-Match) | ${Math.min(...full).toFixed(1)} | ${median(full).toFixed(1)} |`,
    `| 304 (If-None-Match: its tag) | ${Math.min(...held).toFixed(1)} | ${median(held).toFixed(1)} |`,
    `| the floor: MariaDB reading each shown column of the same rows, nothing hashed or sent | ${Math.min(...floor).toFixed(1)} | ${median(floor).toFixed(1)} |`,
    '',
    `The floor alone is ${(median(floor) / median(full)).toFixed(2)}× the 200's median (best ${(Math.min(...floor) / Math.min(...full)).toFixed(2)}×): no tag the database computes over these rows can cost less.`,
    '',
    `${REPORT_CLIENTS} clients back to back for the report window, beside the site's probe, one kind of client at a time:`, '',
    '| clients | answers | of which 304 | other | site probe p50 / p99 ms |',
    '|---|---:|---:|---:|---:|',
    `| send the tag | ${tagged.answered} | ${tagged.notModified} | ${others(tagged)} | ${withTag.probe.p50.toFixed(1)} / ${withTag.probe.p99.toFixed(1)} |`,
    `| do not | ${plain.answered} | ${plain.notModified} | ${others(plain)} | ${without.probe.p50.toFixed(1)} / ${without.probe.p99.toFixed(1)} |`,
    '',
    ctx.verdict('(b) 304 ÷ 200, median, one at a time', ratio, 0.25, '×', 'lower'),
    ctx.verdict('(b) 304 ÷ 200, median, one at a time (issue 52: at most half)', ratio, 0.5, '×', 'lower'),
    ctx.verdict('(b) answers of clients sending the tag ÷ clients not, 16 clients', loadRatio, 4, '×', 'higher'),
  ]
}
