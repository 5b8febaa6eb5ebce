import { expect } from 'chai'
import { parseDateParam } from '../../server/domain/date-param.ts'
import { addMonthsClamped, dayToMs, daysInclusive, msToDay, timeToSeconds, weekdayOf } from '../../server/domain/day-arithmetic.ts'
import { remember } from '../../server/domain/remember.ts'
import { WallClock, wallClockFor } from '../../server/domain/wall-clock.ts'
import { formatOffset, isIanaZone, offsetAt, parseZoneSetting, todayInZone, wallClockToInstant, zoneFromOptions, zoneLabel, type SiteZone } from '../../server/domain/zone-offsets.ts'

const berlin: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }
const newYork: SiteZone = { kind: 'iana', name: 'America/New_York' }
const auckland: SiteZone = { kind: 'iana', name: 'Pacific/Auckland' }
const sydney: SiteZone = { kind: 'iana', name: 'Australia/Sydney' }

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
    // Each form is anchored at both ends.
    ['x25.11.2026', undefined],
    ['25.11.2026x', undefined],
    ['x25/11/2026', undefined],
    ['25/11/2026x', undefined],
    ['1000-01-01', '1000-01-01'],
    ['01.01.1000', '1000-01-01'],
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
    // East of UTC the change falls on the UTC day before the local one. Pacific/Auckland
    // falls back on 2026-04-05 at 03:00 (+13:00 to +12:00) and springs forward on 2026-09-27 at 02:00.
    [auckland, '2026-04-04', '23:00:00', '2026-04-04T23:00:00+13:00'],
    [auckland, '2026-04-05', '01:00:00', '2026-04-05T01:00:00+13:00'],
    [auckland, '2026-04-05', '02:30:00', '2026-04-05T02:30:00+13:00'],
    [auckland, '2026-04-05', '03:00:00', '2026-04-05T03:00:00+12:00'],
    [auckland, '2026-09-27', '01:59:00', '2026-09-27T01:59:00+12:00'],
    [auckland, '2026-09-27', '02:30:00', '2026-09-27T03:30:00+13:00'],
    // Australia/Sydney: back on 2026-04-05 at 03:00 (+11:00 to +10:00), forward on 2026-10-04 at 02:00.
    [sydney, '2026-04-05', '01:00:00', '2026-04-05T01:00:00+11:00'],
    [sydney, '2026-04-05', '03:00:00', '2026-04-05T03:00:00+10:00'],
    [sydney, '2026-10-04', '02:30:00', '2026-10-04T03:30:00+11:00'],
    // Seconds and minutes of the wall-clock time each land in their own place.
    [berlin, '2026-11-25', '13:47:09', '2026-11-25T13:47:09+01:00'],
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

  it('reads a DATETIME without a time as its midnight', () => {
    expect(new WallClock(berlin).isoDateTime('2026-11-25')).to.equal('2026-11-25T00:00:00+01:00')
  })

  it('answers the same for a day it has seen before (the per-day offset cache)', () => {
    const clock = new WallClock(berlin)
    expect(clock.iso('2026-03-29', '02:30:00')).to.equal('2026-03-29T03:30:00+02:00')
    expect(clock.iso('2026-03-29', '02:30:00')).to.equal('2026-03-29T03:30:00+02:00')
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

  it('reads SITE_TIMEZONE strictly: whole text, minutes below 60, at most 14 hours', () => {
    const cases: [string, SiteZone | undefined][] = [
      [' Europe/Berlin ', { kind: 'iana', name: 'Europe/Berlin' }],
      ['Etc/GMT', { kind: 'iana', name: 'Etc/GMT' }],
      ['+0545', { kind: 'fixed', offsetMinutes: 345 }],
      ['UTC+2', { kind: 'fixed', offsetMinutes: 120 }],
      ['+14:00', { kind: 'fixed', offsetMinutes: 840 }],
      ['+00:00', { kind: 'utc' }],
      ['+05:60', undefined],
      ['+14:01', undefined],
      ['x+05:45', undefined],
      ['+05:45x', undefined],
    ]
    for (const [text, zone] of cases) expect(parseZoneSetting(text), text).to.deep.equal(zone)
  })

  it('takes WordPress\'s options as wp_timezone() does', () => {
    const cases: [string | undefined, string | undefined, SiteZone][] = [
      [' Europe/Berlin ', '', berlin],
      ['utc', '3', { kind: 'utc' }],
      ['Etc/UTC', '3', { kind: 'iana', name: 'Etc/UTC' }],
      ['', '14', { kind: 'fixed', offsetMinutes: 840 }],
      ['', '-14', { kind: 'fixed', offsetMinutes: -840 }],
      ['', '15', { kind: 'utc' }],
      ['', 'abc', { kind: 'utc' }],
      ['', '0', { kind: 'utc' }],
      [undefined, undefined, { kind: 'utc' }],
    ]
    for (const [timezoneString, gmtOffset, zone] of cases) {
      expect(zoneFromOptions(timezoneString, gmtOffset), `${timezoneString} ${gmtOffset}`).to.deep.equal(zone)
    }
  })

  it('tells IANA names from everything else', () => {
    expect(isIanaZone('Europe/Berlin')).to.equal(true)
    expect(isIanaZone('Mars/Olympus')).to.equal(false)
    expect(isIanaZone('+01:00')).to.equal(false)
    expect(isIanaZone('-03:30')).to.equal(false)
    // A sign inside a name is no offset.
    expect(isIanaZone('America/Port-au-Prince')).to.equal(true)
    expect(isIanaZone('Etc/GMT+5')).to.equal(true)
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

  it('reads YYYY-MM-DD strictly, as milliseconds of its midnight in UTC', () => {
    expect(dayToMs('2026-11-25')).to.equal(Date.UTC(2026, 10, 25))
    for (const text of ['nope', 'x2026-11-25', '2026-11-25x', '2026-00-10', '2026-13-01', '2026-01-00', '2026-02-29']) {
      expect(dayToMs(text), text).to.be.NaN
    }
    expect(msToDay(Date.UTC(999, 0, 1))).to.equal('0999-01-01')
    expect(weekdayOf('2026-11-22')).to.equal(0)
    expect(weekdayOf('2026-11-28')).to.equal(6)
  })

  it('reads every date of years 0000 to 0401, 1600 to 2400 and 9598 to 9999 as Date does, and no day that does not exist', () => {
    // What dayToMs answered before it counted days itself: a regular expression and Date.
    const byDate = (text: string) => {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
      if (!m) return NaN
      const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
      if (month < 1 || month > 12) return NaN
      const d = new Date(0)
      d.setUTCFullYear(year, month - 1, day)
      return d.getUTCDate() === day ? d.getTime() : NaN
    }
    let dates = 0
    for (const [first, last] of [[0, 401], [1600, 2400], [9598, 9999]] as const) {
      for (let year = first; year <= last; year++) {
        for (let month = 0; month <= 13; month++) {
          for (let day = 0; day <= 32; day++) {
            const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`
            const expected = byDate(text)
            const got = dayToMs(text)
            if (!(Object.is(got, expected))) expect(got, text).to.equal(expected)
            if (!Number.isNaN(expected)) dates++
          }
        }
      }
    }
    // Every real day of those 1,605 years, each read right.
    expect(dates).to.equal(586_215)
    for (const text of ['2026-1-25', '2026-11-5x', '+2026-11-25', '2026/11/25', '2026/11-25', '2026-11/25', '2026-11-2/', '2026-1!-25', '20#6-11-25', '2026-11-2５', '2026-11-25 ', '２026-11-25', '202a-11-25', '-026-11-25']) {
      expect(dayToMs(text), text).to.be.NaN
    }
  }).timeout(20_000)

  it('reads TIME values, negative and fractional ones too', () => {
    const cases: [string, number][] = [
      ['09:30:15', 34215], ['09:30', 34200], ['24:00:00', 86400], ['-01:00:00', -3600], ['838:59:59', 3020399],
      ['09:30:00.5', 34200], ['09:30:00.25', 34200],
    ]
    for (const [text, seconds] of cases) expect(timeToSeconds(text), text).to.equal(seconds)
    for (const text of ['nope', 'x09:30:00', '09:30:00x', '09:30:00.', '9']) expect(timeToSeconds(text), text).to.be.NaN
  })

  it('reads every TIME text of its grammar as the regular expression it replaced, and nothing else', () => {
    const byExpression = (time: string) => {
      const m = /^(-?)(\d{1,3}):(\d{2})(?::(\d{2}))?(?:\.\d+)?$/.exec(time)
      if (!m) return NaN
      const seconds = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0)
      return m[1] === '-' ? -seconds : seconds
    }
    // Every combination of these pieces: signs, hours of 0 to 4 digits, a colon or not,
    // minutes and seconds of 0 to 3 digits, fractions, and something after.
    const signs = ['', '-', '+', ' ']
    const hours = ['', '0', '9', '09', '24', '99', '838', '999', '1234', 'x', '٣']
    const separators = [':', '', '.', '::']
    const minutes = ['', '0', '00', '30', '59', '75', '99', '305', '3x']
    const seconds = ['', ':', ':0', ':00', ':59', ':99', ':123', '.5', ':00.', ':00.5', ':00.25', ':00.x', '.', ':0a']
    const tails = ['', ' ', 'x', '.1', '\n']
    let read = 0
    for (const sign of signs) for (const h of hours) for (const sep of separators) for (const m of minutes) for (const sec of seconds) for (const tail of tails) {
      const text = sign + h + sep + m + sec + tail
      const expected = byExpression(text)
      const got = timeToSeconds(text)
      if (!Object.is(got, expected)) expect(got, JSON.stringify(text)).to.equal(expected)
      if (!Number.isNaN(expected)) read++
    }
    expect(read, 'texts that are a TIME').to.be.greaterThan(500)
  })

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

describe('zone offsets and instants', () => {
  it('reads offsets of far-off years: Berlin\'s local mean time, also before year 1', () => {
    expect(offsetAt(berlin, Date.UTC(1850, 5, 1))).to.equal(53)
    expect(offsetAt(berlin, Date.UTC(-50, 5, 1))).to.equal(53)
    expect(offsetAt({ kind: 'utc' }, Date.UTC(2026, 6, 1))).to.equal(0)
    expect(offsetAt({ kind: 'fixed', offsetMinutes: -210 }, Date.UTC(2026, 6, 1))).to.equal(-210)
  })

  it('takes a fixed offset or UTC as it is', () => {
    const wall = Date.UTC(2026, 10, 25, 9)
    expect(wallClockToInstant({ kind: 'fixed', offsetMinutes: 345 }, wall)).to.deep.equal({ utcMs: wall - 345 * 60_000, offsetMinutes: 345 })
    expect(wallClockToInstant({ kind: 'utc' }, wall)).to.deep.equal({ utcMs: wall, offsetMinutes: 0 })
    expect(wallClockToInstant(berlin, wall)).to.deep.equal({ utcMs: wall - 60 * 60_000, offsetMinutes: 60 })
  })

  it('keeps one WallClock per zone for the process', () => {
    const clock = wallClockFor({ kind: 'iana', name: 'Europe/Berlin' })
    expect(wallClockFor({ kind: 'iana', name: 'Europe/Berlin' })).to.equal(clock)
    expect(wallClockFor(newYork)).not.to.equal(clock)
    expect(clock.iso('2026-11-25', '09:00:00')).to.equal('2026-11-25T09:00:00+01:00')
    expect(wallClockFor(newYork).iso('2026-11-25', '09:00:00')).to.equal('2026-11-25T09:00:00-05:00')
  })
})

describe('remember: a bounded cache', () => {
  it('computes a key once, and starts over when the limit is reached', () => {
    const cache = new Map<string, string>()
    const computed: string[] = []
    const upper = (key: string) => {
      computed.push(key)
      return key.toUpperCase()
    }
    expect(remember(cache, 2, 'a', upper)).to.equal('A')
    expect(remember(cache, 2, 'a', upper)).to.equal('A')
    expect(computed).to.deep.equal(['a'])
    remember(cache, 2, 'b', upper)
    expect([...cache.keys()]).to.deep.equal(['a', 'b'])
    remember(cache, 2, 'c', upper)
    expect([...cache.keys()]).to.deep.equal(['c'])
    expect(computed).to.deep.equal(['a', 'b', 'c'])
  })
})

describe('WallClock\'s per-booking way (day, timeSeconds, isoOfDay) gives what its general way gives', () => {
  const dates = ['2026-11-25', '2026-03-29', '2026-10-25', '2026-02-29', '2028-02-29', '0000-00-00', '2026-13-01', '2026-1-05', 'x026-11-25', '1000-01-01', '2026-11-25x', '2026-11-2']
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

describe('WallClock.instantOf: wallClockToInstant\'s instant, by the day\'s remembered offset', () => {
  // Every quarter of an hour over the days around each zone's changes of offset (gaps, repeated hours, a 30-minute change).
  const lordHowe: SiteZone = { kind: 'iana', name: 'Australia/Lord_Howe' }
  const days = ['2026-03-07', '2026-03-08', '2026-03-09', '2026-03-28', '2026-03-29', '2026-03-30', '2026-04-04', '2026-04-05', '2026-04-06',
    '2026-09-26', '2026-09-27', '2026-10-03', '2026-10-04', '2026-10-24', '2026-10-25', '2026-10-26', '2026-11-01', '2026-11-02', '2026-06-15']
  for (const zone of [berlin, newYork, auckland, sydney, lordHowe, { kind: 'fixed', offsetMinutes: -210 } as SiteZone, { kind: 'utc' } as SiteZone]) {
    it(`${zoneLabel(zone)}: every quarter hour of days with and without a change`, () => {
      const clock = new WallClock(zone)
      for (const day of days) {
        for (let minute = 0; minute < 24 * 60; minute += 15) {
          const wallMs = dayToMs(day) + minute * 60_000
          expect(clock.instantOf(wallMs), `${day} +${minute} min`).to.equal(wallClockToInstant(zone, wallMs).utcMs)
        }
      }
    })
  }
})
