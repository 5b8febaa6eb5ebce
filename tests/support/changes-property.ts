// The replay property of changes/ (API.md: "Replaying every operation from any
// token onto the state that token stood for gives exactly what slots/ answers"),
// for either source: a sync with writes between its pages, deltas with writes
// between them and between their pages, then, once writes stop, a last delta.
import fc from 'fast-check'
import { applyWrite, type App, expectSameBookings, followChanges, slotsNow, type Booking, type BookingWrite, type WriteTarget } from './changes.ts'

// Each side of some of the digest source's period edges (days 1-2, 3-4, … in a feed of at most a year; 1-4, 5-8, … of at most two).
const DAYS = ['2025-12-31', '2026-01-15', '2026-02-28', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-08', '2026-03-09', '2026-03-28', '2026-03-29', '2026-03-30', '2026-03-31', '2026-10-25', '2026-11-24', '2026-11-25', '2026-11-30', '2026-12-01']
const STATUSES = ['booked', 'pending', 'reject', 'Booked ', 'completed']

export function replayProperty(options: { app: () => App; target: () => WriteTarget; services: number[]; beforeCompare?: () => Promise<void> }) {
  const write = fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), id: fc.integer({ min: 800, max: 830 }), serviceId: fc.constantFrom(...options.services), status: fc.constantFrom(...STATUSES), day: fc.constantFrom(...DAYS) }),
    fc.record({ kind: fc.constant('move' as const), id: fc.integer({ min: 101, max: 116 }), day: fc.constantFrom(...DAYS) }),
    fc.record({ kind: fc.constant('move' as const), id: fc.integer({ min: 800, max: 830 }), day: fc.constantFrom(...DAYS) }),
    fc.record({ kind: fc.constant('status' as const), id: fc.integer({ min: 101, max: 830 }), status: fc.constantFrom(...STATUSES) }),
    fc.record({ kind: fc.constant('note' as const), id: fc.integer({ min: 101, max: 116 }), note: fc.string({ maxLength: 8 }) }),
    fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 800, max: 830 }) }),
  ) as fc.Arbitrary<BookingWrite>
  const filters = fc.record({
    status: fc.option(fc.subarray(['booked', 'pending', 'reject'], { minLength: 1 }), { nil: undefined }),
    range: fc.option(fc.constantFrom(['2026-01-01', '2026-12-31'], ['2026-03-01', '2026-11-25'], ['2025-12-01', '2026-02-28'], ['2025-02-01', '2026-12-31'], ['2023-12-01', '2026-11-29']), { nil: undefined }),
    perPage: fc.integer({ min: 1, max: 7 }),
  })
  return fc.asyncProperty(filters, fc.array(fc.array(write, { maxLength: 3 }), { minLength: 1, maxLength: 6 }), fc.array(write, { maxLength: 4 }), async (chosen, duringPages, afterSync) => {
    const query = [
      chosen.status ? `status=${chosen.status.join(',')}` : '',
      chosen.range ? `start=${chosen.range[0]}&end=${chosen.range[1]}` : '',
      `per_page=${chosen.perPage}`,
    ].filter(Boolean).join('&')
    const app = options.app()
    const target = options.target()
    const copy = new Map<number, Booking>()
    let batch = 0
    const betweenPages = async () => {
      for (const each of duringPages[batch++ % duringPages.length] ?? []) await applyWrite(target, each)
    }
    const { token } = await followChanges(app, copy, undefined, { query, betweenPages })
    for (const each of afterSync) await applyWrite(target, each)
    // A delta with writes between its pages, then one once they stop.
    const middle = await followChanges(app, copy, token, { query, betweenPages })
    await options.beforeCompare?.()
    await followChanges(app, copy, middle.token, { query })
    expectSameBookings(copy, await slotsNow(app, query))
  })
}
