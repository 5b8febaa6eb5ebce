import { expect } from 'chai'
import type { SummaryQuery, SummaryRow } from '../../db/summary.ts'
import { WallClock } from '../../server/domain/wall-clock.ts'
import { SummaryRows } from '../../server/domain/summary-rows.ts'
import { OpenMinutes } from '../../server/domain/open-minutes.ts'
import { parseGroupBy, startOfWeekFrom } from '../../server/domain/summary-params.ts'
import { periodStartOf, periodsOf, resolveSummaryRange } from '../../server/domain/summary-periods.ts'
import { occupancyOf, summarize } from '../../server/domain/summary-sums.ts'
import { splitByBookingDate } from '../../server/domain/summary-split.ts'
import { summaryColumns, summaryCsvLines } from '../../server/http/summary-body.ts'
import { rule } from '../support/rules.ts'

const clock = new WallClock({ kind: 'iana', name: 'Europe/Berlin' })

describe('parseGroupBy: group_by', () => {
  const cases: [string[] | undefined, unknown][] = [
    [undefined, { period: 'month', service: false, status: false }],
    [['service', 'day'], { period: 'day', service: true, status: false }],
    [['STATUS', ' week ', 'service'], { period: 'week', service: true, status: true }],
    [['service'], { period: undefined, service: true, status: false }],
    [['month', 'month'], { period: 'month', service: false, status: false }],
    [['month', 'week'], { problem: 'group_by may name at most one period of day, week, month, year (got month and week); keep one of them.' }],
    [['service', 'colour', 'x'], { problem: 'group_by must be one or more of service, status, day, week, month, year, comma-separated (got "colour", "x").' }],
    [[''], { problem: 'group_by must be one or more of service, status, day, week, month, year, comma-separated.' }],
  ]
  for (const [names, expected] of cases) {
    it(`${JSON.stringify(names)}`, () => expect(parseGroupBy(names)).to.deep.equal(expected))
  }
})

describe('startOfWeekFrom: WordPress\'s start_of_week', () => {
  for (const [value, expected] of [['0', 0], ['6', 6], [' 3 ', 3], [undefined, 1], ['7', 1], ['', 1], ['-1', 1], ['1.5', 1], ['03', 1], ['4\n', 4]] as const) {
    it(`${JSON.stringify(value)} is ${expected}`, () => expect(startOfWeekFrom(value)).to.equal(expected))
  }
})

describe('resolveSummaryRange: summary/\'s default range', () => {
  it('no bounds: the current month', () => expect(resolveSummaryRange(undefined, undefined, '2026-02-14')).to.deep.equal({ start: '2026-02-01', end: '2026-02-28' }))
  it('start alone: to the end of its month (a leap February)', () => expect(resolveSummaryRange('2028-02-10', undefined, '2026-01-01')).to.deep.equal({ start: '2028-02-10', end: '2028-02-29' }))
  it('end alone: from the first day of its month', () => expect(resolveSummaryRange(undefined, '2026-12-31', '2026-01-01')).to.deep.equal({ start: '2026-12-01', end: '2026-12-31' }))
})

