import { expect } from 'chai'
import type { RuleRow } from '../../db/disabled-times.ts'
import { WallClock } from '../../server/domain/wall-clock.ts'
import { type SiteZone } from '../../server/domain/zone-offsets.ts'
import { DAY_MS, dayToMs, msToDay } from '../../server/domain/day-arithmetic.ts'
import { checkRange, checkTimedRange, daysOffEndMs, expandRules, periodFields, readRule, readRules, resolveRange, ruleDays, type ValidRule } from '../../server/domain/rules.ts'

const berlin: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }
const newYork: SiteZone = { kind: 'iana', name: 'America/New_York' }

function rule(overrides: Partial<RuleRow>): RuleRow {
  return {
    id: 1, service_id: 12, rule_type: 'weekly', weekday: 1, date_from: null, date_to: null,
    time_from: null, time_to: null, note: '', ...overrides,
  }
}

function valid(row: RuleRow): ValidRule {
  const read = readRule(row)
  if ('problem' in read) throw new Error(read.problem)
  return read
}

/** [start, end, all_day] of each period. */
function periods(rows: RuleRow[], start: string, end: string, zone: SiteZone = berlin) {
  return expandRules(rows.map(valid), { start, end }, new WallClock(zone), () => 'haircut')
    .map((p) => [p.start, p.end, p.all_day])
}

