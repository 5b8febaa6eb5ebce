// The benchmark of GET availability/ (issue 42; docs/availability.md): a
// month of every published service's free windows, one request at a time,
// side by side with slots/ listing the same month's bookings (flat, customer
// data hidden), in turns; and a month of 15-minute start times for every
// published service, streamed, with its size. The worker's memory and event
// loop over this phase are in the results' phase table ("availability").
import { get as httpGet } from 'node:http'
import type { BenchContext } from './context.ts'

const PREFIX = '/wp-json/booking-calendar/v1'
const MONTH = 'start=2026-03-01&end=2026-03-31'
export const WINDOWS_PATH = `${PREFIX}/availability?${MONTH}`
export const SLOTS_MONTH_PATH = `${PREFIX}/slots?${MONTH}&flat`
export const STARTS_PATH = `${PREFIX}/availability?${MONTH}&duration=15`
const RUNS = Number(process.env.BENCH_AVAILABILITY_RUNS ?? 15)
const TIMEOUT_MS = 120_000

/** One GET, its body read and dropped: milliseconds to the last byte and bytes, or an error for anything but 200. */
function timeOne(url: string): Promise<{ ms: number; bytes: number; text?: string }> {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { timeout: TIMEOUT_MS }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => (res.statusCode === 200
        ? resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, bytes })
        : reject(new Error(`${url}: ${res.statusCode}`))))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer in ${TIMEOUT_MS} ms`)))
    req.on('error', reject)
  })
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Items of an availability/ answer, counted from its JSON. */
async function itemsOf(url: string): Promise<number> {
  const res = await fetch(url)
  return ((await res.json()) as { free: unknown[] }).free.length
}

/** The measurement; its Markdown lines and its verdicts. */
export async function benchAvailability(ctx: BenchContext): Promise<{ lines: string[]; verdicts: string[] }> {
  const windowsUrl = `${ctx.serviceUrl}${WINDOWS_PATH}`
  const slotsUrl = `${ctx.serviceUrl}${SLOTS_MONTH_PATH}`
  const startsUrl = `${ctx.serviceUrl}${STARTS_PATH}`
  await timeOne(windowsUrl)
  await timeOne(slotsUrl)
  const windows: number[] = []
  const slots: number[] = []
  // In turns, so the machine's drift falls on both alike.
  for (let i = 0; i < RUNS; i++) {
    windows.push((await timeOne(windowsUrl)).ms)
    slots.push((await timeOne(slotsUrl)).ms)
  }
  const starts = await timeOne(startsUrl)
  const [windowItems, startItems] = [await itemsOf(windowsUrl), await itemsOf(startsUrl)]
  ctx.say(`availability: windows p50 ${median(windows).toFixed(1)} ms, slots/ p50 ${median(slots).toFixed(1)} ms, starts ${startItems} in ${starts.ms.toFixed(0)} ms`)
  const lines = [
    '', `### availability/: a month (2026-03) of every published service, ${RUNS} requests each in turns`, '',
    '| request | items | p50 ms | min ms |', '|---|---:|---:|---:|',
    `| \`availability?${MONTH}\` (free windows) | ${windowItems.toLocaleString('en')} | ${median(windows).toFixed(1)} | ${Math.min(...windows).toFixed(1)} |`,
    `| \`slots?${MONTH}&flat\` (the month's bookings, customer data hidden) | | ${median(slots).toFixed(1)} | ${Math.min(...slots).toFixed(1)} |`,
    `| \`availability?${MONTH}&duration=15\` (start times), once | ${startItems.toLocaleString('en')} | ${starts.ms.toFixed(1)} | ${(starts.bytes / 1e6).toFixed(1)} MB |`,
    '', 'The workers\' peak RSS and event-loop stalls while these ran: the phase table\'s row "availability".',
  ]
  const verdicts = [
    ctx.verdict('availability/: a month of every published service\'s windows, p50 over slots/ listing the month\'s bookings', median(windows) / median(slots), 1, '×', 'lower'),
  ]
  return { lines, verdicts }
}
