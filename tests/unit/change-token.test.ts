// The tokens of changes/ and the day arithmetic of its replace operations (API.md, "GET changes/").
import { expect } from 'chai'
import { changeContextOf, changedPeriods, changeFilterKey, decodeChangeToken, encodeChangeToken, periodDigestKey, type ChangeToken } from '../../server/domain/change-token.ts'
import { dayAfter, dayBefore, dayTextAfter, firstDayOfPeriod, lastDayOfPeriod, nextMonth, periodAllDays, periodDays, periodKindOf, periodOfDay, periodRange } from '../../server/domain/change-days.ts'

const filters = changeFilterKey({ statuses: ['booked', 'pending'], start: '2026-01-01', end: '2026-12-31' })
const expected = { filters, context: 'ctx', version: '0.2.0+answers.1' }
const digestToken: ChangeToken = { source: 'digest', ...expected, periods: new Map([[periodOfDay('2026-01-03', 'four-days'), periodDigestKey('3:1:2')], [0, periodDigestKey('1:5:6')], [periodOfDay('9999-12-31', 'four-days'), periodDigestKey('0:0:0')]]) }
const logToken: ChangeToken = { source: 'log', ...expected, server: '1:mariadb-bin', position: { file: 'mariadb-bin.000002', position: 1234 }, cursor: { kind: 'log-delta', from: { file: 'mariadb-bin.000001', position: 4 }, offset: 200 } }

describe('changes/ tokens', () => {
  it('a token reads back as it was made: periods, positions and cursors', () => {
    for (const token of [digestToken, logToken, { ...digestToken, cursor: { kind: 'digest-delta', periods: [periodOfDay('2026-01-14', 'four-days')], day: '2026-01-14' } } as ChangeToken, { ...logToken, cursor: { kind: 'sync', afterId: 77 } } as ChangeToken]) {
      expect(decodeChangeToken(encodeChangeToken(token), expected)).to.deep.equal({ ok: true, token })
    }
  })

  it('is URL-safe: base64url and two dots (the body, the periods, the check)', () => {
    expect(encodeChangeToken(digestToken)).to.match(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}$/)
    expect(encodeChangeToken(logToken)).to.match(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]{16}$/)
  })

  it('a token not made here, changed or cut short is invalid (400), never read', () => {
    const text = encodeChangeToken(digestToken)
    const [body, packed, check] = text.split('.') as [string, string, string]
    const changed = Buffer.from(Buffer.from(body, 'base64url').toString('utf8').replace('2026-', '2027-')).toString('base64url')
    expect(changed).to.not.equal(body)
    for (const bad of ['', 'nonsense', '.', '..', `${body}.${packed}.`, `${body}.${packed}.${check.slice(1)}`, `${changed}.${packed}.${check}`, `${body}.${packed.slice(1)}.${check}`, `${body}.${check}`, text.slice(1)]) {
      const verdict = decodeChangeToken(bad, expected)
      expect(verdict.ok, bad).to.equal(false)
      if (!verdict.ok) expect(verdict.kind).to.equal('invalid')
    }
  })

  it('other filters are invalid (400); another version or context is expired (410)', () => {
    const text = encodeChangeToken(digestToken)
    const other = decodeChangeToken(text, { ...expected, filters: changeFilterKey({ statuses: ['booked'] }) })
    expect(other).to.deep.include({ ok: false, kind: 'invalid' })
    expect(decodeChangeToken(text, { ...expected, version: '0.3.0+answers.1' })).to.deep.include({ ok: false, kind: 'expired' })
    expect(decodeChangeToken(text, { ...expected, context: 'other' })).to.deep.include({ ok: false, kind: 'expired' })
  })

  it('equal filters give equal keys, whatever the order of statuses', () => {
    expect(changeFilterKey({ statuses: ['pending', 'booked'] })).to.equal(changeFilterKey({ statuses: ['booked', 'pending', 'booked'] }))
    expect(changeFilterKey({ serviceId: 12 })).to.not.equal(changeFilterKey({}))
    expect(changeFilterKey({ start: '2026-01-01' })).to.not.equal(changeFilterKey({ end: '2026-01-01' }))
  })

  it('changedPeriods: added, changed and gone periods, in order; equal ones left out', () => {
    expect(changedPeriods(new Map([[30, 'a'], [4, 'b'], [12, 'c']]), new Map([[12, 'c'], [4, 'x'], [200, 'd']]))).to.deep.equal([4, 30, 200])
    expect(changedPeriods(new Map([[1, 'a']]), new Map([[1, 'a']]))).to.deep.equal([])
  })
})

