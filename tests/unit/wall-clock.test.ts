// server/domain/wall-clock.ts: the digit-reading fast readers of DATE, TIME and
// DATETIME values (readTimeSeconds, readDateTimeNumber) and the per-booking
// methods built on them (day, timeSeconds, isoOfDay, isoDateTime), each against
// the general way (dayToMs, timeToSeconds, wallClockToInstant), on steady days
// and days whose offset changes, with the plugin's legacy values; and the zone
// look-ups a WallClock saves (its `lookUp`, counted).
import { expect } from 'chai'
import { DAY_MS, dayToMs, timeToSeconds } from '../../server/domain/day-arithmetic.ts'
import { DATE_TIME_SCALE, readDateTimeNumber, readTimeSeconds, WallClock, type ClockDay } from '../../server/domain/wall-clock.ts'
import { formatInstant, offsetAt, wallClockToInstant, type SiteZone } from '../../server/domain/zone-offsets.ts'

const BERLIN: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }

/** The general way: dayToMs and timeToSeconds, then wallClockToInstant; undefined when either is no value. */
function generalIso(zone: SiteZone, date: string, time: string): string | undefined {
  const dayMs = dayToMs(date)
  const seconds = timeToSeconds(time)
  if (Number.isNaN(dayMs) || Number.isNaN(seconds)) return undefined
  const { utcMs, offsetMinutes } = wallClockToInstant(zone, dayMs + seconds * 1000)
  return formatInstant(utcMs, offsetMinutes)
}

/** isoDateTime's reading of a DATETIME the general way: date and time at the first space, or a date alone at 00:00. */
function generalIsoDateTime(zone: SiteZone, value: string): string | undefined {
  const space = value.indexOf(' ')
  return space === -1 ? generalIso(zone, value, '00:00:00') : generalIso(zone, value.slice(0, space), value.slice(space + 1))
}

/** A WallClock whose zone look-ups are counted. */
function countedClock(zone: SiteZone): { clock: WallClock; lookUps: () => number } {
  let count = 0
  const clock = new WallClock(zone, (utcMs) => {
    count++
    return offsetAt(zone, utcMs)
  })
  return { clock, lookUps: () => {
    const counted = count
    count = 0
    return counted
  } }
}

// TIME values: the usual `HH:MM:SS` (read fast) and every other form the
// plugin's TIME columns hold or a hand-edited row may (read the general way).
const TIMES: [time: string, fast: number][] = [
  ['09:30:00', 34_200],
  ['12:34:56', 45_296],
  ['00:00:00', 0],
  ['00:00:01', 1],
  ['23:59:59', 86_399],
  ['24:00:00', 86_400],
  ['99:99:99', 362_439],
  ['9:30:00', -1], // a single-digit hour
  ['09:30', -1], // no seconds
  ['09:30:00.5', -1], // a fraction
  ['-9:30:00', -1], // negative, eight characters
  ['-01:00:00', -1],
  ['838:59:59', -1],
  ['09:30:001', -1], // one digit too many
  ['09:30:0', -1], // one too few
  ['', -1],
  ['09-30-00', -1],
  ['09:30-00', -1],
  ['09-30:00', -1],
  ['x9:30:00', -1],
  ['0x:30:00', -1],
  ['09:x0:00', -1],
  ['09:3x:00', -1],
  ['09:30:x0', -1],
  ['09:30:0x', -1],
  ['09:30:0:', -1], // ':' comes right after '9'
  ['09:30:0/', -1], // '/' right before '0'
  ['09:30:0.', -1], // '.' further below
  [':9:30:00', -1],
  ['  :  :  ', -1],
]

