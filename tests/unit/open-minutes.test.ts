import { expect } from 'chai'
import { WallClock, wallClockFor } from '../../server/domain/wall-clock.ts'
import { DAY_MS, dayToMs, daysInclusive } from '../../server/domain/day-arithmetic.ts'
import { type SiteZone } from '../../server/domain/zone-offsets.ts'
import { mergeIntervals, openMinutesFor, OpenMinutes, rulesFor, subtractCovered } from '../../server/domain/open-minutes.ts'
import { rule, ruleRow } from '../support/rules.ts'

const berlin: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }
const clock = new WallClock(berlin)

describe('mergeIntervals', () => {
  it('merges overlapping and touching intervals, drops empty ones', () => {
    expect(mergeIntervals([[5, 8], [1, 3], [2, 4], [8, 9], [10, 10]])).to.deep.equal([[1, 4], [5, 9]])
  })
})

/** A clock that counts the instants asked of it: each one is a period of a rule expanded. */
class CountingClock extends WallClock {
  calls = 0
  override instantOf(wallMs: number): number {
    this.calls++
    return super.instantOf(wallMs)
  }
}

describe('subtractCovered: an interval\'s minutes off the days it covers', () => {
  const HOUR = 3_600_000
  const cases: [string, number, number, number[]][] = [
    ['within a day', DAY_MS + 9 * HOUR, DAY_MS + 10 * HOUR, [1440, 1380, 1440]],
    ['across a midnight', 18 * HOUR, DAY_MS + 8 * HOUR, [1080, 960, 1440]],
    ['to midnight exactly: not the next day', DAY_MS + 22 * HOUR, 2 * DAY_MS, [1440, 1320, 1440]],
    ['from midnight exactly', 2 * DAY_MS, 2 * DAY_MS + 90_000, [1440, 1440, 1438.5]],
    ['begun before the first day: its part in the days only', -6 * HOUR, 2 * HOUR, [1320, 1440, 1440]],
    ['past the last day: its part in the days only, no day added', 2 * DAY_MS + 22 * HOUR, 3 * DAY_MS + 6 * HOUR, [1440, 1440, 1320]],
    ['over every day and beyond both ends', -DAY_MS, 4 * DAY_MS, [0, 0, 0]],
    ['wholly before', -DAY_MS, -HOUR, [1440, 1440, 1440]],
    ['wholly after', 3 * DAY_MS + HOUR, 4 * DAY_MS, [1440, 1440, 1440]],
  ]
  for (const [name, from, to, expected] of cases) {
    it(name, () => {
      const start = dayToMs('2026-11-23')
      const open = [1440, 1440, 1440]
      subtractCovered(open, start, start + from, start + to)
      expect(open).to.deep.equal(expected)
    })
  }
})

describe('rulesFor: the rules that count for some services', () => {
  it('the site-wide ones and those of the services named, in their order; no other service\'s', () => {
    const rules = [rule({ id: 1, service_id: 13 }), rule({ id: 2 }), rule({ id: 3, service_id: 12 }), rule({ id: 4, service_id: 14 })]
    expect(rulesFor(rules, new Set([12, 14])).map((r) => r.id)).to.deep.equal([2, 3, 4])
    expect(rulesFor(rules, new Set()).map((r) => r.id)).to.deep.equal([2])
  })
})

describe('OpenMinutes: 1,440 a day minus the union of the disabled periods', () => {
  const rules = [
    rule({ id: 1, weekday: 1, time_from: '18:00:00', time_to: '08:00:00' }),
    rule({ id: 2, service_id: 12, weekday: 1, time_from: '17:00:00', time_to: '19:00:00' }),
    rule({ id: 3, service_id: 15, rule_type: 'date', weekday: null, date_from: '2026-11-24', date_to: null }),
  ]
  const open = new OpenMinutes(rules, { start: '2026-11-23', end: '2026-11-25' }, [12, 15, 99], clock)
  it('a window past midnight takes minutes off both days; overlapping rules count once', () => {
    expect([open.on(12, '2026-11-23'), open.on(12, '2026-11-24'), open.on(12, '2026-11-25')]).to.deep.equal([1440 - 420, 1440 - 480, 1440])
  })
  it('a whole day off leaves 0; another service\'s rules do not count; sums over days', () => {
    expect([open.on(15, '2026-11-24'), open.on(99, '2026-11-23'), open.sum(99, 0, 2)]).to.deep.equal([0, 1440 - 360, 3 * 1440 - 360 - 480])
  })
  it('on: a day outside the span is expanded alone; a day that cannot be read (the zero date) has 0 open minutes', () => {
    // Mondays 2026-11-30 and 1000-01-06 (proleptic Gregorian), Tuesday 2026-12-01, outside the span 23-25 November.
    expect([open.on(12, '2026-11-30'), open.on(12, '2026-12-01'), open.on(99, '1000-01-06'), open.on(15, '2026-11-24')])
      .to.deep.equal([1440 - 360 - 60, 1440 - 480, 1440 - 360, 0])
    expect([open.on(12, '0000-00-00'), open.on(12, '2026-11-00')]).to.deep.equal([0, 0])
  })
})