/** Each day with what `step` (dayAfter, dayBefore) gives for it. */
function expectDays(step: (day: string) => string | undefined, cases: Array<[string, string | undefined]>): void {
  for (const [day, expected] of cases) expect(step(day), day).to.equal(expected)
}

describe('changes/ days', () => {
  it('dayTextAfter goes through every day text of a month, odd ones too, then the next month\'s day 00', () => {
    expect(['2026-02-28', '2026-02-29', '2026-03-00', '2026-04-30', '2026-04-31', '2026-12-31', '2026-01-09'].map(dayTextAfter))
      .to.deep.equal(['2026-02-29', '2026-02-30', '2026-03-01', '2026-04-31', '2026-05-00', '2027-01-00', '2026-01-10'])
  })

  it('periodAllDays: a month\'s first period from its day 00, its last to its day 31, the others their own days', () => {
    const of = (day: string, kind: Parameters<typeof periodAllDays>[1]) => periodAllDays(periodOfDay(day, kind), kind)
    expect(of('2026-03-01', 'two-days')).to.deep.equal({ first: '2026-03-00', last: '2026-03-02' })
    expect(of('2026-03-06', 'two-days')).to.deep.equal({ first: '2026-03-05', last: '2026-03-06' })
    expect(of('2026-02-28', 'two-days')).to.deep.equal({ first: '2026-02-27', last: '2026-02-28' })
    expect(of('2026-03-31', 'two-days')).to.deep.equal({ first: '2026-03-31', last: '2026-03-31' })
    expect(of('2026-03-30', 'four-days')).to.deep.equal({ first: '2026-03-29', last: '2026-03-31' })
    expect(of('2026-03-10', 'four-days')).to.deep.equal({ first: '2026-03-09', last: '2026-03-12' })
    expect(of('2026-03-15', 'day')).to.deep.equal({ first: '2026-03-15', last: '2026-03-15' })
    expect(of('2026-03-15', 'month')).to.deep.equal({ first: '2026-03-00', last: '2026-03-31' })
  })

  it('dayAfter and dayBefore cross months, years and leap days; an unreal day is its own bound', () => {
    expectDays(dayAfter, [['2026-01-31', '2026-02-01'], ['2028-02-28', '2028-02-29'], ['2026-12-31', '2027-01-01'], ['0000-00-00', '0000-00-00'], ['2026-05-00', '2026-05-01'], ['2026-13-00', '2026-13-00']])
    expectDays(dayBefore, [['2026-03-01', '2026-02-28'], ['2026-01-01', '2025-12-31'], ['2026-02-30', undefined], ['0000-00-00', undefined]])
  })

  it('periods of four days: 01-04, 05-08, …, 25-28 and 29 to the month\'s end; a day 00 with the first', () => {
    const periods = (days: string[]) => days.map((day) => { const { first, last } = periodDays(periodOfDay(day, 'four-days'), 'four-days'); return `${first}..${last}` })
    expect(periods(['2026-03-00', '2026-03-01', '2026-03-04', '2026-03-05', '2026-03-08', '2026-03-09', '2026-03-24', '2026-03-25', '2026-03-28', '2026-03-29', '2026-03-31'])).to.deep.equal([
      '2026-03-01..2026-03-04', '2026-03-01..2026-03-04', '2026-03-01..2026-03-04', '2026-03-05..2026-03-08', '2026-03-05..2026-03-08', '2026-03-09..2026-03-12',
      '2026-03-21..2026-03-24', '2026-03-25..2026-03-28', '2026-03-25..2026-03-28', '2026-03-29..2026-03-31', '2026-03-29..2026-03-31',
    ])
    // The month's end, leap years, years before 1000; a February of 28 days has a last period of no calendar day.
    expect(periods(['2028-02-29', '2026-04-30', '1900-02-28', '2000-02-29', '0999-09-30', '2026-02-28'])).to.deep.equal([
      '2028-02-29..2028-02-29', '2026-04-29..2026-04-30', '1900-02-25..1900-02-28', '2000-02-29..2000-02-29', '0999-09-29..0999-09-30', '2026-02-25..2026-02-28',
    ])
    expect(periodDays(periodOfDay('2026-02-28', 'four-days') + 1, 'four-days')).to.deep.equal({ first: '2026-02-29', last: '2026-02-29' })
    // The zero date is its own day; any other day of a month 00 is cut by its days too.
    expect(periods(['0000-00-00', '2026-00-00', '2026-00-04', '2026-00-09', '2026-00-31'])).to.deep.equal([
      '0000-00-00..0000-00-00', '2026-00-00..2026-00-00', '2026-00-00..2026-00-00', '2026-00-09..2026-00-12', '2026-00-29..2026-00-31',
    ])
    expect(['0000-00-00', '2026-06-04', '2026-06-05', '2026-06-28', '2026-06-29', '2026-06-30', '9999-12-31'].map((day) => periodOfDay(day, 'four-days'))).to.deep.equal([0, 6483392, 6483393, 6483398, 6483399, 6483399, 31997191])
  })

  it('periods of two days: 01-02, 03-04, …, 29-30 and 31; none past the month\'s last day', () => {
    const periods = (days: string[]) => days.map((day) => { const { first, last } = periodDays(periodOfDay(day, 'two-days'), 'two-days'); return `${first}..${last}` })
    expect(periods(['2026-03-00', '2026-03-02', '2026-03-03', '2026-03-30', '2026-03-31', '2028-02-29', '2026-04-30', '0000-00-00'])).to.deep.equal([
      '2026-03-01..2026-03-02', '2026-03-01..2026-03-02', '2026-03-03..2026-03-04', '2026-03-29..2026-03-30', '2026-03-31..2026-03-31', '2028-02-29..2028-02-29', '2026-04-29..2026-04-30', '0000-00-00..0000-00-00',
    ])
    // Past the month's last day a period names its own day, for an odd day a lenient SQL mode let in.
    expect(periodDays(periodOfDay('2026-02-30', 'two-days'), 'two-days')).to.deep.equal({ first: '2026-02-29', last: '2026-02-29' })
    expect(periodDays(periodOfDay('2026-04-31', 'two-days'), 'two-days')).to.deep.equal({ first: '2026-04-31', last: '2026-04-31' })
    expect(periodRange(periodOfDay('2026-03-30', 'two-days'), 'two-days')).to.deep.equal({ lower: '2026-03-29', before: '2026-03-31' })
    expect(periodRange(periodOfDay('2026-12-31', 'two-days'), 'two-days')).to.deep.equal({ lower: '2026-12-31', before: '2027-01-00' })
    expect(periodRange(periodOfDay('2026-03-01', 'two-days'), 'two-days')).to.deep.equal({ lower: '2026-03-00', before: '2026-03-03' })
    expect(['2026-06-01', '2026-06-02', '2026-06-03', '2026-06-31'].map((day) => periodOfDay(day, 'two-days'))).to.deep.equal([6483392, 6483392, 6483393, 6483407])
  })

  it('a period\'s range is what the database compares: its first string to the next period\'s', () => {
    const range = (day: string) => periodRange(periodOfDay(day, 'four-days'), 'four-days')
    expect(range('2026-06-03')).to.deep.equal({ lower: '2026-06-00', before: '2026-06-05' })
    expect(range('2026-06-08')).to.deep.equal({ lower: '2026-06-05', before: '2026-06-09' })
    expect(range('2026-06-27')).to.deep.equal({ lower: '2026-06-25', before: '2026-06-29' })
    expect(range('2026-12-30')).to.deep.equal({ lower: '2026-12-29', before: '2027-01-00' })
    expect(periodRange(0, 'four-days')).to.deep.equal({ lower: '0000-00-00', before: '0000-00-05' })
  })

  it('months, the periods of a feed longer than four years or without start or end: a month whole, the zero date\'s its day', () => {
    // At most a year between start and end (a leap year whole): days; at most two: two days; at most four: four; more, or a bound missing: months.
    expect([['2026-01-01', '2026-01-01'], ['2024-01-01', '2024-12-31'], ['2025-03-01', '2026-03-01'], ['2025-03-01', '2026-03-02'], ['2025-01-01', '2026-12-31']]
      .map(([start, end]) => periodKindOf(start, end))).to.deep.equal(['day', 'day', 'day', 'two-days', 'two-days'])
    expect([periodKindOf('2025-01-01', '2027-01-01'), periodKindOf('2024-01-01', '2025-12-31'), periodKindOf('2024-01-01', '2026-01-01'), periodKindOf('2022-01-01', '2026-01-01'), periodKindOf('2022-01-01', '2026-01-02'), periodKindOf('2026-01-02', '2026-01-01')])
      .to.deep.equal(['two-days', 'two-days', 'four-days', 'four-days', 'month', 'month'])
    expect([periodKindOf(undefined, '2026-01-01'), periodKindOf('2026-01-01', undefined), periodKindOf(undefined, undefined)]).to.deep.equal(['month', 'month', 'month'])
    expect([periodOfDay('2026-06-00', 'month'), periodOfDay('2026-06-30', 'month'), periodOfDay('0000-00-00', 'month')]).to.deep.equal([6483392, 6483392, 0])
    expect(periodRange(6483392, 'month')).to.deep.equal({ lower: '2026-06-00', before: '2026-07-00' })
    expect(periodRange(periodOfDay('2026-12-31', 'month'), 'month')).to.deep.equal({ lower: '2026-12-00', before: '2027-01-00' })
    expect(periodDays(periodOfDay('2028-02-10', 'month'), 'month')).to.deep.equal({ first: '2028-02-01', last: '2028-02-29' })
    expect(periodDays(periodOfDay('2026-11-10', 'month'), 'month')).to.deep.equal({ first: '2026-11-01', last: '2026-11-30' })
    expect(periodDays(0, 'month')).to.deep.equal({ first: '0000-00-00', last: '0000-00-00' })
    expect(lastDayOfPeriod(periodOfDay('2026-00-15', 'month'), 'month', [{ booking_date: '2026-00-15' }])).to.equal('2026-00-15')
  })

  it('a period\'s replace covers an odd day read in it (a day 00, a 30 February)', () => {
    const period = (day: string) => periodOfDay(day, 'four-days')
    expect(firstDayOfPeriod(period('2026-03-00'), 'four-days', [{ booking_date: '2026-03-00' }])).to.equal('2026-03-00')
    expect(firstDayOfPeriod(period('2026-03-03'), 'four-days', [{ booking_date: '2026-03-03' }])).to.equal('2026-03-01')
    expect(firstDayOfPeriod(period('2026-03-03'), 'four-days', [])).to.equal('2026-03-01')
    expect(lastDayOfPeriod(period('2026-02-30'), 'four-days', [{ booking_date: '2026-02-30' }])).to.equal('2026-02-30')
    expect(lastDayOfPeriod(period('2026-02-26'), 'four-days', [{ booking_date: '2026-02-26' }])).to.equal('2026-02-28')
    expect(lastDayOfPeriod(period('2026-02-26'), 'four-days', [])).to.equal('2026-02-28')
  })

  it('the edges of the days: the first and last period of each month, leap years by the century, months 00 and 13', () => {
    const days = (day: string, kind: 'two-days' | 'four-days' | 'month') => { const { first, last } = periodDays(periodOfDay(day, kind), kind); return `${first}..${last}` }
    expect(['2026-01-01', '2026-01-31', '2026-12-01', '2026-12-31'].map((day) => days(day, 'two-days'))).to.deep.equal(['2026-01-01..2026-01-02', '2026-01-31..2026-01-31', '2026-12-01..2026-12-02', '2026-12-31..2026-12-31'])
    expect(['2026-01-01', '2026-12-30'].map((day) => days(day, 'four-days'))).to.deep.equal(['2026-01-01..2026-01-04', '2026-12-29..2026-12-31'])
    expect(['1900-02-10', '2000-02-10', '2100-02-10', '2024-02-10', '2026-01-10', '2026-12-10'].map((day) => days(day, 'month'))).to.deep.equal([
      '1900-02-01..1900-02-28', '2000-02-01..2000-02-29', '2100-02-01..2100-02-28', '2024-02-01..2024-02-29', '2026-01-01..2026-01-31', '2026-12-01..2026-12-31',
    ])
    // A month that is no month (a lenient SQL mode's) begins at its day 00 and runs to a 31st.
    expect([days('2026-13-01', 'four-days'), days('2026-13-30', 'four-days'), days('2026-13-09', 'month'), days('2026-00-30', 'two-days')]).to.deep.equal(['2026-13-00..2026-13-00', '2026-13-29..2026-13-31', '2026-13-00..2026-13-00', '2026-00-29..2026-00-30'])
    expect(nextMonth('0998-12')).to.equal('0999-01')
    expect(nextMonth('0009-03')).to.equal('0009-04')
    // Only a whole day 00 of a real month is followed by its day 01.
    expect([dayAfter('x2026-05-00'), dayAfter('2026-05-00x'), dayAfter('2026-05-00')]).to.deep.equal(['x2026-05-00', '2026-05-00x', '2026-05-01'])
    expect([dayBefore('0050-03-01'), dayAfter('0050-02-28'), dayAfter('0099-12-31')]).to.deep.equal(['0050-02-28', '0050-03-01', '0100-01-01'])
  })

  it('nextMonth: December to January of the next year; the zero date\'s month to 0000-01', () => {
    expect(nextMonth('2026-12')).to.equal('2027-01')
    expect(nextMonth('2026-01')).to.equal('2026-02')
    expect(nextMonth('0999-09')).to.equal('0999-10')
    expect(nextMonth('0000-00')).to.equal('0000-01')
  })
})