describe('periodsOf: the periods of a range, cut to it', () => {
  const range = { start: '2026-11-15', end: '2027-01-10' }
  it('months of a range that starts mid-month', () => {
    expect(periodsOf(range, 'month', 1).map((p) => [p.key, p.start, p.end, p.first, p.last])).to.deep.equal([
      ['2026-11-01', '2026-11-15', '2026-11-30', 0, 15],
      ['2026-12-01', '2026-12-01', '2026-12-31', 16, 46],
      ['2027-01-01', '2027-01-01', '2027-01-10', 47, 56],
    ])
  })
  it('years', () => expect(periodsOf(range, 'year', 1).map((p) => [p.start, p.end])).to.deep.equal([['2026-11-15', '2026-12-31'], ['2027-01-01', '2027-01-10']]))
  it('weeks from Sunday (0) and from Saturday (6)', () => {
    const short = { start: '2026-11-01', end: '2026-11-16' }
    expect(periodsOf(short, 'week', 0).map((p) => [p.start, p.end])).to.deep.equal([['2026-11-01', '2026-11-07'], ['2026-11-08', '2026-11-14'], ['2026-11-15', '2026-11-16']])
    expect(periodsOf(short, 'week', 6).map((p) => [p.key, p.start, p.end])).to.deep.equal([
      ['2026-10-31', '2026-11-01', '2026-11-06'], ['2026-11-07', '2026-11-07', '2026-11-13'], ['2026-11-14', '2026-11-14', '2026-11-16'],
    ])
  })
  it('no period: one slot over the range', () => expect(periodsOf(range, undefined, 1)).to.deep.equal([{ key: null, start: '2026-11-15', end: '2027-01-10', first: 0, last: 56 }]))
  it('the last periods before year 10000 end at 9999-12-31 (no endless loop past the last four-digit year)', () => {
    const last = { start: '9999-12-01', end: '9999-12-31' }
    for (const period of ['day', 'week', 'month', 'year'] as const) {
      const slots = periodsOf(last, period, 1)
      expect(slots.at(-1)!.end, period).to.equal('9999-12-31')
      expect(slots.at(-1)!.last, period).to.equal(30)
    }
    expect(periodsOf(last, 'month', 1).map((p) => [p.key, p.start, p.end])).to.deep.equal([['9999-12-01', '9999-12-01', '9999-12-31']])
    expect(periodsOf(last, 'week', 1).map((p) => [p.start, p.end]).at(-1)).to.deep.equal(['9999-12-27', '9999-12-31'])
  })
  it('periodStartOf agrees with the keys', () => {
    expect([periodStartOf('2026-11-18', 'week', 1), periodStartOf('2026-11-18', 'week', 0), periodStartOf('2026-11-18', 'week', 3)]).to.deep.equal(['2026-11-16', '2026-11-15', '2026-11-18'])
  })
})

describe('occupancyOf', () => {
  it('rounds to 4 decimals, exceeds 1 where bookings overlap, null for no open minutes', () => {
    expect([occupancyOf(1800, 1080), occupancyOf(1, 3), occupancyOf(5, 0), occupancyOf(5, null)]).to.deep.equal([1.6667, 0.3333, null, null])
    // Exact halves round up, where floating point put 18 / 120000 × 10000 at 1.4999999999999998.
    expect([occupancyOf(18, 120_000), occupancyOf(57, 600_000), occupancyOf(0.57, 600), occupancyOf(1, 20_000), occupancyOf(3, 20_000)]).to.deep.equal([0.0002, 0.0001, 0.001, 0.0001, 0.0002])
    // Just under and over a half, and minutes with decimals.
    expect([occupancyOf(17.99, 120_000), occupancyOf(18.01, 120_000), occupancyOf(0, 600), occupancyOf(600, 600), occupancyOf(1234.56, 789.01)]).to.deep.equal([0.0001, 0.0002, 0, 1, 1.5647])
  })
})