// DATETIME values (created_at, modified): the usual `YYYY-MM-DD HH:MM:SS`,
// legacy ones (the zero date, no time), and forms a hand-edited row may hold.
const DATE_TIMES: [value: string, fast: number][] = [
  ['2026-03-10 09:30:00', 20_260_310 * DATE_TIME_SCALE + 34_200],
  ['2026-03-10 12:34:56', 20_260_310 * DATE_TIME_SCALE + 45_296],
  ['2026-03-10 00:00:00', 20_260_310 * DATE_TIME_SCALE],
  ['2026-03-10 23:59:59', 20_260_310 * DATE_TIME_SCALE + 86_399],
  ['2026-03-10 24:00:00', 20_260_310 * DATE_TIME_SCALE + 86_400],
  ['2026-12-31 23:59:59', 20_261_231 * DATE_TIME_SCALE + 86_399],
  ['0000-00-00 00:00:00', 0], // the zero date: read, then no date
  ['2026-02-30 09:30:00', 20_260_230 * DATE_TIME_SCALE + 34_200], // unchecked as a date
  ['2024-02-29 09:30:00', 20_240_229 * DATE_TIME_SCALE + 34_200],
  ['0001-01-01 00:00:00', 10_101 * DATE_TIME_SCALE],
  ['9999-12-31 23:59:59', 99_991_231 * DATE_TIME_SCALE + 86_399],
  ['2026-03-10T09:30:00', -1], // ISO's T for the space
  ['2026-03-10', -1], // a date alone
  ['2026-03-10 ', -1],
  ['2026-03-10 9:30:00', -1], // a single-digit hour
  ['2026-03-10 9:30.500', -1], // nineteen characters, the time in another form
  ['2026-03-10 -9:30:00', -1],
  ['2026-03-10 09:30:00.5', -1],
  ['2026-03-10 09:30:001', -1],
  ['2026-03-10 09:30:0', -1],
  ['2026-03-10  9:30:00', -1],
  ['2026/03/10 09:30:00', -1],
  ['2026-03/10 09:30:00', -1],
  ['2026/03-10 09:30:00', -1],
  ['x026-03-10 09:30:00', -1],
  ['2x26-03-10 09:30:00', -1],
  ['20x6-03-10 09:30:00', -1],
  ['202x-03-10 09:30:00', -1],
  ['2026-x3-10 09:30:00', -1],
  ['2026-0x-10 09:30:00', -1],
  ['2026-03-x0 09:30:00', -1],
  ['2026-03-1x 09:30:00', -1],
  ['2026-03-1: 09:30:00', -1],
  ['2026-03-1/ 09:30:00', -1],
  ['2026-03-1. 09:30:00', -1],
  ['2026-03-10 09-30-00', -1],
  ['2026-03-10 09:30-00', -1],
  ['2026-03-10 x9:30:00', -1],
  ['2026-03-10 0x:30:00', -1],
  ['2026-03-10 09:x0:00', -1],
  ['2026-03-10 09:3x:00', -1],
  ['2026-03-10 09:30:x0', -1],
  ['2026-03-10 09:30:0x', -1],
  ['2026-03-10 09:30:0:', -1],
  ['', -1],
]

// Steady and changing offsets: fixed ones either side of UTC, Berlin's hour,
// New York's, Lord Howe's 30 minutes, Santiago's changes at midnight, and Apia's skipped day.
const ZONES: SiteZone[] = [
  { kind: 'utc' }, { kind: 'fixed', offsetMinutes: 345 }, { kind: 'fixed', offsetMinutes: -210 }, BERLIN,
  { kind: 'iana', name: 'America/New_York' }, { kind: 'iana', name: 'Australia/Lord_Howe' },
  { kind: 'iana', name: 'America/Santiago' }, { kind: 'iana', name: 'Pacific/Apia' },
]

// Dates around those zones' changes, each with a steady day near it, and legacy values.
const DATES = ['2026-03-10', '2026-03-28', '2026-03-29', '2026-03-30', '2026-10-25', '2026-03-08', '2026-11-01',
  '2026-04-05', '2026-10-04', '2026-04-04', '2026-09-06', '2026-09-05', '2011-12-29', '2011-12-30', '2011-12-31',
  '2024-02-29', '2026-12-31', '0001-01-01', '9999-12-30', '0000-00-00', '2026-02-30', '2026-13-01', '2026-00-10',
  '2026-3-10', '2026/03/10', '2026-03-10 ', '20260310', '']

// Times of day on the clocks of those changes, with the TIME forms above.
const DAY_TIMES = ['00:00:00', '00:30:00', '01:59:59', '02:00:00', '02:30:17', '03:00:00', '12:00:00', '23:59:59', '24:00:00',
  '9:30:00', '-01:00:00', '838:59:59', '09:30:00.5', '09:30', '09:30:001', '']

