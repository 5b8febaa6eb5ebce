// The tokens of changes/ and the day arithmetic of its replace operations (API.md, "GET changes/").
import { expect } from 'chai'
import { changedMonths, changeFilterKey, decodeChangeToken, encodeChangeToken, monthDigestKey, type ChangeToken } from '../../server/domain/change-token.ts'
import { dayAfter, dayBefore, firstDayOfMonth, lastDayOfMonth, monthDays } from '../../server/domain/change-days.ts'
import { nextMonth } from '../../db/booking-queries.ts'

const filters = changeFilterKey({ statuses: ['booked', 'pending'], start: '2026-01-01', end: '2026-12-31' })
const expected = { filters, context: 'ctx', version: '0.2.0+answers.1' }
const digestToken: ChangeToken = { source: 'digest', ...expected, months: { '2026-01': monthDigestKey('3:1:2'), '0000-00': monthDigestKey('1:5:6'), '2026-12': monthDigestKey('0:0:0') } }
const logToken: ChangeToken = { source: 'log', ...expected, server: '1:mariadb-bin', position: { file: 'mariadb-bin.000002', position: 1234 }, cursor: { kind: 'log-delta', from: { file: 'mariadb-bin.000001', position: 4 }, offset: 200 } }

describe('changes/ tokens', () => {
  it('a token reads back as it was made: months, positions and cursors', () => {
    for (const token of [digestToken, logToken, { ...digestToken, cursor: { kind: 'digest-delta', months: ['2026-01'], day: '2026-01-14' } } as ChangeToken, { ...logToken, cursor: { kind: 'sync', afterId: 77 } } as ChangeToken]) {
      expect(decodeChangeToken(encodeChangeToken(token), expected)).to.deep.equal({ ok: true, token })
    }
  })

  it('is URL-safe: base64url and a dot', () => {
    expect(encodeChangeToken(digestToken)).to.match(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}$/)
  })

  it('a token not made here, changed or cut short is invalid (400), never read', () => {
    const text = encodeChangeToken(digestToken)
    const [body, check] = text.split('.') as [string, string]
    const changed = Buffer.from(Buffer.from(body, 'base64url').toString('utf8').replace('2026-', '2027-')).toString('base64url')
    for (const bad of ['', 'nonsense', '.', `${body}.`, `${body}.${check.slice(1)}`, `${changed}.${check}`, text.slice(1)]) {
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

  it('changedMonths: added, changed and gone months, in order; equal ones left out', () => {
    expect(changedMonths({ '2026-01': 'a', '2026-02': 'b', '2026-03': 'c' }, { '2026-03': 'c', '2026-02': 'x', '2026-04': 'd' })).to.deep.equal(['2026-01', '2026-02', '2026-04'])
    expect(changedMonths({ '2026-01': 'a' }, { '2026-01': 'a' })).to.deep.equal([])
  })
})

describe('changes/ days', () => {
  it('dayAfter and dayBefore cross months, years and leap days; an unreal day is its own bound', () => {
    expect(dayAfter('2026-01-31')).to.equal('2026-02-01')
    expect(dayAfter('2028-02-28')).to.equal('2028-02-29')
    expect(dayAfter('2026-12-31')).to.equal('2027-01-01')
    expect(dayAfter('0000-00-00')).to.equal('0000-00-00')
    expect(dayBefore('2026-03-01')).to.equal('2026-02-28')
    expect(dayBefore('2026-01-01')).to.equal('2025-12-31')
    expect(dayBefore('2026-02-30')).to.equal(undefined)
    expect(dayBefore('0000-00-00')).to.equal(undefined)
  })

  it('monthDays: first and last calendar day; the zero date\'s month is that day', () => {
    expect(monthDays('2026-02')).to.deep.equal({ first: '2026-02-01', last: '2026-02-28' })
    expect(monthDays('2028-02')).to.deep.equal({ first: '2028-02-01', last: '2028-02-29' })
    expect(monthDays('2026-12')).to.deep.equal({ first: '2026-12-01', last: '2026-12-31' })
    expect(monthDays('0000-00')).to.deep.equal({ first: '0000-00-00', last: '0000-00-00' })
  })

  it('a month\'s replace covers an odd day read in it (a day 00, a 30 February)', () => {
    expect(firstDayOfMonth('2026-03', [{ booking_date: '2026-03-00' }])).to.equal('2026-03-00')
    expect(firstDayOfMonth('2026-03', [{ booking_date: '2026-03-05' }])).to.equal('2026-03-01')
    expect(lastDayOfMonth('2026-02', [{ booking_date: '2026-02-30' }])).to.equal('2026-02-30')
    expect(lastDayOfMonth('2026-02', [{ booking_date: '2026-02-10' }])).to.equal('2026-02-28')
    expect(lastDayOfMonth('2026-02', [])).to.equal('2026-02-28')
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
    const forge = (parts: unknown[]) => {
      const body = Buffer.from(JSON.stringify(parts)).toString('base64url')
      return `${body}.${createHash('sha256').update(`booking-calendar-api changes token\n${body}`).digest('base64url').slice(0, 16)}`
    }
    const good = [1, 'digest', filters, 'ctx', '0.2.0+answers.1', null, null, '', null]
    expect(decodeChangeToken(forge(good), expected).ok).to.equal(true)
    for (const bad of [
      [...good.slice(0, 8), { kind: 'sync', afterId: 'x' }],
      [...good.slice(0, 8), { kind: 'log-delta', from: { file: 1, position: -1 }, offset: 0 }],
      [...good.slice(0, 7), 'not packed', null],
      [1, 'other', ...good.slice(2)],
      good.slice(0, 8),
    ]) expect(decodeChangeToken(forge(bad), expected)).to.deep.include({ ok: false, kind: 'invalid' })
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

  it('a token of another format number is refused as such', async () => {
    const { createHash } = await import('node:crypto')
    const body = Buffer.from(JSON.stringify([2, 'digest', filters, 'ctx', 'v', null, null, '', null])).toString('base64url')
    const text = `${body}.${createHash('sha256').update(`booking-calendar-api changes token\n${body}`).digest('base64url').slice(0, 16)}`
    const verdict = decodeChangeToken(text, expected)
    expect(verdict.ok ? '' : verdict.reason).to.match(/another version of the token format/)
  })

  it('a day or month in a cursor must be whole: YYYY-MM-DD and YYYY-MM, nothing around them', async () => {
    const { createHash } = await import('node:crypto')
    const forge = (cursor: unknown) => {
      const body = Buffer.from(JSON.stringify([1, 'digest', filters, 'ctx', '0.2.0+answers.1', null, null, '', cursor])).toString('base64url')
      return `${body}.${createHash('sha256').update(`booking-calendar-api changes token\n${body}`).digest('base64url').slice(0, 16)}`
    }
    expect(decodeChangeToken(forge({ kind: 'digest-delta', months: ['2026-01'], day: '2026-01-05' }), expected).ok).to.equal(true)
    for (const cursor of [
      { kind: 'digest-delta', months: ['2026-01'], day: 'x2026-01-05' }, { kind: 'digest-delta', months: ['2026-01'], day: '2026-01-05x' },
      { kind: 'digest-delta', months: ['x2026-01'] }, { kind: 'digest-delta', months: ['2026-01x'] },
    ]) expect(decodeChangeToken(forge(cursor), expected).ok, JSON.stringify(cursor)).to.equal(false)
  })

  it('filter keys keep a service, each bound and null apart', () => {
    expect(changeFilterKey({})).to.equal('[null,null,null,null]')
    expect(changeFilterKey({ serviceId: 3, statuses: ['b', 'a'], start: '2026-01-01', end: '2026-02-01' })).to.equal('[3,["a","b"],"2026-01-01","2026-02-01"]')
  })

  it('monthDigestKey: 12 characters, equal for equal digests, different for different ones', () => {
    expect(monthDigestKey('3:1:2')).to.have.length(12)
    expect(monthDigestKey('3:1:2')).to.equal(monthDigestKey('3:1:2'))
    expect(monthDigestKey('3:1:2')).to.not.equal(monthDigestKey('3:1:3'))
  })

  it('days: only YYYY-MM-DD is read, years before 1000 and month 00 or 13 are no real days or months', () => {
    expect(dayAfter('x2026-01-01')).to.equal('x2026-01-01')
    expect(dayAfter('2026-01-01x')).to.equal('2026-01-01x')
    expect(dayBefore('0999-05-05')).to.equal(undefined)
    expect(dayAfter('1000-01-01')).to.equal('1000-01-02')
    expect(monthDays('2026-00')).to.deep.equal({ first: '2026-00-00', last: '2026-00-00' })
    expect(monthDays('2026-13')).to.deep.equal({ first: '2026-13-00', last: '2026-13-00' })
    expect(monthDays('0999-05')).to.deep.equal({ first: '0999-05-00', last: '0999-05-00' })
    expect(monthDays('1000-01')).to.deep.equal({ first: '1000-01-01', last: '1000-01-31' })
    expect(lastDayOfMonth('2026-02', [{ booking_date: '2026-02-28' }])).to.equal('2026-02-28')
    expect(firstDayOfMonth('2026-03', [{ booking_date: '2026-03-01' }])).to.equal('2026-03-01')
    expect(firstDayOfMonth('2026-03', [])).to.equal('2026-03-01')
  })
})