describe('expandRules: rules into periods', () => {
  const cases: [string, RuleRow[], string, string, SiteZone, (string | boolean)[][]][] = [
    ['a weekly window on its weekday', [rule({ weekday: 1, time_from: '12:00:00', time_to: '13:00:00' })], '2026-11-23', '2026-12-06', berlin, [
      ['2026-11-23T12:00:00+01:00', '2026-11-23T13:00:00+01:00', false],
      ['2026-11-30T12:00:00+01:00', '2026-11-30T13:00:00+01:00', false],
    ]],
    ['a weekly window past midnight ends on the next day', [rule({ weekday: 1, time_from: '18:00:00', time_to: '08:00:00' })], '2026-11-23', '2026-11-24', berlin, [
      ['2026-11-23T18:00:00+01:00', '2026-11-24T08:00:00+01:00', false],
    ]],
    ['a window past midnight the day before the range is cut to the range start', [rule({ weekday: 0, time_from: '22:00:00', time_to: '02:00:00' })], '2026-11-23', '2026-11-24', berlin, [
      ['2026-11-23T00:00:00+01:00', '2026-11-23T02:00:00+01:00', false],
    ]],
    ['a window past midnight on the last day is cut to the range end', [rule({ weekday: 2, time_from: '22:00:00', time_to: '02:00:00' })], '2026-11-23', '2026-11-24', berlin, [
      ['2026-11-24T22:00:00+01:00', '2026-11-25T00:00:00+01:00', false],
    ]],
    ['24:00:00 ends at the next day\'s 00:00', [rule({ weekday: 6, time_from: '14:00:00', time_to: '24:00:00' })], '2026-11-28', '2026-11-29', berlin, [
      ['2026-11-28T14:00:00+01:00', '2026-11-29T00:00:00+01:00', false],
    ]],
    ['a weekly whole day', [rule({ weekday: 0 })], '2026-11-22', '2026-11-22', berlin, [
      ['2026-11-22T00:00:00+01:00', '2026-11-23T00:00:00+01:00', true],
    ]],
    ['a weekly rule inside its own date_from and date_to', [rule({ weekday: 3, date_from: '2026-11-25', date_to: '2026-12-02', time_from: '09:00:00', time_to: '10:00:00' })], '2026-11-01', '2026-12-31', berlin, [
      ['2026-11-25T09:00:00+01:00', '2026-11-25T10:00:00+01:00', false],
      ['2026-12-02T09:00:00+01:00', '2026-12-02T10:00:00+01:00', false],
    ]],
    ['days off: one period from the first day to the day after the last', [rule({ rule_type: 'date', weekday: null, date_from: '2026-12-24', date_to: '2026-12-26' })], '2026-12-01', '2026-12-31', berlin, [
      ['2026-12-24T00:00:00+01:00', '2026-12-27T00:00:00+01:00', true],
    ]],
    ['days off cut to the range', [rule({ rule_type: 'date', weekday: null, date_from: '2026-12-24', date_to: '2026-12-26' })], '2026-12-25', '2026-12-25', berlin, [
      ['2026-12-25T00:00:00+01:00', '2026-12-26T00:00:00+01:00', true],
    ]],
    ['one day off: date_to NULL is date_from', [rule({ rule_type: 'date', weekday: null, date_from: '2027-01-01' })], '2026-12-01', '2027-01-31', berlin, [
      ['2027-01-01T00:00:00+01:00', '2027-01-02T00:00:00+01:00', true],
    ]],
    ['hours off on each of several days', [rule({ rule_type: 'date', weekday: null, date_from: '2026-12-31', date_to: '2027-01-01', time_from: '13:00:00', time_to: '24:00:00' })], '2026-12-01', '2027-01-31', berlin, [
      ['2026-12-31T13:00:00+01:00', '2027-01-01T00:00:00+01:00', false],
      ['2027-01-01T13:00:00+01:00', '2027-01-02T00:00:00+01:00', false],
    ]],
    ['a date rule outside the range gives nothing', [rule({ rule_type: 'date', weekday: null, date_from: '2025-12-24', date_to: '2025-12-26' })], '2026-12-01', '2026-12-31', berlin, []],
    // Europe/Berlin: clocks go forward on 2026-03-29, back on 2026-10-25.
    ['Berlin, spring: a whole Sunday is 23 hours, each side with its own offset', [rule({ weekday: 0 })], '2026-03-29', '2026-03-29', berlin, [
      ['2026-03-29T00:00:00+01:00', '2026-03-30T00:00:00+02:00', true],
    ]],
    ['Berlin, spring: a window across the change', [rule({ weekday: 0, time_from: '01:00:00', time_to: '04:00:00' })], '2026-03-29', '2026-03-29', berlin, [
      ['2026-03-29T01:00:00+01:00', '2026-03-29T04:00:00+02:00', false],
    ]],
    ['Berlin, spring: a window starting in the gap moves forward by the gap', [rule({ weekday: 0, time_from: '02:30:00', time_to: '05:00:00' })], '2026-03-29', '2026-03-29', berlin, [
      ['2026-03-29T03:30:00+02:00', '2026-03-29T05:00:00+02:00', false],
    ]],
    // A window that covers no instant once its start moved forward by the gap is no period:
    // it once came out ending before it started (03:30 to 03:00), or with no length at all.
    ['Berlin, spring: a window inside the gap (02:30 to 03:00) covers no instant: no period', [rule({ weekday: 0, time_from: '02:30:00', time_to: '03:00:00' })], '2026-03-29', '2026-03-29', berlin, []],
    ['Berlin, spring: a window from the gap to just past it keeps what lies past it', [rule({ weekday: 0, time_from: '02:30:00', time_to: '03:45:00' })], '2026-03-29', '2026-03-29', berlin, [
      ['2026-03-29T03:30:00+02:00', '2026-03-29T03:45:00+02:00', false],
    ]],
    ['Santiago, clocks forward at midnight: a window past midnight the day before, cut to a range starting in the gap, is no period', [
      rule({ rule_type: 'date', weekday: null, date_from: '2025-09-06', time_from: '23:00:00', time_to: '01:00:00' }),
      rule({ id: 2, rule_type: 'date', weekday: null, date_from: '2025-09-07', time_from: '00:30:00', time_to: '01:00:00' }),
      rule({ id: 3, rule_type: 'date', weekday: null, date_from: '2025-09-07', time_from: '00:30:00', time_to: '02:00:00' }),
    ], '2025-09-07', '2025-09-07', { kind: 'iana', name: 'America/Santiago' }, [
      ['2025-09-07T01:30:00-03:00', '2025-09-07T02:00:00-03:00', false],
    ]],
    ['Berlin, autumn: a whole Sunday is 25 hours', [rule({ weekday: 0 })], '2026-10-25', '2026-10-25', berlin, [
      ['2026-10-25T00:00:00+02:00', '2026-10-26T00:00:00+01:00', true],
    ]],
    ['Berlin, autumn: a window in the repeated hour takes its first occurrence', [rule({ weekday: 0, time_from: '02:15:00', time_to: '02:45:00' })], '2026-10-25', '2026-10-25', berlin, [
      ['2026-10-25T02:15:00+02:00', '2026-10-25T02:45:00+02:00', false],
    ]],
    ['Berlin, autumn: a Saturday night window past midnight into the change', [rule({ weekday: 6, time_from: '22:00:00', time_to: '06:00:00' })], '2026-10-24', '2026-10-25', berlin, [
      ['2026-10-24T22:00:00+02:00', '2026-10-25T06:00:00+01:00', false],
    ]],
    // America/New_York: clocks go forward on 2026-03-08, back on 2026-11-01.
    ['New York, spring: a window across the change', [rule({ weekday: 0, time_from: '00:00:00', time_to: '05:00:00' })], '2026-03-08', '2026-03-08', newYork, [
      ['2026-03-08T00:00:00-05:00', '2026-03-08T05:00:00-04:00', false],
    ]],
    ['New York, autumn: days off across the change', [rule({ rule_type: 'date', weekday: null, date_from: '2026-10-31', date_to: '2026-11-01' })], '2026-10-01', '2026-11-30', newYork, [
      ['2026-10-31T00:00:00-04:00', '2026-11-02T00:00:00-05:00', true],
    ]],
    ['New York, autumn: a window in the repeated hour', [rule({ weekday: 0, time_from: '01:30:00', time_to: '03:00:00' })], '2026-11-01', '2026-11-01', newYork, [
      ['2026-11-01T01:30:00-04:00', '2026-11-01T03:00:00-05:00', false],
    ]],
    ['a fixed offset (gmt_offset 5.75)', [rule({ weekday: 1, time_from: '09:00:00', time_to: '10:00:00' })], '2026-11-23', '2026-11-23', { kind: 'fixed', offsetMinutes: 345 }, [
      ['2026-11-23T09:00:00+05:45', '2026-11-23T10:00:00+05:45', false],
    ]],
    ['UTC', [rule({ weekday: 1, time_from: '09:00:00', time_to: '10:00:00' })], '2026-11-23', '2026-11-23', { kind: 'utc' }, [
      ['2026-11-23T09:00:00+00:00', '2026-11-23T10:00:00+00:00', false],
    ]],
    ['a one-day range', [rule({ weekday: 1, time_from: '09:00:00', time_to: '10:00:00' }), rule({ id: 2, weekday: 2 })], '2026-11-24', '2026-11-24', berlin, [
      ['2026-11-24T00:00:00+01:00', '2026-11-25T00:00:00+01:00', true],
    ]],
    ['a weekly rule with date_from and date_to NULL runs on without end', [rule({ weekday: 1, date_from: '2026-11-23', time_from: '09:00:00', time_to: '10:00:00' })], '2026-11-16', '2026-12-07', berlin, [
      ['2026-11-23T09:00:00+01:00', '2026-11-23T10:00:00+01:00', false],
      ['2026-11-30T09:00:00+01:00', '2026-11-30T10:00:00+01:00', false],
      ['2026-12-07T09:00:00+01:00', '2026-12-07T10:00:00+01:00', false],
    ]],
    ['a weekly rule with date_to only ends there', [rule({ weekday: 1, date_to: '2026-11-30', time_from: '09:00:00', time_to: '10:00:00' })], '2026-11-23', '2026-12-14', berlin, [
      ['2026-11-23T09:00:00+01:00', '2026-11-23T10:00:00+01:00', false],
      ['2026-11-30T09:00:00+01:00', '2026-11-30T10:00:00+01:00', false],
    ]],
    ['a weekly Monday rule whose date_from is a Wednesday starts on the Monday after', [rule({ weekday: 1, date_from: '2026-11-25', time_from: '09:00:00', time_to: '10:00:00' })], '2026-11-01', '2026-12-06', berlin, [
      ['2026-11-30T09:00:00+01:00', '2026-11-30T10:00:00+01:00', false],
    ]],
    ['days off after the range give nothing', [rule({ rule_type: 'date', weekday: null, date_from: '2026-12-24', date_to: '2026-12-26' })], '2026-12-01', '2026-12-10', berlin, []],
    ['days off starting the day after the range give nothing', [rule({ rule_type: 'date', weekday: null, date_from: '2026-12-11', date_to: '2026-12-12' })], '2026-12-01', '2026-12-10', berlin, []],
    ['days off ending the day before the range give nothing', [rule({ rule_type: 'date', weekday: null, date_from: '2026-11-28', date_to: '2026-11-30' })], '2026-12-01', '2026-12-10', berlin, []],
    ['days off across the range start are cut to it', [rule({ rule_type: 'date', weekday: null, date_from: '2026-11-28', date_to: '2026-12-01' })], '2026-12-01', '2026-12-10', berlin, [
      ['2026-12-01T00:00:00+01:00', '2026-12-02T00:00:00+01:00', true],
    ]],
    // Pacific/Auckland falls back on 2026-04-05 at 03:00, on the UTC day before.
    ['Auckland, autumn: a whole Sunday is 25 hours', [rule({ weekday: 0 })], '2026-04-05', '2026-04-05', { kind: 'iana', name: 'Pacific/Auckland' }, [
      ['2026-04-05T00:00:00+13:00', '2026-04-06T00:00:00+12:00', true],
    ]],
  ]
  for (const [name, rows, start, end, zone, expected] of cases) {
    it(name, () => expect(periods(rows, start, end, zone)).to.deep.equal(expected))
  }

  it('shows a site-wide rule with service_id and service_slug null, and orders by start, service (site-wide first), rule', () => {
    const rows = [
      rule({ id: 9, service_id: 12, weekday: 1, time_from: '09:00:00', time_to: '10:00:00', note: 'Late start' }),
      rule({ id: 3, service_id: 0, weekday: 1, time_from: '09:00:00', time_to: '10:00:00', note: 'Staff meeting' }),
      rule({ id: 4, service_id: 12, weekday: 1, time_from: '09:00:00', time_to: '09:30:00', note: 'Cleaning' }),
      rule({ id: 2, service_id: 12, weekday: 1, time_from: '08:00:00', time_to: '09:00:00', note: 'Early' }),
    ]
    const out = expandRules(rows.map(valid), { start: '2026-11-23', end: '2026-11-23' }, new WallClock(berlin), (id) => (id === 12 ? 'haircut' : null))
    expect(out).to.deep.equal([
      { rule_id: 2, service_id: 12, service_slug: 'haircut', type: 'weekly', start: '2026-11-23T08:00:00+01:00', end: '2026-11-23T09:00:00+01:00', all_day: false, note: 'Early', windowDay: '2026-11-23' },
      { rule_id: 3, service_id: null, service_slug: null, type: 'weekly', start: '2026-11-23T09:00:00+01:00', end: '2026-11-23T10:00:00+01:00', all_day: false, note: 'Staff meeting', windowDay: '2026-11-23' },
      { rule_id: 4, service_id: 12, service_slug: 'haircut', type: 'weekly', start: '2026-11-23T09:00:00+01:00', end: '2026-11-23T09:30:00+01:00', all_day: false, note: 'Cleaning', windowDay: '2026-11-23' },
      { rule_id: 9, service_id: 12, service_slug: 'haircut', type: 'weekly', start: '2026-11-23T09:00:00+01:00', end: '2026-11-23T10:00:00+01:00', all_day: false, note: 'Late start', windowDay: '2026-11-23' },
    ])
  })

  it('orders periods by start, then service (site-wide first), then rule, whatever the rule ids', () => {
    const rows = [
      rule({ id: 1, service_id: 12, weekday: 1, time_from: '11:00:00', time_to: '12:00:00' }),
      rule({ id: 2, service_id: 12, weekday: 1, time_from: '10:00:00', time_to: '11:00:00' }),
      rule({ id: 8, service_id: 0, weekday: 1, time_from: '10:00:00', time_to: '10:30:00' }),
      rule({ id: 5, service_id: 12, weekday: 1, time_from: '10:00:00', time_to: '10:15:00' }),
    ]
    const out = expandRules(rows.map(valid), { start: '2026-11-23', end: '2026-11-23' }, new WallClock(berlin), () => 'every-slug')
    expect(out.map((p) => [p.rule_id, p.service_id, p.service_slug, p.start])).to.deep.equal([
      [8, null, null, '2026-11-23T10:00:00+01:00'],
      [2, 12, 'every-slug', '2026-11-23T10:00:00+01:00'],
      [5, 12, 'every-slug', '2026-11-23T10:00:00+01:00'],
      [1, 12, 'every-slug', '2026-11-23T11:00:00+01:00'],
    ])
  })

  // API.md orders by start, an instant: on a spring-forward day a window that
  // starts in the gap moves forward by the gap, past windows that start later on the wall clock.
  it('orders by instant on a spring-forward day: 02:30 in the gap starts after 03:10', () => {
    const rows = [
      rule({ id: 1, weekday: 0, time_from: '02:30:00', time_to: '05:00:00' }),
      rule({ id: 2, weekday: 0, time_from: '03:10:00', time_to: '04:00:00' }),
    ]
    const out = expandRules(rows.map(valid), { start: '2026-03-29', end: '2026-03-29' }, new WallClock(berlin), () => 'haircut')
    expect(out.map((p) => [p.rule_id, p.start, p.end])).to.deep.equal([
      [2, '2026-03-29T03:10:00+02:00', '2026-03-29T04:00:00+02:00'],
      [1, '2026-03-29T03:30:00+02:00', '2026-03-29T05:00:00+02:00'],
    ])
  })
})