describe('readTimeSeconds: the fast reading of a TIME, -1 where timeSeconds reads it the general way', () => {
  for (const [time, fast] of TIMES) {
    it(`'${time}' is ${fast === -1 ? 'not of the usual form' : `${fast} s`}`, () => {
      expect(readTimeSeconds(time)).to.equal(fast)
      // Where it reads a time, it reads what timeToSeconds does.
      if (fast !== -1) expect(fast).to.equal(timeToSeconds(time))
    })
  }

  it('timeSeconds answers as timeToSeconds does, whichever way it reads', () => {
    const { clock } = countedClock(BERLIN)
    for (const [time] of TIMES) expect(clock.timeSeconds(time), time).to.deep.equal(timeToSeconds(time))
    // The forms the plugin holds besides HH:MM:SS, read the general way.
    expect(clock.timeSeconds('9:30:00')).to.equal(34_200)
    expect(clock.timeSeconds('-01:00:00')).to.equal(-3600)
    expect(clock.timeSeconds('09:30:001')).to.be.NaN
    expect(clock.timeSeconds('09:30:0:')).to.be.NaN
  })
})

describe('readDateTimeNumber: the fast reading of a DATETIME, -1 where isoDateTime reads it the general way', () => {
  for (const [value, fast] of DATE_TIMES) {
    it(`'${value}' is ${fast === -1 ? 'not of the usual form' : fast}`, () => {
      expect(readDateTimeNumber(value)).to.equal(fast)
      if (fast !== -1) {
        // Its date's digits and timeToSeconds of its time.
        expect(Math.floor(fast / DATE_TIME_SCALE)).to.equal(Number(value.slice(0, 10).replaceAll('-', '')))
        expect(fast % DATE_TIME_SCALE).to.equal(timeToSeconds(value.slice(11)))
      }
    })
  }
})

describe('WallClock: the fast ways answer as the general way does, in every zone', () => {
  for (const zone of ZONES) {
    const name = zone.kind === 'iana' ? zone.name : JSON.stringify(zone)

    it(`${name}: day is the date dayToMs reads, with its prefix, and its offset when that holds all day`, () => {
      const clock = new WallClock(zone)
      for (const date of DATES) {
        const dayMs = dayToMs(date)
        const day = clock.day(date)
        if (Number.isNaN(dayMs)) {
          expect(day, date).to.equal(null)
          continue
        }
        const start = wallClockToInstant(zone, dayMs).offsetMinutes
        const steady = [0, 3_600_000, 12 * 3_600_000, DAY_MS - 1000].every((ms) => wallClockToInstant(zone, dayMs + ms).offsetMinutes === start)
        expect(day, date).to.deep.include({ ms: dayMs, prefix: `${date}T` })
        if (!steady) expect(day!.offset, `${date}: a change of offset`).to.equal(null)
        if (day!.offset !== null) expect(`${date}T00:00:00${day!.offset}`, date).to.equal(generalIso(zone, date, '00:00:00'))
      }
    })

    it(`${name}: isoOfDay of a day and timeSeconds is iso of its DATE and TIME, and the general way's answer`, () => {
      const clock = new WallClock(zone)
      for (const date of DATES) {
        const day = clock.day(date)
        for (const time of DAY_TIMES) {
          const general = generalIso(zone, date, time)
          expect(clock.iso(date, time), `${date} ${time}`).to.equal(general)
          const seconds = clock.timeSeconds(time)
          if (day !== null && !Number.isNaN(seconds)) expect(clock.isoOfDay(day, seconds), `${date} ${time}`).to.equal(general)
        }
      }
    })

    it(`${name}: isoDateTime reads each DATETIME as the general way does`, () => {
      const clock = new WallClock(zone)
      const values = [...DATE_TIMES.map(([value]) => value), ...DATES,
        ...DATES.flatMap((date) => DAY_TIMES.map((time) => `${date} ${time}`)), '2026-03-29T02:30:00', ' 2026-03-10', '2026-03-10 09:30:00 ']
      for (const value of values) {
        expect(clock.isoDateTime(value), value).to.equal(generalIsoDateTime(zone, value))
        // A second time, from what the clock has kept.
        expect(clock.isoDateTime(value), `${value} again`).to.equal(generalIsoDateTime(zone, value))
      }
    })
  }

  it('legacy values and other forms: the zero date and ISO\'s T are no value, a date alone is its midnight', () => {
    const clock = new WallClock(BERLIN)
    expect(clock.isoDateTime('0000-00-00 00:00:00')).to.equal(undefined)
    expect(clock.isoDateTime('0000-00-00')).to.equal(undefined)
    expect(clock.isoDateTime('2026-02-30 09:30:00')).to.equal(undefined)
    expect(clock.isoDateTime('2026-03-10T09:30:00')).to.equal(undefined)
    expect(clock.isoDateTime('2026/03/10 09:30:00')).to.equal(undefined)
    expect(clock.isoDateTime('2026-03-10 09:30:001')).to.equal(undefined)
    expect(clock.isoDateTime('2026-03-10 09:30:0x')).to.equal(undefined)
    expect(clock.isoDateTime('2026-0x-10 09:30:00')).to.equal(undefined)
    expect(clock.isoDateTime('2026-03-1: 09:30:00')).to.equal(undefined)
    expect(clock.isoDateTime(' 2026-03-10')).to.equal(undefined)
    expect(clock.isoDateTime('2026-03-10')).to.equal('2026-03-10T00:00:00+01:00')
    expect(clock.isoDateTime('2026-03-10 09:30:00')).to.equal('2026-03-10T09:30:00+01:00')
    expect(clock.isoDateTime('2026-03-10 9:30.500')).to.equal('2026-03-10T09:30:00+01:00')
    expect(clock.isoDateTime('2026-03-10 9:30:00')).to.equal('2026-03-10T09:30:00+01:00')
    expect(clock.isoDateTime('2026-03-10 09:30:00.5')).to.equal('2026-03-10T09:30:00+01:00')
    expect(clock.isoDateTime('2026-03-10 -9:30:00')).to.equal('2026-03-09T14:30:00+01:00')
    expect(clock.isoDateTime('2026-03-10 24:00:00')).to.equal('2026-03-11T00:00:00+01:00')
    expect(clock.isoDateTime('2026-03-28 24:00:00')).to.equal('2026-03-29T00:00:00+01:00')
    expect(clock.isoDateTime('2026-03-29 02:30:00')).to.equal('2026-03-29T03:30:00+02:00')
    expect(clock.day('2026/03/10')).to.equal(null)
    expect(clock.day('2026-03/10')).to.equal(null)
    expect(clock.day('2026-03-1:')).to.equal(null)
    expect(clock.day('0000-00-00')).to.equal(null)
  })
})