describe('summarize: groups with zeros, whole-day bookings, totals', () => {
  const range = { start: '2026-11-01', end: '2026-12-31' }
  const rules = [rule({ id: 1, weekday: 0 })] // Sundays off, site-wide
  const open = new OpenMinutes(rules, range, [12, 15], clock)
  const rows: SummaryRow[] = [
    { day: '2026-11-02', service_id: 12, status: null, whole_day_date: null, bookings: 2, all_day_bookings: 0, booked_seconds: 2 * 3600 },
    // Two whole-day bookings on Sunday 29 November (0 open minutes), and one on Monday 30 November (1,440) beside a timed one.
    { day: '2026-11-29', service_id: 12, status: null, whole_day_date: '2026-11-29', bookings: 2, all_day_bookings: 2, booked_seconds: 0 },
    { day: '2026-11-30', service_id: 12, status: null, whole_day_date: '2026-11-30', bookings: 2, all_day_bookings: 1, booked_seconds: 3600 },
  ]
  const services = [{ id: 12, slug: 'haircut' }, { id: 15, slug: 'стрижка' }]
  const novemberOpen = (30 - 5) * 1440
  const decemberOpen = (31 - 4) * 1440
  it('every month × service, zeros where nothing matched', () => {
    const { groups, totals } = summarize({ groupBy: { period: 'month', service: true, status: false }, range, startOfWeek: 1, services, rows: SummaryRows.of(rows), open, withOpenMinutes: true })
    expect(groups).to.deep.equal([
      { period_start: '2026-11-01', period_end: '2026-11-30', service_id: 12, service_slug: 'haircut', bookings: 6, all_day_bookings: 3, booked_minutes: 180 + 1440, blocked_minutes: 180 + 1440, open_minutes: novemberOpen, occupancy: occupancyOf(1620, novemberOpen) },
      { period_start: '2026-11-01', period_end: '2026-11-30', service_id: 15, service_slug: 'стрижка', bookings: 0, all_day_bookings: 0, booked_minutes: 0, blocked_minutes: 0, open_minutes: novemberOpen, occupancy: 0 },
      { period_start: '2026-12-01', period_end: '2026-12-31', service_id: 12, service_slug: 'haircut', bookings: 0, all_day_bookings: 0, booked_minutes: 0, blocked_minutes: 0, open_minutes: decemberOpen, occupancy: 0 },
      { period_start: '2026-12-01', period_end: '2026-12-31', service_id: 15, service_slug: 'стрижка', bookings: 0, all_day_bookings: 0, booked_minutes: 0, blocked_minutes: 0, open_minutes: decemberOpen, occupancy: 0 },
    ])
    expect(totals).to.deep.equal({ bookings: 6, all_day_bookings: 3, booked_minutes: 1620, blocked_minutes: 1620,
      open_minutes: 2 * (novemberOpen + decemberOpen), occupancy: occupancyOf(1620, 2 * (novemberOpen + decemberOpen)) })
  })
  it('without service in group_by, open minutes sum over every service of the answer; null when not wanted', () => {
    const { groups } = summarize({ groupBy: { period: undefined, service: false, status: false }, range, startOfWeek: 1, services, rows: SummaryRows.of(rows), open, withOpenMinutes: false })
    expect(groups).to.deep.equal([{ bookings: 6, all_day_bookings: 3, booked_minutes: 1620, blocked_minutes: 1620, open_minutes: null, occupancy: null }])
  })
  it('asks the open minutes of a day only for a row with whole-day bookings', () => {
    class CountingOpen extends OpenMinutes {
      days: number[] = []
      override onDay(serviceId: number, dayMs: number): number {
        this.days.push(dayMs)
        return super.onDay(serviceId, dayMs)
      }
    }
    const counting = new CountingOpen(rules, range, [12, 15], clock)
    const { totals } = summarize({ groupBy: { period: 'month', service: true, status: false }, range, startOfWeek: 1, services, rows: SummaryRows.of(rows), open: counting, withOpenMinutes: true })
    expect(totals.booked_minutes).to.equal(1620)
    expect(counting.days).to.deep.equal([Date.UTC(2026, 10, 29), Date.UTC(2026, 10, 30)])
  })
  it('a whole-day booking counts its own day\'s open minutes when the open minutes\' span starts before the range', () => {
    // The span starts on Tuesday 27 October, five days before the range: Sunday 29 November is its 34th day but the range's 29th.
    const wider = new OpenMinutes(rules, { start: '2026-10-27', end: '2026-12-31' }, [12, 15], clock)
    const { groups } = summarize({ groupBy: { period: undefined, service: false, status: false }, range, startOfWeek: 1, services, rows: SummaryRows.of(rows), open: wider, withOpenMinutes: false })
    expect(groups).to.deep.equal([{ bookings: 6, all_day_bookings: 3, booked_minutes: 1620, blocked_minutes: 1620, open_minutes: null, occupancy: null }])
  })
})