describe('OpenMinutes: the edges of its span', () => {
  // Mondays 18:00 to Tuesdays 08:00 off, site-wide.
  const rules = [rule({ id: 1, weekday: 1, time_from: '18:00:00', time_to: '08:00:00' }), rule({ id: 2, service_id: 13, rule_type: 'date', weekday: null, date_from: '2026-11-24' })]
  it('a window that begins the day before the span still takes its minutes off the span\'s first day', () => {
    const open = new OpenMinutes(rules, { start: '2026-11-24', end: '2026-11-25' }, [12], clock)
    expect([open.on(12, '2026-11-24'), open.on(12, '2026-11-25'), open.sum(12, 0, 1)]).to.deep.equal([1440 - 480, 1440, 2 * 1440 - 480])
  })
  it('the day after the span and the day before it are expanded alone', () => {
    const open = new OpenMinutes(rules, { start: '2026-11-24', end: '2026-11-24' }, [12], clock)
    expect([open.on(12, '2026-11-25'), open.on(12, '2026-11-23'), open.on(12, '2026-11-24')]).to.deep.equal([1440, 1440 - 360, 1440 - 480])
  })
  it('a day whose midnight is skipped has the same open minutes whether the span starts on it or before', () => {
    // America/Santiago, 2027-09-05: 00:00 is skipped to 01:00. Nights 22:00 to 06:00 off.
    const nights = [rule({ id: 5, rule_type: 'date', weekday: null, date_from: '2027-09-01', date_to: '2027-09-10', time_from: '22:00:00', time_to: '06:00:00' })]
    const santiago = new WallClock({ kind: 'iana', name: 'America/Santiago' })
    const answers = ['2027-09-01', '2027-09-05'].map((start) => new OpenMinutes(nights, { start, end: '2027-09-06' }, [12], santiago))
      .map((open) => [open.on(12, '2027-09-05'), open.on(12, '2027-09-06')])
    expect(answers).to.deep.equal([[960, 960], [960, 960]])
    // Alone (a day outside the span, as a created_date booking's): the same.
    expect(new OpenMinutes(nights, { start: '2027-09-20', end: '2027-09-20' }, [12], santiago).on(12, '2027-09-05')).to.equal(960)
  })
  it('a day closed all day on the first day a date can name (0000-01-01): 0 open minutes, whose day before has no date', () => {
    const everyDay = [0, 1, 2, 3, 4, 5, 6].map((weekday) => rule({ id: 20 + weekday, weekday, time_from: null, time_to: null }))
    const open = new OpenMinutes(everyDay, { start: '2026-11-24', end: '2026-11-24' }, [12], clock)
    expect([open.on(12, '0000-01-01'), open.on(12, '2026-11-24')]).to.deep.equal([0, 0])
  })
  it('a service it was not made for has no open minutes, and another service\'s rule does not count', () => {
    const open = new OpenMinutes(rules, { start: '2026-11-24', end: '2026-11-24' }, [12], clock)
    expect([open.on(13, '2026-11-24'), open.sum(13, 0, 0), open.on(13, '2026-12-24')]).to.deep.equal([0, 0, 0])
    const both = new OpenMinutes(rules, { start: '2026-11-24', end: '2026-11-24' }, [12, 13], clock)
    expect([both.on(12, '2026-11-24'), both.on(13, '2026-11-24')]).to.deep.equal([1440 - 480, 0])
  })
})

describe('OpenMinutes.build: the constructor\'s open minutes, a service at a time', () => {
  const rules = [
    rule({ id: 1, weekday: 1, time_from: '18:00:00', time_to: '08:00:00' }),
    rule({ id: 2, service_id: 13, rule_type: 'date', weekday: null, date_from: '2026-11-24' }),
    rule({ id: 3, service_id: 14, weekday: 3, time_from: '09:00:00', time_to: '12:30:00' }),
    rule({ id: 4, service_id: 99, weekday: 4, time_from: '00:00:00', time_to: '23:00:00' }),
  ]
  const span = { start: '2026-10-20', end: '2026-12-10' }
  it('the same minutes on every day for every service, and for a service or day it was not made for', async () => {
    const whole = new OpenMinutes(rules, span, [12, 13, 14], clock)
    const built = await OpenMinutes.build(rules, span, [12, 13, 14], clock)
    for (const id of [12, 13, 14, 99]) {
      for (let day = 0; day < daysInclusive(span.start, span.end); day++) expect(built.sum(id, day, day), `${id} day ${day}`).to.equal(whole.sum(id, day, day))
      expect(built.on(id, '2027-01-07'), `${id} outside`).to.equal(whole.on(id, '2027-01-07'))
    }
    expect(built.sum(14, 0, 50)).to.be.below(whole.sum(12, 0, 50))
  })
  it('expands no service\'s rules before the first turn, and each once', async () => {
    const counting = new CountingClock(berlin)
    const own = rules.filter((r) => r.serviceId !== 0)
    const building = OpenMinutes.build(own, span, [13, 14, 99], counting)
    expect(counting.calls).to.equal(0)
    await building
    const once = counting.calls
    expect(once).to.be.above(0)
    const counted = new CountingClock(berlin)
    void new OpenMinutes(own, span, [13, 14, 99], counted)
    expect(counted.calls).to.equal(once)
  })

  it('lets the event loop turn between services', async () => {
    let turns = 0
    let building = true
    const count = () => { if (building) { turns++; setImmediate(count) } }
    setImmediate(count)
    await OpenMinutes.build(rules, span, [12, 13, 14, 15], clock)
    building = false
    expect(turns).to.be.at.least(3)
  })
})

