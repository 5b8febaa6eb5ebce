import { expect } from 'chai'
import { WallClock, wallClockFor } from '../../server/domain/wall-clock.ts'
import { dayInstants, formatInstant, offsetAt, offsetChanges, wallClockToInstant, zoneFromOptions, type SiteZone } from '../../server/domain/zone-offsets.ts'

describe('the site\'s zone: edges of WordPress\'s options and the per-zone clock', () => {
  it('a timezone_string that only begins with UTC (UTC+2, no zone) falls back to gmt_offset', () => {
    expect(zoneFromOptions('UTC+2', '3')).to.deep.equal({ kind: 'fixed', offsetMinutes: 180 })
    expect(zoneFromOptions('utcX', '')).to.deep.equal({ kind: 'utc' })
  })
  it('a zone the process has not seen before gets a clock, and the same one on the next request', () => {
    // An offset no other test uses, so the process-wide clocks cannot answer from an earlier run.
    const minutes = 1 + Math.floor(Math.random() * 839)
    const zone: SiteZone = { kind: 'fixed', offsetMinutes: minutes }
    const clock = wallClockFor(zone)
    expect(clock).to.be.instanceOf(WallClock)
    expect(clock.zone).to.deep.equal(zone)
    expect(wallClockFor({ kind: 'fixed', offsetMinutes: minutes })).to.equal(clock)
  })
})