describe('changes/ tokens made by hand', () => {
  it('a token that passes the check but not the shape the service writes is invalid, never read', async () => {
    const { createHash } = await import('node:crypto')
    // packed null: the body alone, as format 2 wrote it.
    const forge = (parts: unknown[], packed: string | null = '') => {
      const signed = `${Buffer.from(JSON.stringify(parts)).toString('base64url')}${packed === null ? '' : `.${packed}`}`
      return `${signed}.${createHash('sha256').update(`booking-calendar-api changes token\n${signed}`).digest('base64url').slice(0, 16)}`
    }
    const good = [3, 'digest', filters, 'ctx', '0.2.0+answers.1', null, null, 0, null, null, null]
    expect(decodeChangeToken(forge(good), expected).ok).to.equal(true)
    expect(decodeChangeToken(forge([...good.slice(0, 7), 1, null, null, null], 'AAAAAAabcdefghijkl'), expected).ok).to.equal(true)
    expect(decodeChangeToken(forge([...good.slice(0, 9), true, null]), expected)).to.deep.include({ ok: true }).and.to.have.nested.property('token.unverified', true)
    expect(decodeChangeToken(forge([...good.slice(0, 10), 'AAAAABB']), expected)).to.deep.include({ ok: true }).and.to.have.nested.property('token.oddPeriods').that.deep.equals([1, 2])
    for (const [bad, packed] of [
      [[...good.slice(0, 8), { kind: 'sync', afterId: 'x' }, null, null]],
      [[...good.slice(0, 8), { kind: 'log-delta', from: { file: 1, position: -1 }, offset: 0 }, null, null]],
      [[...good.slice(0, 7), 'not packed', null, null, null]],
      // unverified is true or null; a digest cursor's sums are three whole numbers; odd periods packed, ascending.
      [[...good.slice(0, 9), false, null]], [[...good.slice(0, 8), { kind: 'digest-delta', periods: '', day: '2026-01-05', sums: '1:2' }, null, null]],
      [[...good.slice(0, 10), [1, 2]]], [[...good.slice(0, 10), 'B']], [[...good.slice(0, 10), 'AAAAABAAAAAA']],
      [[...good.slice(0, 10), 'AAAAAB=']], [[...good.slice(0, 10), '.AAAAAB']],
      [[3, 'other', ...good.slice(2)]],
      [['3', ...good.slice(1)]],
      [good.slice(0, 10)],
      // No periods beside the body; periods where the body names none; fewer or more than it names.
      [good, null], [[...good.slice(0, 7), null, null, null, null], 'AAAAAAabcdefghijkl'], [[...good.slice(0, 7), 2, null, null, null], 'AAAAAAabcdefghijkl'], [good, 'AAAAAAabcdefghijkl'],
    ] as Array<[unknown[], string | null | undefined]>) expect(decodeChangeToken(forge(bad, packed), expected), JSON.stringify([bad, packed])).to.deep.include({ ok: false, kind: 'invalid' })
  })
})