describe('ruleDays: the days whose windows may reach into the range', () => {
  const cases: [string, RuleRow, string, string, string[]][] = [
    ['a weekly window on its weekdays in the range, not the day after it', rule({ weekday: 1, time_from: '09:00:00', time_to: '10:00:00' }), '2026-11-23', '2026-11-29', ['2026-11-23']],
    ['its weekday on the range\'s last day', rule({ weekday: 1, time_from: '09:00:00', time_to: '10:00:00' }), '2026-11-23', '2026-11-30', ['2026-11-23', '2026-11-30']],
    ['a window past midnight: also the day before the range', rule({ weekday: 0, time_from: '22:00:00', time_to: '02:00:00' }), '2026-11-23', '2026-11-24', ['2026-11-22']],
    ['a window ending at midnight (24:00): not the day before', rule({ weekday: 0, time_from: '14:00:00', time_to: '24:00:00' }), '2026-11-23', '2026-11-28', []],
    ['a window within its day: not the day before', rule({ weekday: 0, time_from: '12:00:00', time_to: '13:00:00' }), '2026-11-23', '2026-11-29', ['2026-11-29']],
    ['hours off on each day of a date rule, within its days', rule({ rule_type: 'date', weekday: null, date_from: '2026-12-31', date_to: '2027-01-01', time_from: '13:00:00', time_to: '14:00:00' }), '2026-12-01', '2027-01-31', ['2026-12-31', '2027-01-01']],
    ['a date rule cut to the range', rule({ rule_type: 'date', weekday: null, date_from: '2026-12-01', date_to: '2026-12-31', time_from: '13:00:00', time_to: '14:00:00' }), '2026-12-30', '2027-01-31', ['2026-12-30', '2026-12-31']],
  ]
  for (const [name, row, start, end, expected] of cases) {
    it(name, () => expect(ruleDays(valid(row), dayToMs(start), dayToMs(end) + DAY_MS).map(msToDay)).to.deep.equal(expected))
  }
})