describe('days near a change of offset: each change found once (dayInstants) answers as wallClockToInstant does', () => {
  // Zones with unusual changes: 30 minutes (Lord Howe), +2 hours (Troll), a negative
  // "summer" offset (Dublin), several a year (Casablanca), a whole day skipped
  // (Apia, 2011-12-30), changes at midnight (Santiago, Havana), and the usual ones.
  const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Antarctica/Troll', 'Europe/Dublin',
    'Africa/Casablanca', 'Pacific/Apia', 'America/Santiago', 'America/Havana', 'Asia/Tehran', 'Pacific/Chatham']
  const DAY = 86_400_000
  const dayMs = (date: string) => Date.parse(`${date}T00:00:00Z`)

  /** The days of [from, to] whose offsets at their start and end differ, as WallClock finds them (14 h before, 36 h after). */
  function changeDays(zone: SiteZone, from: string, to: string): number[] {
    const days: number[] = []
    for (let day = dayMs(from); day <= dayMs(to); day += DAY) {
      if (offsetAt(zone, day - 14 * 3_600_000) !== offsetAt(zone, day + 36 * 3_600_000)) days.push(day)
    }
    return days
  }

  for (const name of zones) {
    // Apia from 2011, for the day it skipped.
    const since = name === 'Pacific/Apia' ? '2011' : '2018'
    it(`${name}: every 7 minutes and 13 seconds of each such day from ${since} to 2027, each second of 2 minutes around its changes, each 61 s of the hours`, () => {
      const zone: SiteZone = { kind: 'iana', name }
      const days = changeDays(zone, `${since}-01-01`, '2027-12-31')
      expect(days.length, 'days near a change').to.be.greaterThan(0)
      let compared = 0
      for (const day of days) {
        const instants = dayInstants(zone, day)
        const times = new Set<number>()
        for (let ms = 0; ms < DAY; ms += 433_000) times.add(day + ms)
        // Around each change's wall-clock time, on this day: each second of two minutes, each 61 s of two hours.
        for (const change of offsetChanges(zone, day - DAY, day + 2 * DAY).at) {
          for (const offset of [offsetAt(zone, change.utcMs - 1000), change.offsetMinutes]) {
            const wall = change.utcMs + offset * 60_000
            for (let s = -3600; s <= 3600; s += Math.abs(s) <= 60 ? 1 : 61) if (wall + s * 1000 >= day && wall + s * 1000 < day + DAY) times.add(wall + s * 1000)
          }
        }
        for (const wallMs of times) {
          expect(instants(wallMs), `${name} ${new Date(wallMs).toISOString()}`).to.deep.equal(wallClockToInstant(zone, wallMs))
          compared++
        }
      }
      expect(compared).to.be.greaterThan(days.length * 199)
    }).timeout(60_000)
  }

  it('finds each change once, to the second: Apia\'s skipped day, Lord Howe\'s 30 minutes, Berlin\'s hour', () => {
    // Each change lands on a whole second, with the offset just before it different.
    for (const [name, from] of [['Pacific/Apia', '2011-12-29'], ['Australia/Lord_Howe', '2026-04-04'], ['Europe/Berlin', '2026-03-28']] as const) {
      const zone: SiteZone = { kind: 'iana', name }
      const { first, at } = offsetChanges(zone, dayMs(from), dayMs(from) + 2 * DAY)
      expect(at, name).to.have.length(1)
      const change = at[0]!
      expect(change.utcMs % 1000).to.equal(0)
      expect(offsetAt(zone, change.utcMs - 1000), name).to.equal(first)
      expect(offsetAt(zone, change.utcMs), name).to.equal(change.offsetMinutes).and.not.equal(first)
    }
  })

  it('finds a change wherever it falls in the hour scanned, and none just outside the range', () => {
    for (const name of ['Europe/Berlin', 'Australia/Lord_Howe', 'America/Santiago']) {
      const zone: SiteZone = { kind: 'iana', name }
      const change = offsetChanges(zone, dayMs('2026-01-01'), dayMs('2027-01-01')).at[0]!
      const before = offsetAt(zone, change.utcMs - 1000)
      for (const early of [1_000, 600_000, 1_033_000, 1_800_000, 2_999_000, 3_599_000, 3_600_000, 5_000_000]) {
        const found = offsetChanges(zone, change.utcMs - early, change.utcMs - early + 2 * 3_600_000)
        expect(found, `${name}, from ${early / 1000} s before`).to.deep.equal({ first: before, at: [change] })
      }
      // A range that ends just before the change, or begins at it.
      expect(offsetChanges(zone, change.utcMs - 5_000_000, change.utcMs - 600_000)).to.deep.equal({ first: before, at: [] })
      expect(offsetChanges(zone, change.utcMs - 5_000_000, change.utcMs - 1_000)).to.deep.equal({ first: before, at: [] })
      expect(offsetChanges(zone, change.utcMs, change.utcMs + 5_000_000)).to.deep.equal({ first: change.offsetMinutes, at: [] })
    }
  })

  it('a change day looks its zone up once: no look-up for any time of the day after that', () => {
    for (const [name, date] of [['Europe/Berlin', '2026-03-29'], ['Europe/Berlin', '2026-10-25'], ['Australia/Lord_Howe', '2026-04-05']] as const) {
      const zone: SiteZone = { kind: 'iana', name }
      let lookUps = 0
      const instants = dayInstants(zone, dayMs(date), (utcMs) => {
        lookUps++
        return offsetAt(zone, utcMs)
      })
      // Hour by hour over five days, then halving one hour to the second.
      expect(lookUps, `${name} ${date}: look-ups to find the changes`).to.be.within(5 * 24, 5 * 24 + 1 + 13)
      lookUps = 0
      for (let ms = 0; ms < DAY; ms += 61_000) {
        expect(instants(dayMs(date) + ms)).to.deep.equal(wallClockToInstant(zone, dayMs(date) + ms))
      }
      expect(lookUps, `${name} ${date}: look-ups for its times`).to.equal(0)
    }
  })

  it('a time far from the day is answered right too: the instants outside its five days are looked up', () => {
    const zone: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }
    const instants = dayInstants(zone, dayMs('2026-03-29'))
    // Summer time before the five days, winter time after them: offsets other than the edges' own.
    for (const text of ['2026-10-26T12:00:00', '2026-10-25T02:30:00', '2025-07-01T12:00:00', '2025-10-27T12:00:00', '2025-12-24T18:00:00', '2026-03-31T23:59:59']) {
      const wallMs = Date.parse(`${text}Z`)
      expect(instants(wallMs), text).to.deep.equal(wallClockToInstant(zone, wallMs))
    }
  })

  it('the look-ups kept cover [two days before, three days after) the day: an instant at the start is kept, one at the end looked up', () => {
    // London is at +00:00 through 2026-03-28 and +01:00 from 2026-03-30: a wall-clock
    // time a day after midnight reads the instant a day later, one a day before, the day before.
    const zone: SiteZone = { kind: 'iana', name: 'Europe/London' }
    const day = dayMs('2026-03-29')
    let lookUps = 0
    const instants = dayInstants(zone, day, (utcMs) => {
      lookUps++
      return offsetAt(zone, utcMs)
    })
    for (const [wallMs, looked, why] of [
      [day - DAY, 0, 'reads the first instant kept, two days before'],
      [day - DAY - 1000, 1, 'reads the second before it'],
      [day + 2 * DAY - 1000, 0, 'reads the last second kept'],
      [day + 2 * DAY, 1, 'reads the first instant after the five days'],
    ] as const) {
      lookUps = 0
      expect(instants(wallMs), why).to.deep.equal(wallClockToInstant(zone, wallMs))
      expect(lookUps, why).to.equal(looked)
    }
  })

  it('offsetAt of UTC and of a fixed offset asks Intl nothing (which would read the process\'s own zone)', () => {
    const formatToParts = Intl.DateTimeFormat.prototype.formatToParts
    let asked = 0
    Intl.DateTimeFormat.prototype.formatToParts = function (this: Intl.DateTimeFormat, date?: Date | number) {
      asked++
      return formatToParts.call(this, date)
    }
    try {
      expect(offsetAt({ kind: 'utc' }, dayMs('2026-07-01'))).to.equal(0)
      expect(offsetAt({ kind: 'fixed', offsetMinutes: -210 }, dayMs('2026-07-01'))).to.equal(-210)
      expect(asked).to.equal(0)
      // The counting itself: an IANA zone asks.
      expect(offsetAt({ kind: 'iana', name: 'Europe/Berlin' }, dayMs('2026-07-01'))).to.equal(120)
      expect(asked).to.equal(1)
    } finally {
      Intl.DateTimeFormat.prototype.formatToParts = formatToParts
    }
  })

  it('a WallClock prints the times of a change day as wallClockToInstant does, created_at seconds and all', () => {
    const zone: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }
    const clock = new WallClock(zone)
    for (const text of ['2026-03-29 01:59:59', '2026-03-29 02:00:00', '2026-03-29 02:30:17', '2026-03-29 03:00:00', '2026-03-28 23:59:59',
      '2026-10-25 02:00:00', '2026-10-25 02:59:59', '2026-10-25 03:00:00', '2026-10-24 12:00:01', '2026-10-26 00:00:00']) {
      const wallMs = Date.parse(`${text.replace(' ', 'T')}Z`)
      const { utcMs, offsetMinutes } = wallClockToInstant(zone, wallMs)
      expect(clock.isoDateTime(text), text).to.equal(formatInstant(utcMs, offsetMinutes))
      expect(clock.instantOf(wallMs), text).to.equal(utcMs)
    }
  })
})