describe('OpenMinutes.onDay: a day of the span is read from its sums', () => {
  it('expands nothing for a day of the span; a day outside it is expanded alone, once', () => {
    const clockOf = new CountingClock(berlin)
    const open = new OpenMinutes([rule({ id: 1, weekday: 1, time_from: '18:00:00', time_to: '08:00:00' })], { start: '2026-11-23', end: '2026-11-29' }, [12], clockOf)
    const built = clockOf.calls
    expect([open.on(12, '2026-11-23'), open.on(12, '2026-11-24'), open.on(12, '2026-11-29')]).to.deep.equal([1440 - 360, 1440 - 480, 1440])
    expect(clockOf.calls).to.equal(built)
    expect(open.on(12, '2026-11-30')).to.equal(1440 - 360)
    const outside = clockOf.calls
    expect(outside).to.be.above(built)
    expect(open.on(12, '2026-11-30')).to.equal(1440 - 360)
    expect(clockOf.calls).to.equal(outside)
  })
})

describe('openMinutesFor: open minutes kept for the same rules, days, services and zone', () => {
  it('a kept answer is given without expanding the rules again', async () => {
    const zone: SiteZone = { kind: 'fixed', offsetMinutes: -217 }
    const shared = wallClockFor(zone)
    let calls = 0
    shared.instantOf = function (wallMs: number) {
      calls++
      return WallClock.prototype.instantOf.call(this, wallMs)
    }
    try {
      const rows = [ruleRow({ id: Math.floor(Math.random() * 1e9), weekday: 2, time_from: '09:00:00', time_to: '10:00:00' })]
      const first = await openMinutesFor(rows, rows.map((r) => rule(r)), { start: '2026-11-23', end: '2026-11-29' }, [12], zone)
      const built = calls
      expect(built).to.be.above(0)
      expect(await openMinutesFor(rows, rows.map((r) => rule(r)), { start: '2026-11-23', end: '2026-11-29' }, [12], zone)).to.equal(first)
      expect(calls).to.equal(built)
    } finally {
      delete (shared as Partial<WallClock>).instantOf
    }
  })

  const span = { start: '2026-11-23', end: '2026-11-29' }
  it('the same question gives the same answer; a changed rule, span, service list or zone gives a new one', async () => {
    // A rule ID not asked for before, so the process-wide cache cannot answer from an earlier run of this test.
    const rows = [ruleRow({ id: Math.floor(Math.random() * 1e9), weekday: 2 })]
    const rules = rows.map((r) => rule(r))
    const first = await openMinutesFor(rows, rules, span, [12], berlin)
    expect(first.span).to.deep.equal(span)
    expect(first.sum(12, 0, 6)).to.equal(6 * 1440)
    expect(await openMinutesFor(rows, rules, { ...span }, [12], berlin)).to.equal(first)
    const changedRows = [ruleRow({ id: 1, weekday: 3 })]
    const changed = await openMinutesFor(changedRows, changedRows.map((r) => rule(r)), span, [12], berlin)
    expect(changed).to.not.equal(first)
    expect(changed.on(12, '2026-11-25')).to.equal(0)
    expect(changed.on(12, '2026-11-24')).to.equal(1440)
    const otherSpan = await openMinutesFor(rows, rules, { start: '2026-11-23', end: '2026-11-30' }, [12], berlin)
    expect(otherSpan).to.not.equal(first)
    expect(otherSpan.span).to.deep.equal({ start: '2026-11-23', end: '2026-11-30' })
    expect((await openMinutesFor(rows, rules, span, [12, 15], berlin)).sum(15, 0, 6)).to.equal(6 * 1440)
    expect(await openMinutesFor(rows, rules, span, [12], { kind: 'fixed', offsetMinutes: 60 })).to.not.equal(first)
  })
})