describe('daysOffEndMs: where days off end, when they overlap the range', () => {
  const christmas = valid(rule({ rule_type: 'date', weekday: null, date_from: '2026-12-24', date_to: '2026-12-26' }))
  const cases: [string, string, string | undefined][] = [
    ['2026-12-01', '2026-12-31', '2026-12-27'],
    ['2026-12-26', '2026-12-26', '2026-12-27'],
    ['2026-12-01', '2026-12-24', '2026-12-27'],
    ['2026-12-27', '2026-12-31', undefined],
    ['2026-12-01', '2026-12-23', undefined],
  ]
  for (const [start, end, expected] of cases) {
    it(`${start} to ${end}: ${expected ?? 'none'}, as expandRules has a period or none`, () => {
      const endMs = daysOffEndMs(christmas, dayToMs(start), dayToMs(end) + DAY_MS)
      expect(endMs === undefined ? undefined : msToDay(endMs)).to.equal(expected)
      expect(expandRules([christmas], { start, end }, new WallClock(berlin), () => null)).to.have.length(expected === undefined ? 0 : 1)
    })
  }
})

describe('expandRules: the day each window starts (windowDay, the feed UID\'s day)', () => {
  it('is the day before the range for a window past midnight cut at the range start; one day per window', () => {
    const nights = rule({ id: 910, rule_type: 'date', weekday: null, date_from: '2027-01-11', date_to: '2027-01-13', time_from: '22:00:00', time_to: '06:00:00' })
    const out = expandRules([valid(nights)], { start: '2027-01-12', end: '2027-01-12' }, new WallClock(berlin), () => null)
    expect(out.map((p) => [p.start, p.windowDay])).to.deep.equal([
      ['2027-01-12T00:00:00+01:00', '2027-01-11'],
      ['2027-01-12T22:00:00+01:00', '2027-01-12'],
    ])
  })

  it('is the first day off of a days-off rule cut at the range start', () => {
    const holidays = rule({ id: 7, rule_type: 'date', weekday: null, date_from: '2026-12-24', date_to: '2026-12-27', time_from: null, time_to: null })
    const out = expandRules([valid(holidays)], { start: '2026-12-26', end: '2026-12-31' }, new WallClock(berlin), () => null)
    expect(out.map((p) => [p.start, p.end, p.windowDay])).to.deep.equal([['2026-12-26T00:00:00+01:00', '2026-12-28T00:00:00+01:00', '2026-12-24']])
  })

  it('is left out by periodFields, the record JSON sends', () => {
    const [period] = expandRules([valid(rule({ weekday: 1, time_from: '12:00:00', time_to: '13:00:00' }))], { start: '2026-11-23', end: '2026-11-23' }, new WallClock(berlin), () => 'haircut')
    expect(Object.keys(periodFields(period!))).to.deep.equal(['rule_id', 'service_id', 'service_slug', 'type', 'start', 'end', 'all_day', 'note'])
  })
})