describe('SummaryRows: a summary\'s rows as columns of numbers', () => {
  it('keeps each row\'s values, each status once as stored, days as dayToMs gives them (NaN for no date), past its first capacity', () => {
    const rows = new SummaryRows()
    const statuses = [' Booked ', null, 'booked', 'подтверждено']
    for (let i = 0; i < 2500; i++) rows.add('2026-11-05', 10 + (i % 3), statuses[i % 4]!, i % 5 === 0 ? '2026-11-06' : null, i, i % 7, i * 60, i % 2, i * 30)
    rows.add('0000-00-00', 99, null, '2026-02-30', 1, 1, 0, 0, 0)
    expect(rows.length).to.equal(2501)
    expect(rows.statuses).to.deep.equal(statuses)
    expect([...rows.serviceIds()]).to.deep.equal([10, 11, 12, 99])
    const at = (row: number) => [rows.dayMs[row], rows.serviceId[row], rows.status[row], rows.wholeDayMs[row],
      rows.bookings[row], rows.allDayBookings[row], rows.bookedSeconds[row], rows.blockedAllDayBookings[row], rows.blockedSeconds[row]]
    const nov5 = Date.UTC(2026, 10, 5)
    expect(at(0)).to.deep.equal([nov5, 10, 0, nov5 + 86_400_000, 0, 0, 0, 0, 0])
    expect(at(999)).to.deep.equal([nov5, 10, 3, NaN, 999, 5, 999 * 60, 1, 999 * 30])
    expect(at(2499)).to.deep.equal([nov5, 10, 3, NaN, 2499, 0, 2499 * 60, 1, 2499 * 30])
    expect(at(2500)).to.deep.equal([NaN, 99, 1, NaN, 1, 1, 0, 0, 0])
    expect(SummaryRows.of([{ day: '2026-11-05', service_id: 12, status: 'x', whole_day_date: null, bookings: 2, all_day_bookings: 0, booked_seconds: 60 }]).bookings.slice(0, 1))
      .to.deep.equal(new Float64Array([2]))
  })

  it('hands its columns to the next summary once released, which reads none of the old rows; columns of over 65,536 rows are not kept', () => {
    new SummaryRows() // takes any columns an earlier answer left
    const first = new SummaryRows()
    for (let i = 0; i < 3000; i++) first.add('2026-11-05', 50 + (i % 7), 'booked', '2026-11-05', 9, 1, 60, 0, 0)
    const columns = first.dayMs
    first.release()
    const next = new SummaryRows()
    expect(next.dayMs).to.equal(columns)
    // A day that comes back after another is read again, not taken for the last one.
    next.add('2026-01-02', 10, 'pending', null, 2, 0, 0, 0, 0)
    next.add('2026-01-01', 11, null, '2026-01-01', 3, 1, 0, 0, 0)
    next.add('2026-01-02', 10, 'pending', null, 4, 0, 120, 0, 0)
    expect(next.length).to.equal(3)
    expect(next.statuses).to.deep.equal(['pending', null])
    expect([...next.serviceIds()]).to.deep.equal([10, 11])
    const jan1 = Date.UTC(2026, 0, 1)
    const jan2 = Date.UTC(2026, 0, 2)
    expect([...next.dayMs.subarray(0, 3)]).to.deep.equal([jan2, jan1, jan2])
    expect([...next.wholeDayMs.subarray(0, 3)]).to.deep.equal([NaN, jan1, NaN])
    expect([...next.status.subarray(0, 3)]).to.deep.equal([0, 1, 0])
    expect([...next.bookings.subarray(0, 3)]).to.deep.equal([2, 3, 4])
    expect([...next.bookedSeconds.subarray(0, 3)]).to.deep.equal([0, 0, 120])
    // While one summary holds them, another gets columns of its own.
    const beside = new SummaryRows()
    expect(beside.dayMs).to.not.equal(columns)
    expect(beside.dayMs.length).to.equal(1024)
    for (let i = 0; i < 70_000; i++) beside.add('2026-11-05', 1, null, null, 1, 0, 0, 0, 0)
    beside.release()
    expect(new SummaryRows().dayMs.length).to.equal(1024)
  })

  it('keeps the first of two released sets of columns of the same size', () => {
    new SummaryRows() // takes any columns an earlier answer left
    const first = new SummaryRows()
    const second = new SummaryRows()
    expect(first.dayMs.length).to.equal(second.dayMs.length)
    first.release()
    second.release()
    expect(new SummaryRows().dayMs).to.equal(first.dayMs)
  })

  it('keeps the larger of two released sets of columns, up to room for 65,536 rows', () => {
    new SummaryRows() // takes any columns an earlier answer left
    const large = new SummaryRows()
    const small = new SummaryRows()
    for (let i = 0; i < 40_000; i++) large.add('2026-11-05', 1, null, null, 1, 0, 0, 0, 0)
    expect(large.dayMs.length).to.equal(65_536)
    large.release()
    small.release()
    const again = new SummaryRows()
    expect(again.dayMs.length).to.equal(65_536)
    // The other way round: the smaller first.
    const smallAgain = new SummaryRows()
    smallAgain.release()
    again.release()
    expect(new SummaryRows().dayMs.length).to.equal(65_536)
  })
})

