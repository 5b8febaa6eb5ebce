// The cost of a deep page: p50 of page 1 and of the last page with
// per_page=1, one request at a time, so the depth is all that differs. A
// deferred join (db/booking-queries.ts, compileBookingsPage) keeps them close.
const SAMPLES = 30

async function p50(url: string): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < SAMPLES; i++) {
    const started = process.hrtime.bigint()
    const res = await fetch(url)
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
    times.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  return times.sort((a, b) => a - b)[Math.floor(SAMPLES / 2)]!
}

/** One line for the results table. */
export async function deepPageLine(serviceUrl: string, bookings: number): Promise<string> {
  const page = (n: number) => `${serviceUrl}/wp-json/booking-calendar/v1/slots?flat&per_page=1&page=${n}`
  const first = await p50(page(1))
  const last = await p50(page(bookings))
  return `- deep pages, one at a time (p50 of ${SAMPLES}, per_page=1): page 1 **${first.toFixed(1)} ms**, page ${bookings.toLocaleString('en')} **${last.toFixed(1)} ms** (target: nearly the same)`
}
