import { expect } from 'chai'
import type { SummaryRow } from '../../db/summary.ts'
import { WallClock } from '../../server/domain/wall-clock.ts'
import { SummaryRows } from '../../server/domain/summary-rows.ts'
import { type SiteZone } from '../../server/domain/zone-offsets.ts'
import { OpenMinutes } from '../../server/domain/open-minutes.ts'
import { groupByNames, type GroupBy } from '../../server/domain/summary-params.ts'
import { periodStartOf, periodsOf } from '../../server/domain/summary-periods.ts'
import { summarize } from '../../server/domain/summary-sums.ts'
import { rule } from '../support/rules.ts'

const berlin: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }
const clock = new WallClock(berlin)

function row(overrides: Partial<SummaryRow>): SummaryRow {
  return { day: '2026-11-02', service_id: 12, status: null, whole_day_date: null, bookings: 1, all_day_bookings: 0, booked_seconds: 3600, ...overrides }
}

describe('groupByNames: the answer\'s group_by', () => {
  const cases: [GroupBy, string[]][] = [
    [{ period: 'week', service: true, status: true }, ['week', 'service', 'status']],
    [{ period: undefined, service: true, status: false }, ['service']],
    [{ period: undefined, service: false, status: true }, ['status']],
    [{ period: 'year', service: false, status: false }, ['year']],
    [{ period: undefined, service: false, status: false }, []],
  ]
  for (const [groupBy, expected] of cases) {
    it(`${JSON.stringify(groupBy)} is ${JSON.stringify(expected)}`, () => expect(groupByNames(groupBy)).to.deep.equal(expected))
  }
})

describe('periods of a day', () => {
  it('each day is its own period', () => {
    expect(periodStartOf('2026-11-18', 'day', 1)).to.equal('2026-11-18')
    expect(periodsOf({ start: '2026-11-29', end: '2026-12-01' }, 'day', 3).map((p) => [p.key, p.start, p.end, p.first, p.last])).to.deep.equal([
      ['2026-11-29', '2026-11-29', '2026-11-29', 0, 0], ['2026-11-30', '2026-11-30', '2026-11-30', 1, 1], ['2026-12-01', '2026-12-01', '2026-12-01', 2, 2],
    ])
  })
})

describe('summarize: day periods', () => {
  it('a row on each day counts in that day\'s group, the last day of every period included', () => {
    const range = { start: '2026-11-29', end: '2026-12-01' }
    const open = new OpenMinutes([], range, [12], clock)
    const rows = [row({ day: '2026-11-29', bookings: 1 }), row({ day: '2026-11-30', bookings: 2 }), row({ day: '2026-12-01', bookings: 3 })]
    const { groups } = summarize({ groupBy: { period: 'day', service: false, status: false }, range, startOfWeek: 1, services: [{ id: 12, slug: 'haircut' }], rows: SummaryRows.of(rows), open, withOpenMinutes: false })
    expect(groups.map((g) => [g.period_start, g.bookings])).to.deep.equal([['2026-11-29', 1], ['2026-11-30', 2], ['2026-12-01', 3]])
  })
})

describe('summarize: status groups, week periods, a range inside the open minutes\' span', () => {
  const range = { start: '2026-11-23', end: '2026-12-06' }
  const services = [{ id: 12, slug: 'haircut' }]
  it('status groups only for the statuses that occur, trimmed, lower-cased and sorted; no status is ""', () => {
    const open = new OpenMinutes([], range, [12], clock)
    const rows = [
      row({ day: '2026-11-23', status: ' Booked ', bookings: 2, booked_seconds: 7200 }),
      row({ day: '2026-11-24', status: 'approved' }),
      row({ day: '2026-11-30', status: 'booked' }),
      row({ day: '2026-12-01', status: null, bookings: 3, booked_seconds: 90 }),
    ]
    const { groups, totals } = summarize({ groupBy: { period: 'week', service: false, status: true }, range, startOfWeek: 1, services, rows: SummaryRows.of(rows), open, withOpenMinutes: false })
    const week = (start: string, end: string, status: string, bookings: number, booked: number) =>
      ({ period_start: start, period_end: end, status, bookings, all_day_bookings: 0, booked_minutes: booked, blocked_minutes: booked, open_minutes: null, occupancy: null })
    expect(groups).to.deep.equal([
      week('2026-11-23', '2026-11-29', '', 0, 0), week('2026-11-23', '2026-11-29', 'approved', 1, 60), week('2026-11-23', '2026-11-29', 'booked', 2, 120),
      week('2026-11-30', '2026-12-06', '', 3, 1.5), week('2026-11-30', '2026-12-06', 'approved', 0, 0), week('2026-11-30', '2026-12-06', 'booked', 1, 60),
    ])
    expect(totals).to.deep.equal({ bookings: 7, all_day_bookings: 0, booked_minutes: 241.5, blocked_minutes: 241.5, open_minutes: null, occupancy: null })
  })
  it('open minutes of a range that starts after the span\'s first day are those of the range\'s own days', () => {
    // The span starts a week earlier; Mondays off site-wide.
    const open = new OpenMinutes([rule({ id: 1, weekday: 1 })], { start: '2026-11-16', end: '2026-12-06' }, [12], clock)
    const rows = [row({ day: '2026-11-30', whole_day_date: '2026-11-24', bookings: 1, all_day_bookings: 1, booked_seconds: 0 })]
    const { groups, totals } = summarize({ groupBy: { period: 'week', service: true, status: false }, range, startOfWeek: 1, services, rows: SummaryRows.of(rows), open, withOpenMinutes: true })
    expect(groups.map((g) => [g.period_start, g.service_id, g.bookings, g.booked_minutes, g.open_minutes, g.occupancy])).to.deep.equal([
      ['2026-11-23', 12, 0, 0, 6 * 1440, 0],
      ['2026-11-30', 12, 1, 1440, 6 * 1440, 0.1667],
    ])
    expect(totals).to.deep.equal({ bookings: 1, all_day_bookings: 1, booked_minutes: 1440, blocked_minutes: 1440, open_minutes: 12 * 1440, occupancy: 0.0833 })
  })
  it('a row outside every group is an error, not a silently lost count', () => {
    const open = new OpenMinutes([], range, [12], clock)
    const rows = [row({ day: '2026-12-07' })]
    expect(() => summarize({ groupBy: { period: 'week', service: true, status: false }, range, startOfWeek: 1, services, rows: SummaryRows.of(rows), open, withOpenMinutes: true }))
      .to.throw(/^a summary row fell outside every group: 2026-12-07 12 $/)
    const noDate = [row({ day: '0000-00-00', status: ' Booked ' })]
    expect(() => summarize({ groupBy: { period: 'week', service: true, status: true }, range, startOfWeek: 1, services, rows: SummaryRows.of(noDate), open, withOpenMinutes: false }))
      .to.throw(/^a summary row fell outside every group: a day that is no date 12 {2}Booked $/)
  })
})