describe('WallClock: what it keeps, and the zone look-ups that saves', () => {
  const dayMs = (date: string) => dayToMs(date)

  it('a day is its date, its prefix, and its offset when that holds all day (null on a change day)', () => {
    const clock = new WallClock(BERLIN)
    expect(clock.day('2026-03-10')).to.deep.equal({ ms: dayMs('2026-03-10'), prefix: '2026-03-10T', offset: '+01:00' })
    expect(clock.day('2026-03-29')).to.deep.equal({ ms: dayMs('2026-03-29'), prefix: '2026-03-29T', offset: null })
    expect(clock.day('2026-07-01')).to.deep.equal({ ms: dayMs('2026-07-01'), prefix: '2026-07-01T', offset: '+02:00' })
    expect(new WallClock({ kind: 'utc' }).day('2026-03-29')).to.deep.include({ offset: '+00:00' })
    expect(new WallClock({ kind: 'fixed', offsetMinutes: -210 }).day('2026-03-29')).to.deep.include({ offset: '-03:30' })
  })

  it('a day is built once: the same ClockDay for its date, however often and between other dates', () => {
    const clock = new WallClock(BERLIN)
    const day = clock.day('2026-03-10')
    expect(clock.day('2026-03-10')).to.equal(day)
    clock.day('2026-03-11')
    clock.day('2026-03-29')
    expect(clock.day('2026-03-10')).to.equal(day)
    expect(clock.dayOfNumber(20_260_310)).to.equal(day)
  })

  it('its days are bounded: at 20,000 dates it starts over', () => {
    const { clock, lookUps } = countedClock({ kind: 'fixed', offsetMinutes: 60 })
    const day = clock.day('2026-03-10')
    // 19,999 numbers that are no date (day 00): 20,000 kept.
    for (let k = 1; k < 20_000; k++) expect(clock.dayOfNumber(k * 100)).to.equal(null)
    expect(clock.day('2026-03-10'), 'still kept at 20,000').to.equal(day)
    lookUps()
    clock.dayOfNumber(20_000 * 100)
    const again = clock.day('2026-03-10')
    expect(again, 'built anew').to.not.equal(day)
    expect(again).to.deep.equal(day)
    expect(lookUps(), 'its offset is kept apart').to.equal(0)
  })

  it('a steady day costs two look-ups, once; its times none (isoAt, instantOf)', () => {
    const { clock, lookUps } = countedClock(BERLIN)
    expect(clock.isoAt(dayMs('2026-03-10'), 3600)).to.equal('2026-03-10T01:00:00+01:00')
    expect(lookUps(), 'the day\'s offset, at its two ends').to.equal(2)
    expect(clock.isoAt(dayMs('2026-03-10'), 7261)).to.equal('2026-03-10T02:01:01+01:00')
    expect(clock.isoAt(dayMs('2026-03-09'), 86_400 + 60)).to.equal('2026-03-10T00:01:00+01:00')
    expect(lookUps()).to.equal(0)
    const wallMs = dayMs('2026-07-01') + 9 * 3_600_000
    expect(clock.instantOf(wallMs)).to.equal(wallMs - 2 * 3_600_000)
    expect(lookUps()).to.equal(2)
    expect(clock.instantOf(wallMs + 60_000)).to.equal(wallMs + 60_000 - 2 * 3_600_000)
    expect(clock.isoAt(dayMs('2026-07-01'), 0)).to.equal('2026-07-01T00:00:00+02:00')
    expect(lookUps()).to.equal(0)
  })

  it('a change day finds its changes once; its other times need no look-up (instantOf, isoAt)', () => {
    const { clock, lookUps } = countedClock(BERLIN)
    const day = dayMs('2026-03-29')
    expect(clock.instantOf(day + 3_600_000)).to.equal(wallClockToInstant(BERLIN, day + 3_600_000).utcMs)
    expect(lookUps(), 'hour by hour over five days, then halving').to.be.within(5 * 24, 5 * 24 + 2 + 14)
    for (const seconds of [0, 7199, 7200, 9000, 10_800, 43_200, 86_399]) {
      const wallMs = day + seconds * 1000
      const { utcMs, offsetMinutes } = wallClockToInstant(BERLIN, wallMs)
      expect(clock.instantOf(wallMs), `${seconds} s`).to.equal(utcMs)
      expect(clock.isoAt(day, seconds), `${seconds} s`).to.equal(formatInstant(utcMs, offsetMinutes))
    }
    expect(lookUps()).to.equal(0)
  })

  it('isoOfDay of a steady day needs no look-up, even on a clock that has not seen that day', () => {
    const day: ClockDay = new WallClock(BERLIN).day('2026-03-10')!
    const { clock, lookUps } = countedClock(BERLIN)
    for (const [seconds, iso] of [[0, '2026-03-10T00:00:00+01:00'], [1, '2026-03-10T00:00:01+01:00'], [34_200, '2026-03-10T09:30:00+01:00'],
      [86_399, '2026-03-10T23:59:59+01:00']] as const) {
      expect(clock.isoOfDay(day, seconds)).to.equal(iso)
    }
    expect(lookUps()).to.equal(0)
    // Outside its day, it is the next (or the previous) day's time: isoAt, looked up.
    expect(clock.isoOfDay(day, 86_400)).to.equal('2026-03-11T00:00:00+01:00')
    expect(lookUps()).to.equal(2)
    expect(clock.isoOfDay(day, -1)).to.equal('2026-03-09T23:59:59+01:00')
    expect(lookUps()).to.equal(2)
  })

  it('isoDateTime of a steady day\'s DATETIME looks the day up once', () => {
    const { clock, lookUps } = countedClock(BERLIN)
    expect(clock.isoDateTime('2026-03-10 09:30:00')).to.equal('2026-03-10T09:30:00+01:00')
    expect(lookUps()).to.equal(2)
    expect(clock.isoDateTime('2026-03-10 18:45:12')).to.equal('2026-03-10T18:45:12+01:00')
    expect(clock.isoDateTime('2026-03-10')).to.equal('2026-03-10T00:00:00+01:00')
    expect(clock.iso('2026-03-10', '9:30:00')).to.equal('2026-03-10T09:30:00+01:00')
    expect(lookUps()).to.equal(0)
  })
})