describe('splitByBookingDate: a long range of booking dates in two halves that meet at a day', () => {
  const query = (filter: SummaryQuery['filter'], dateOf: SummaryQuery['dateOf'] = 'booking_date'): SummaryQuery => ({ filter, dateOf, byStatus: false, blocking: ['booked'] })
  it('a year: two halves, every day in exactly one, the rest of the filter kept', () => {
    const parts = splitByBookingDate(query({ serviceId: 7, statuses: ['booked'], bookingDate: { from: '2025-01-01', to: '2025-12-31' } }))
    expect(parts.map((part) => part.filter)).to.deep.equal([
      { serviceId: 7, statuses: ['booked'], bookingDate: { from: '2025-01-01', to: '2025-07-02' } },
      { serviceId: 7, statuses: ['booked'], bookingDate: { from: '2025-07-03', to: '2025-12-31' } },
    ])
  })
  it('whole: under 62 days, without both ends, and with filter_by=created_date', () => {
    for (const whole of [
      query({ bookingDate: { from: '2025-01-01', to: '2025-03-03' } }),
      query({ bookingDate: { from: '2025-01-01' } }),
      query({ createdAt: { from: '2025-01-01 00:00:00', to: '2025-12-31 23:59:59' } }, 'created_date'),
    ]) expect(splitByBookingDate(whole)).to.deep.equal([whole])
    expect(splitByBookingDate(query({ bookingDate: { from: '2025-01-01', to: '2025-03-04' } }))).to.have.length(2)
  })
  it('whole with filter_by=created_date, even where the filter also holds a year of booking dates', () => {
    const created = query({ bookingDate: { from: '2025-01-01', to: '2025-12-31' }, createdAt: { from: '2025-01-01 00:00:00', to: '2025-12-31 23:59:59' } }, 'created_date')
    expect(splitByBookingDate(created)).to.deep.equal([created])
  })
})

describe('summaryCsvLines', () => {
  it('keys of the dimensions, then the measures; _fields keeps the named columns in order', () => {
    expect(summaryColumns(['week', 'status'], undefined)).to.deep.equal(['period_start', 'period_end', 'status', 'bookings', 'all_day_bookings', 'booked_minutes', 'blocked_minutes', 'open_minutes', 'occupancy'])
    expect(summaryColumns(['service'], ['occupancy', 'service_slug'])).to.deep.equal(['service_slug', 'occupancy'])
  })
  it('cells as slots/ writes them: null empty, a formula-like slug guarded', () => {
    const csv = [...summaryCsvLines({
      groups: [{ service_id: 1, service_slug: '=cmd', bookings: 1, all_day_bookings: 0, booked_minutes: 60, blocked_minutes: 45, open_minutes: null, occupancy: null }],
      totals: { bookings: 1, all_day_bookings: 0, booked_minutes: 60, blocked_minutes: 45, open_minutes: null, occupancy: null },
      start: '2026-11-01', end: '2026-11-30', timezone: 'UTC', group_by: ['service'], filter_by: 'booking_date', blocking: ['booked'],
    }, undefined)].join('')
    expect(csv).to.equal('service_id,service_slug,bookings,all_day_bookings,booked_minutes,blocked_minutes,open_minutes,occupancy\r\n1,\'=cmd,1,0,60,45,,\r\n')
  })
})