describe('changes/ tokens and days: the edges', () => {
  it('names why a token is refused: not made here, another format, other filters; expired by version, then by context', () => {
    const text = encodeChangeToken(digestToken)
    const reason = (verdict: ReturnType<typeof decodeChangeToken>) => (verdict.ok ? 'ok' : `${verdict.kind}: ${verdict.reason}`)
    expect(reason(decodeChangeToken('.abc', expected))).to.match(/^invalid: since is not a token this service made/)
    expect(reason(decodeChangeToken(text, { ...expected, filters: 'other' }))).to.match(/^invalid: since was made with other filters \(service, status, start, end\)/)
    expect(reason(decodeChangeToken(text, { ...expected, version: 'x' }))).to.equal('expired: the service was upgraded since this token was made')
    expect(reason(decodeChangeToken(text, { ...expected, version: 'x', context: 'y' }))).to.equal('expired: the service was upgraded since this token was made')
    expect(reason(decodeChangeToken(text, { ...expected, context: 'y' }))).to.match(/^expired: the site's time zone, a service's slug or what this caller may see changed/)
  })

  it('a token of another format number (one an earlier version made: digests per month, or 16 periods a month inside the body) is expired, 410', async () => {
    const { createHash } = await import('node:crypto')
    for (const earlier of [[1, 'digest', filters, 'ctx', 'v', null, null, '202601abcdefghijkl', null], [2, 'digest', filters, 'ctx', 'v', null, null, 'AAAAabcdefghijkl', null]]) {
      const body = Buffer.from(JSON.stringify(earlier)).toString('base64url')
      const text = `${body}.${createHash('sha256').update(`booking-calendar-api changes token\n${body}`).digest('base64url').slice(0, 16)}`
      expect(decodeChangeToken(text, expected)).to.deep.equal({ ok: false, kind: 'expired', reason: 'the service was upgraded since this token was made' })
    }
  })

  it('a day in a cursor must be whole, YYYY-MM-DD; a period a whole number from 0 to 9999-12\'s last', async () => {
    const { createHash } = await import('node:crypto')
    const forge = (cursor: unknown, packed = '', count = packed === '' ? 0 : 1) => {
      const signed = `${Buffer.from(JSON.stringify([3, 'digest', filters, 'ctx', '0.2.0+answers.1', null, null, count, cursor, null, null])).toString('base64url')}.${packed}`
      return `${signed}.${createHash('sha256').update(`booking-calendar-api changes token\n${signed}`).digest('base64url').slice(0, 16)}`
    }
    // The cursor's periods packed: a step from the one before in one digit (1 to 63), else 'A' and the number in five.
    const last = periodOfDay('9999-12-31', 'day')
    for (const periods of [[0, 1, 64, 65, 6480032, last], [], [last]]) {
      const token: ChangeToken = { ...digestToken, cursor: { kind: 'digest-delta', periods, day: '2026-01-05' } }
      expect(decodeChangeToken(encodeChangeToken(token), expected)).to.deep.equal({ ok: true, token })
    }
    expect(decodeChangeToken(forge({ kind: 'digest-delta', periods: 'AAAAAABAAAAB_', day: '2026-01-05', sums: '3:12884901888:7', sync: true }), expected).ok).to.equal(true)
    for (const cursor of [
      { kind: 'digest-delta', periods: 'AAAAAA', day: 'x2026-01-05' }, { kind: 'digest-delta', periods: 'AAAAAA', day: '2026-01-05x' },
      // A step first; a number after a larger one, or equal; past 9999-12's last; cut short; not base64url; the numbers of format 2.
      { kind: 'digest-delta', periods: 'B' }, { kind: 'digest-delta', periods: 'AAAAABAAAAAA' }, { kind: 'digest-delta', periods: 'AAAAABAAAAAB' }, { kind: 'digest-delta', periods: 'A_____' },
      { kind: 'digest-delta', periods: 'AAAA' }, { kind: 'digest-delta', periods: 'AAAAA=' }, { kind: 'digest-delta', periods: [3240016] },
      // A character that is no digit, as a step, first, or after the numbers.
      { kind: 'digest-delta', periods: 'AAAAAA=' }, { kind: 'digest-delta', periods: '=AAAAAA' }, { kind: 'digest-delta', periods: 'AAAAAAB ' },
      { kind: 'digest-delta', months: ['2026-01'] },
    ]) expect(decodeChangeToken(forge(cursor), expected).ok, JSON.stringify(cursor)).to.equal(false)
    // Packed periods: 13 characters each mostly (a step in 1, a hash in 12), 18 for a whole number, nothing else.
    expect(decodeChangeToken(forge(null, 'AAAAAAabcdefghijkl'), expected).ok).to.equal(true)
    expect(decodeChangeToken(forge(null, 'AAAAAAabcdefghijklBabcdefghijkl', 2), expected).ok).to.equal(true)
    for (const packed of ['AAAAAAabcdefghijk', 'AAAAAAabcdefghijkl=', 'AAAAAAabcdefghijk=', 'Babcdefghijkl', 'A_____abcdefghijkl']) expect(decodeChangeToken(forge(null, packed), expected).ok, packed).to.equal(false)
  })

  it('a digest cursor\'s periods are packed as steps where a step fits one digit (1 to 63), else whole: the token stays short', () => {
    const packedCursor = (periods: number[]) => {
      const body = encodeChangeToken({ ...digestToken, cursor: { kind: 'digest-delta', periods } }).split('.')[0]!
      return (JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown[])[8]
    }
    // 'A' and five digits: a whole number; a letter other than 'A': the step (B = 1, _ = 63).
    expect(packedCursor([0, 1, 2])).to.deep.equal({ kind: 'digest-delta', periods: 'AAAAAABB' })
    expect(packedCursor([0, 63, 127])).to.deep.equal({ kind: 'digest-delta', periods: 'AAAAAA_AAAAB_' })
    expect(packedCursor([5, 69])).to.deep.equal({ kind: 'digest-delta', periods: 'AAAAAFAAAABF' })
  })

  it('reads a period up to 9999-12\'s last whole number, in a cursor and beside the body, and none past it', async () => {
    const { createHash } = await import('node:crypto')
    const forge = (cursor: unknown, packed = '', count = packed === '' ? 0 : 1) => {
      const signed = `${Buffer.from(JSON.stringify([3, 'digest', filters, 'ctx', '0.2.0+answers.1', null, null, count, cursor, null, null])).toString('base64url')}.${packed}`
      return `${signed}.${createHash('sha256').update(`booking-calendar-api changes token\n${signed}`).digest('base64url').slice(0, 16)}`
    }
    const whole = (n: number) => `A${[24, 18, 12, 6, 0].map((shift) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[Math.floor(n / 2 ** shift) & 63]).join('')}`
    const most = (9999 * 100 + 12) * 32 + 31
    expect(decodeChangeToken(forge({ kind: 'digest-delta', periods: whole(most) }), expected)).to.have.nested.property('token.cursor.periods').that.deep.equals([most])
    expect(decodeChangeToken(forge(null, `${whole(most)}abcdefghijkl`), expected)).to.have.nested.property('token.periods').that.deep.equals(new Map([[most, 'abcdefghijkl']]))
    expect(decodeChangeToken(forge({ kind: 'digest-delta', periods: whole(most + 1) }), expected).ok).to.equal(false)
    expect(decodeChangeToken(forge(null, `${whole(most + 1)}abcdefghijkl`), expected).ok).to.equal(false)
    // A cursor's sums: three whole numbers, the first of up to 12 digits, nothing around them.
    expect(decodeChangeToken(forge({ kind: 'digest-delta', periods: '', sums: '123456789012:1:2' }), expected).ok).to.equal(true)
    for (const sums of ['1234567890123:1:2', 'x1:2:3', '1:2:3x', '1:2:3:4']) {
      expect(decodeChangeToken(forge({ kind: 'digest-delta', periods: '', sums }), expected).ok, sums).to.equal(false)
    }
  })

  it('a signed text of more than three parts is not a token, though its first two are one; odd periods packed empty are none', async () => {
    const { createHash } = await import('node:crypto')
    const sign = (signed: string) => `${signed}.${createHash('sha256').update(`booking-calendar-api changes token\n${signed}`).digest('base64url').slice(0, 16)}`
    const body = (odd: string | null) => Buffer.from(JSON.stringify([3, 'digest', filters, 'ctx', '0.2.0+answers.1', null, null, 0, null, null, odd])).toString('base64url')
    expect(decodeChangeToken(sign(`${body(null)}.`), expected).ok).to.equal(true)
    expect(decodeChangeToken(sign(`${body(null)}..`), expected)).to.deep.include({ ok: false, kind: 'invalid' })
    expect(decodeChangeToken(sign(`${body(null)}..x`), expected)).to.deep.include({ ok: false, kind: 'invalid' })
    const read = decodeChangeToken(sign(`${body('')}.`), expected)
    expect(read.ok && 'oddPeriods' in read.token).to.equal(false)
    expect(read.ok).to.equal(true)
  })

  it('each way a text is not a token says the same sentence: a body that is no JSON, no list, no format number, not the shape', async () => {
    const { createHash } = await import('node:crypto')
    const forge = (body: string) => `${body}.${createHash('sha256').update(`booking-calendar-api changes token\n${body}`).digest('base64url').slice(0, 16)}`
    const sentence = 'since is not a token this service made: give the next of an earlier answer, or leave since out to start a new sync.'
    for (const body of [Buffer.from('{not json').toString('base64url'), Buffer.from('{"a":1}').toString('base64url'), Buffer.from('["3","digest"]').toString('base64url'), Buffer.from('[3,"digest"]').toString('base64url'), '']) {
      expect(decodeChangeToken(forge(body), expected), body).to.deep.equal({ ok: false, kind: 'invalid', reason: sentence })
      expect(decodeChangeToken(forge(`${body}.`), expected), `${body}.`).to.deep.equal({ ok: false, kind: 'invalid', reason: sentence })
    }
  })

  it('a context is 16 base64url characters of its parts\' SHA-256; packed periods do not depend on the order they were given in', () => {
    expect(changeContextOf(['Europe/Berlin', 'x', false])).to.equal('Um-4GjGygLf4uVXX')
    expect(changeContextOf(['Europe/Berlin', 'x', true])).to.not.equal(changeContextOf(['Europe/Berlin', 'x', false]))
    const keys: Array<[number, string]> = [[3241697, periodDigestKey('a')], [5, periodDigestKey('b')], [3241696, periodDigestKey('c')]]
    expect(encodeChangeToken({ ...digestToken, periods: new Map(keys) })).to.equal(encodeChangeToken({ ...digestToken, periods: new Map([...keys].reverse()) }))
  })

  it('filter keys keep a service, each bound and null apart', () => {
    expect(changeFilterKey({})).to.equal('[null,null,null,null]')
    expect(changeFilterKey({ serviceId: 3, statuses: ['b', 'a'], start: '2026-01-01', end: '2026-02-01' })).to.equal('[3,["a","b"],"2026-01-01","2026-02-01"]')
  })

  it('periodDigestKey: 12 characters, equal for equal digests, different for different ones', () => {
    expect(periodDigestKey('3:1:2')).to.have.length(12)
    expect(periodDigestKey('3:1:2')).to.equal(periodDigestKey('3:1:2'))
    expect(periodDigestKey('3:1:2')).to.not.equal(periodDigestKey('3:1:3'))
  })

  it('a year of days, two of two days and four of four make a token of about 5 KB: 13 characters a period', () => {
    for (const [kind, years] of [['day', 1], ['two-days', 2], ['four-days', 4]] as const) {
      const periods = new Map<number, string>()
      for (let day = '2026-01-01'; day < `${2026 + years}-01-01`; day = dayAfter(day)) periods.set(periodOfDay(day, kind), periodDigestKey(day))
      expect(periods.size, kind).to.be.within(365, 400)
      const text = encodeChangeToken({ ...digestToken, periods })
      expect(text.length, kind).to.be.within(periods.size * 13, periods.size * 13 + 400)
      expect(decodeChangeToken(text, expected)).to.deep.equal({ ok: true, token: { ...digestToken, periods } })
    }
  })

  it('days: only YYYY-MM-DD of a month 01 to 12 is a real day, in any year a DATE holds', () => {
    expectDays(dayAfter, [['x2026-01-01', 'x2026-01-01'], ['2026-01-01x', '2026-01-01x'], ['0999-12-31', '1000-01-01'], ['0000-02-28', '0000-02-29'], ['9999-12-30', '9999-12-31'], ['2026-02-30', '2026-02-30']])
    expectDays(dayBefore, [['0999-05-05', '0999-05-04'], ['0001-01-01', '0000-12-31'], ['2026-13-05', undefined], ['2026-00-05', undefined]])
    expect(periodDays(periodOfDay('2026-13-05', 'four-days'), 'four-days')).to.deep.equal({ first: '2026-13-05', last: '2026-13-08' })
  })
})