describe('expandRules at the end of the calendar', () => {
  it('a range ending on 9999-12-31 still gives its periods (the day after it has no date)', () => {
    const friday = rule({ weekday: 5, time_from: '12:00:00', time_to: '13:00:00' })
    expect(periods([friday], '9999-12-24', '9999-12-31', { kind: 'utc' })).to.deep.equal([
      ['9999-12-24T12:00:00+00:00', '9999-12-24T13:00:00+00:00', false],
      ['9999-12-31T12:00:00+00:00', '9999-12-31T13:00:00+00:00', false],
    ])
  })
})

describe('readRule: rows that make no sense are skipped', () => {
  const problems: [string, Partial<RuleRow>, string][] = [
    ['a weekday of -1', { weekday: -1 }, 'a weekly rule needs a weekday from 0 to 6'],
    ['a weekday of 1.5', { weekday: 1.5 }, 'a weekly rule needs a weekday from 0 to 6'],
    ['a date_to that is no date', { rule_type: 'date', weekday: null, date_from: '2026-05-01', date_to: '0000-00-00' }, 'date_from or date_to is not a date'],
    ['a time_from of 25:00:00', { time_from: '25:00:00', time_to: '26:00:00' }, 'time_from or time_to is not a time of day'],
    ['a time_from of 24:00:00', { time_from: '24:00:00', time_to: '10:00:00' }, 'time_from or time_to is not a time of day'],
    ['a time_to of 24:00:01', { time_from: '09:00:00', time_to: '24:00:01' }, 'time_from or time_to is not a time of day'],
    ['a negative time_from', { time_from: '-01:00:00', time_to: '10:00:00' }, 'time_from or time_to is not a time of day'],
    ['a negative time_to', { time_from: '09:00:00', time_to: '-01:00:00' }, 'time_from or time_to is not a time of day'],
    ['a time_from that is no time', { time_from: 'nine', time_to: '10:00:00' }, 'time_from or time_to is not a time of day'],
    ['a time_to that is no time', { time_from: '09:00:00', time_to: 'ten' }, 'time_from or time_to is not a time of day'],
    ['a rule_type outside the two', { rule_type: 'monthly' }, 'rule_type "monthly" is neither weekly nor date'],
    ['a weekly rule without a weekday', { weekday: null }, 'a weekly rule needs a weekday from 0 to 6'],
    ['a weekday outside 0–6', { weekday: 7 }, 'a weekly rule needs a weekday from 0 to 6'],
    ['a date rule without date_from', { rule_type: 'date', weekday: null }, 'a date rule needs date_from'],
    ['date_to before date_from', { rule_type: 'date', date_from: '2026-05-02', date_to: '2026-05-01' }, 'date_to is before date_from'],
    ['a weekly rule ending before it starts', { date_from: '2026-05-02', date_to: '2026-05-01' }, 'date_to is before date_from'],
    ['time_from without time_to', { time_from: '09:00:00' }, 'one of time_from and time_to is set and the other is NULL'],
    ['time_to without time_from', { time_to: '09:00:00' }, 'one of time_from and time_to is set and the other is NULL'],
    ['time_to equal to time_from', { time_from: '09:00:00', time_to: '09:00:00' }, 'time_to equals time_from'],
    ['a zero date', { rule_type: 'date', date_from: '0000-00-00' }, 'date_from or date_to is not a date'],
  ]
  for (const [name, overrides, problem] of problems) {
    it(name, () => expect(readRule(rule(overrides))).to.deep.equal({ problem }))
  }

  it('reads a valid rule whole; a date rule has no weekday even when the row has one', () => {
    expect(readRule(rule({ id: 7, rule_type: 'date', weekday: 3, date_from: '2026-05-01', time_from: '22:00:00', time_to: '02:00:00', note: 'n' })))
      .to.deep.equal({
        id: 7, serviceId: 12, type: 'date', weekday: undefined, fromDay: Date.UTC(2026, 4, 1), toDay: Date.UTC(2026, 4, 1),
        window: { from: 79200, to: 93600 }, allDay: false, note: 'n',
      })
    expect(readRule(rule({ weekday: 0, date_from: '2026-05-01' }))).to.deep.equal({
      id: 1, serviceId: 12, type: 'weekly', weekday: 0, fromDay: Date.UTC(2026, 4, 1), toDay: undefined,
      window: { from: 0, to: 86400 }, allDay: true, note: '',
    })
    // An end at 00:00 is midnight after the start: the window runs to the end of its day.
    expect((readRule(rule({ time_from: '22:00:00', time_to: '00:00:00' })) as ValidRule).window).to.deep.equal({ from: 79200, to: 86400 })
  })

  it('reads rule_type in any letter case and with spaces', () => {
    expect(valid(rule({ rule_type: ' Weekly ' })).type).to.equal('weekly')
  })
})

