// The ICS rate: a whole calendar feed of every booking, downloaded
// and dropped as it arrives, in rows/s. The feed's range is at most
// MAX_RANGE_DAYS (default 731), so the bench's years come in consecutive
// windows of that size; the rate is all rows over all seconds.
// Run on its own against a running service: tsx scripts/bench/ics.ts http://127.0.0.1:8080 [first-day last-day]
import { get as httpGet } from 'node:http'
import { addDays, daysInclusive } from '../../server/tools.ts'
import { BENCH_DATA } from './dataset.ts'

export interface IcsBenchContext {
  /** The service's address, without a path. */
  serviceUrl: string
  /** The days the bookings lie in (default: the bench's data set). */
  firstDay?: string
  lastDay?: string
  /** The service's MAX_RANGE_DAYS (default 731). */
  maxRangeDays?: number
  /** Headers for the calls (AUTH_MODE token: an Authorization header). */
  headers?: Record<string, string>
  timeoutMs?: number
}

interface Download { status: number; rows: number; bytes: number; seconds: number }

function downloadFeed(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Download> {
  const started = process.hrtime.bigint()
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { headers, timeout: timeoutMs }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, rows: Number(res.headers['x-wp-total'] ?? NaN), bytes, seconds: seconds() }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
  })
}

/** Markdown lines: a table of one row, the ICS rate of a full feed download. */
export async function benchIcs(ctx: IcsBenchContext): Promise<string[]> {
  const firstDay = ctx.firstDay ?? BENCH_DATA.firstDay
  const lastDay = ctx.lastDay ?? addDays(firstDay, Math.ceil(BENCH_DATA.years * 365.25) + 1)
  const window = ctx.maxRangeDays ?? 731
  const total: Download = { status: 200, rows: 0, bytes: 0, seconds: 0 }
  let windows = 0
  for (let start = firstDay; start <= lastDay; start = addDays(start, window)) {
    const end = daysInclusive(start, lastDay) > window ? addDays(start, window - 1) : lastDay
    const url = `${ctx.serviceUrl}/wp-json/booking-calendar/v1/slots?format=ics&start=${start}&end=${end}`
    const one = await downloadFeed(url, ctx.headers ?? {}, ctx.timeoutMs ?? 600_000)
    if (one.status !== 200) total.status = one.status
    total.rows += one.rows
    total.bytes += one.bytes
    total.seconds += one.seconds
    windows++
  }
  const rate = total.status === 200 ? Math.round(total.rows / total.seconds).toLocaleString('en') : '—'
  return [
    '| answer | status | rows | seconds | rows/s | MB |',
    '|---|---|---:|---:|---:|---:|',
    `| ICS feed of every booking (${windows} request${windows === 1 ? '' : 's'} of at most ${window} days) | ${total.status} | ${total.rows.toLocaleString('en')} | ${total.seconds.toFixed(2)} | ${rate} | ${(total.bytes / 1e6).toFixed(1)} |`,
  ]
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const [serviceUrl, firstDay, lastDay] = process.argv.slice(2)
  if (!serviceUrl) {
    process.stderr.write('usage: tsx scripts/bench/ics.ts <service URL> [first-day last-day]\n')
    process.exit(2)
  }
  for (const line of await benchIcs({ serviceUrl, firstDay, lastDay })) process.stdout.write(`${line}\n`)
}
