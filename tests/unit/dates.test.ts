import { expect } from 'chai'
import {
  WallClock, addMonthsClamped, daysInclusive, formatOffset, parseDateParam, parseZoneSetting, todayInZone,
  zoneFromOptions, zoneLabel, type SiteZone,
} from '../../server/domain/dates.ts'

const berlin: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }
const newYork: SiteZone = { kind: 'iana', name: 'America/New_York' }

describe('parseDateParam: strict dates in the three forms', () => {
  const cases: [string, string | undefined][] = [
    ['2026-11-25', '2026-11-25'],
    ['25.11.2026', '2026-11-25'],
    ['25/11/2026', '2026-11-25'],
    ['29.02.2028', '2028-02-29'],
    ['31.02.2026', undefined],
    ['29.02.2026', undefined],
    ['2026-2-3', undefined],
    ['13/13/2026', undefined],
    ['2026-11-25T00:00:00', undefined],
    ['25-11-2026', undefined],
    ['2026/11/25', undefined],
    [' 2026-11-25', undefined],
    ['0999-12-31', undefined],
    ['', undefined],
    ['tomorrow', undefined],
  ]
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} gives ${expected ?? 'no date'}`, () => {
      expect(parseDateParam(input)).to.equal(expected)
    })
  }
})

describe('WallClock: ISO 8601 with the site\'s UTC offset on that date', () => {
  const cases: [SiteZone, string, string, string][] = [
    [berlin, '2026-11-25', '09:00:00', '2026-11-25T09:00:00+01:00'],
    [berlin, '2026-07-15', '09:00:00', '2026-07-15T09:00:00+02:00'],
    // Europe/Berlin springs forward on 2026-03-29 at 02:00: before, in the gap (moved forward), after.
    [berlin, '2026-03-29', '01:59:59', '2026-03-29T01:59:59+01:00'],
    [berlin, '2026-03-29', '02:00:00', '2026-03-29T03:00:00+02:00'],
    [berlin, '2026-03-29', '02:30:00', '2026-03-29T03:30:00+02:00'],
    [berlin, '2026-03-29', '03:00:00', '2026-03-29T03:00:00+02:00'],
    // Europe/Berlin falls back on 2026-10-25 at 03:00: 02:00 to 02:59 occur twice, the first occurrence wins.
    [berlin, '2026-10-25', '01:59:00', '2026-10-25T01:59:00+02:00'],
    [berlin, '2026-10-25', '02:30:00', '2026-10-25T02:30:00+02:00'],
    [berlin, '2026-10-25', '03:00:00', '2026-10-25T03:00:00+01:00'],
    [berlin, '2026-10-24', '24:00:00', '2026-10-25T00:00:00+02:00'],
    [berlin, '2026-10-25', '24:00:00', '2026-10-26T00:00:00+01:00'],
    // America/New_York: 2026-03-08 02:00 springs forward, 2026-11-01 02:00 falls back.
    [newYork, '2026-03-08', '02:30:00', '2026-03-08T03:30:00-04:00'],
    [newYork, '2026-03-08', '01:30:00', '2026-03-08T01:30:00-05:00'],
    [newYork, '2026-11-01', '01:30:00', '2026-11-01T01:30:00-04:00'],
    [newYork, '2026-11-01', '02:00:00', '2026-11-01T02:00:00-05:00'],
    [{ kind: 'fixed', offsetMinutes: 345 }, '2026-11-25', '09:00:00', '2026-11-25T09:00:00+05:45'],
    [{ kind: 'fixed', offsetMinutes: -210 }, '2026-11-25', '09:00:00', '2026-11-25T09:00:00-03:30'],
    [{ kind: 'utc' }, '2026-11-25', '09:00:00', '2026-11-25T09:00:00+00:00'],
  ]
  for (const [zone, date, time, expected] of cases) {
    it(`${zoneLabel(zone)} ${date} ${time} is ${expected}`, () => {
      expect(new WallClock(zone).iso(date, time)).to.equal(expected)
    })
  }

  it('gives no value for the zero date, so created_date becomes null', () => {
    expect(new WallClock(berlin).isoDateTime('0000-00-00 00:00:00')).to.equal(undefined)
    expect(new WallClock(berlin).isoDateTime('2026-11-25 23:59:59')).to.equal('2026-11-25T23:59:59+01:00')
  })

  it('answers the same for a day it has seen before (the per-day offset cache)', () => {
    const clock = new WallClock(berlin)
    expect(clock.iso('2026-03-29', '02:30:00')).to.equal(clock.iso('2026-03-29', '02:30:00'))
    expect(clock.iso('2026-03-29', '12:00:00')).to.equal('2026-03-29T12:00:00+02:00')
    expect(clock.iso('2026-03-29', '00:30:00')).to.equal('2026-03-29T00:30:00+01:00')
  })
})

describe('the site\'s time zone from options and SITE_TIMEZONE', () => {
  const cases: [string | undefined, string | undefined, string][] = [
    ['Europe/Berlin', '1', 'Europe/Berlin'],
    ['', '5.75', '+05:45'],
    ['', '-3.5', '-03:30'],
    ['', '2', '+02:00'],
    ['', '0', 'UTC'],
    ['', '', 'UTC'],
    [undefined, undefined, 'UTC'],
    ['Not/AZone', '3', '+03:00'],
    ['UTC', '', 'UTC'],
  ]
  for (const [timezoneString, gmtOffset, label] of cases) {
    it(`timezone_string ${JSON.stringify(timezoneString)} and gmt_offset ${JSON.stringify(gmtOffset)} give ${label}`, () => {
      expect(zoneLabel(zoneFromOptions(timezoneString, gmtOffset))).to.equal(label)
    })
  }

  it('reads SITE_TIMEZONE as an IANA name, UTC or an offset', () => {
    expect(parseZoneSetting('America/New_York')).to.deep.equal({ kind: 'iana', name: 'America/New_York' })
    expect(parseZoneSetting('UTC')).to.deep.equal({ kind: 'utc' })
    expect(parseZoneSetting('+05:45')).to.deep.equal({ kind: 'fixed', offsetMinutes: 345 })
    expect(parseZoneSetting('UTC-3:30')).to.deep.equal({ kind: 'fixed', offsetMinutes: -210 })
    expect(parseZoneSetting('Mars/Olympus')).to.equal(undefined)
    expect(parseZoneSetting('+25:00')).to.equal(undefined)
  })

  it('formats offsets with sign, hours and minutes', () => {
    expect(formatOffset(0)).to.equal('+00:00')
    expect(formatOffset(-570)).to.equal('-09:30')
  })
})

describe('calendar arithmetic', () => {
  const months: [string, string][] = [
    ['2026-11-30', '2027-02-28'],
    ['2027-11-30', '2028-02-29'],
    ['2026-11-21', '2027-02-21'],
    ['2026-10-31', '2027-01-31'],
    ['2026-12-31', '2027-03-31'],
  ]
  for (const [from, to] of months) {
    it(`${from} plus three months is ${to}`, () => expect(addMonthsClamped(from, 3)).to.equal(to))
  }

  it('counts both ends of a range', () => {
    expect(daysInclusive('2026-01-01', '2026-01-01')).to.equal(1)
    expect(daysInclusive('2026-01-01', '2027-12-31')).to.equal(730)
  })

  it('takes today in the site\'s zone, not the server\'s', () => {
    const lateEvening = Date.UTC(2026, 10, 21, 23, 30) // 00:30 on the 22nd in Berlin
    expect(todayInZone(berlin, lateEvening)).to.equal('2026-11-22')
    expect(todayInZone({ kind: 'utc' }, lateEvening)).to.equal('2026-11-21')
    expect(todayInZone(newYork, Date.UTC(2026, 10, 22, 3, 0))).to.equal('2026-11-21')
  })
})

describe('WallClock\'s per-booking way (day, timeSeconds, isoOfDay) gives what its general way gives', () => {
  const dates = ['2026-11-25', '2026-03-29', '2026-10-25', '2026-02-29', '2028-02-29', '0000-00-00', '2026-13-01', '2026-1-05', 'x026-11-25', '1000-01-01']
  const times = ['09:00:00', '00:00:00', '23:59:59', '24:00:00', '02:30:00', '10:75:00', '10:00:75', '-01:00:00', '100:00:00', '9:00:00', '09:00:00.5', '10:00.55', 'ab:cd:ef']
  for (const zone of [berlin, newYork, { kind: 'fixed', offsetMinutes: 345 } as SiteZone, { kind: 'utc' } as SiteZone]) {
    it(`${zoneLabel(zone)}: every date with every time, and as a DATETIME`, () => {
      const general = new WallClock(zone)
      const fast = new WallClock(zone)
      for (const date of dates) {
        for (const time of times) {
          const day = fast.day(date)
          const seconds = fast.timeSeconds(time)
          const got = day === null || Number.isNaN(seconds) ? undefined : fast.isoOfDay(day, seconds)
          expect(got, `${date} ${time}`).to.equal(general.iso(date, time))
          expect(fast.isoDateTime(`${date} ${time}`), `${date} ${time} as DATETIME`).to.equal(general.iso(date, time))
        }
      }
    })
  }
})