describe('readRules: the rules that make sense, the others reported', () => {
  it('keeps the valid ones in their order and reports each other one by its ID', () => {
    const reported: [number, string][] = []
    const rules = readRules([rule({ id: 4, weekday: 9 }), rule({ id: 5, weekday: 2 }), rule({ id: 6, rule_type: 'date', weekday: null }), rule({ id: 7, weekday: 0 })],
      { report: (id, problem) => reported.push([id, problem]) })
    expect(rules).to.deep.equal([valid(rule({ id: 5, weekday: 2 })), valid(rule({ id: 7, weekday: 0 }))])
    expect(reported).to.deep.equal([[4, 'a weekly rule needs a weekday from 0 to 6'], [6, 'a date rule needs date_from']])
    expect(readRules([], { report: () => expect.fail('nothing to report') })).to.deep.equal([])
  })
})

describe('the range of disabled-time/', () => {
  const ranges: [string | undefined, string | undefined, string, [string, string]][] = [
    [undefined, undefined, '2026-11-21', ['2026-11-21', '2027-02-21']],
    [undefined, undefined, '2026-11-30', ['2026-11-30', '2027-02-28']],
    [undefined, undefined, '2027-11-30', ['2027-11-30', '2028-02-29']],
    ['2026-01-31', undefined, '2026-11-21', ['2026-01-31', '2026-04-30']],
    [undefined, '2026-12-31', '2026-11-21', ['2026-11-21', '2026-12-31']],
    ['2026-01-01', '2026-01-05', '2026-11-21', ['2026-01-01', '2026-01-05']],
    // A default end past 9999-12-30 stops there (it once read 10000-03-31).
    ['9999-12-01', undefined, '2026-11-21', ['9999-12-01', '9999-12-30']],
    ['9999-09-30', undefined, '2026-11-21', ['9999-09-30', '9999-12-30']],
    ['9999-09-29', undefined, '2026-11-21', ['9999-09-29', '9999-12-29']],
  ]
  for (const [start, end, today, expected] of ranges) {
    it(`start ${start ?? '(default)'} and end ${end ?? '(default)'} on ${today} give ${expected.join(' to ')}`, () => {
      expect(resolveRange(start, end, today)).to.deep.equal({ start: expected[0], end: expected[1] })
    })
  }

  it('refuses start after end, naming start, or end when start is today by default', () => {
    expect(checkRange({ start: '2026-12-02', end: '2026-12-01' }, { start: true, end: true }, 731))
      .to.deep.equal({ param: 'start', message: 'start must not be after end (2026-12-02 is after 2026-12-01).' })
    expect(checkRange({ start: '2026-11-21', end: '2026-11-01' }, { start: false, end: true }, 731))
      .to.deep.equal({ param: 'end', message: 'end must not be before start, which defaults to today (2026-11-21).' })
  })

  it('checkTimedRange refuses a range reaching 9999-12-31, naming start when it is there (a window on that day can end in the year 10000)', () => {
    const why = 'must be 9999-12-30 or earlier: a time on the last day of 9999 can end in the year 10000, which the answer\'s dates cannot be written in.'
    expect(checkTimedRange({ start: '9999-12-25', end: '9999-12-31' }, { start: true, end: true }, 731)).to.deep.equal({ param: 'end', message: `end ${why}` })
    expect(checkTimedRange({ start: '9999-12-31', end: '9999-12-31' }, { start: true, end: true }, 731)).to.deep.equal({ param: 'start', message: `start ${why}` })
    expect(checkTimedRange({ start: '9999-12-30', end: '9999-12-30' }, { start: true, end: true }, 731)).to.equal(undefined)
    // summary/ writes days only: its check keeps 9999-12-31.
    expect(checkRange({ start: '9999-12-25', end: '9999-12-31' }, { start: true, end: true }, 731)).to.equal(undefined)
    // The other checks still run after it.
    expect(checkTimedRange({ start: '2026-12-02', end: '2026-12-01' }, { start: true, end: true }, 731)).to.have.property('param', 'start')
  })

  it('allows a one-day range', () => {
    expect(checkRange({ start: '2026-12-01', end: '2026-12-01' }, { start: true, end: true }, 731)).to.equal(undefined)
  })

  it('names start when a range too long has the default end', () => {
    expect(checkRange({ start: '2026-01-01', end: '2026-04-01' }, { start: true, end: false }, 30)).to.deep.equal({
      param: 'start',
      message: 'The range from 2026-01-01 to 2026-04-01 spans 91 days; at most 30 are allowed. Choose a later start or an earlier end.',
    })
  })

  it('allows MAX_RANGE_DAYS days counting both ends, and refuses one more', () => {
    expect(checkRange({ start: '2026-01-01', end: '2027-12-31' }, { start: true, end: true }, 730)).to.equal(undefined)
    expect(checkRange({ start: '2026-01-01', end: '2028-01-01' }, { start: true, end: true }, 730)).to.deep.equal({
      param: 'end',
      message: 'The range from 2026-01-01 to 2028-01-01 spans 731 days; at most 730 are allowed. Choose a later start or an earlier end.',
    })
  })
})
