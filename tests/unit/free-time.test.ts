// server/domain/free-time.ts: the subtraction and the grid of availability/
// (API.md, "GET availability/"), on the wall clock, with both clock changes of
// Europe/Berlin, a fixed-offset site, windows past midnight, 24:00 ends, and
// touching and overlapping bookings.
import { expect } from 'chai'
import { bookableStarts, bookingInterval, mergeBusy, mostBookableStarts, subtractBusy, wallMinutes, type Interval } from '../../server/domain/free-time.ts'
import { DAY_MS, dayToMs } from '../../server/domain/day-arithmetic.ts'
import { wallClockFor } from '../../server/domain/wall-clock.ts'
import { offsetAt, parseZoneSetting } from '../../server/domain/zone-offsets.ts'

const at = (date: string, time = '00:00') => dayToMs(date) + (Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5))) * 60_000
const hhmm = (wallMs: number) => new Date(wallMs).toISOString().slice(0, 16).replace('T', ' ')
const show = (intervals: readonly Interval[]) => intervals.map(([from, to]) => `${hhmm(from)}–${hhmm(to)}`)
const day = (date: string): Interval => [at(date), at(date) + DAY_MS]

/** Whether a wall-clock time occurs in a zone: its instant read back gives it again. */
const existsIn = (zoneName: string) => {
  const zone = parseZoneSetting(zoneName)!
  const clock = wallClockFor(zone)
  return (wallMs: number) => {
    const utc = clock.instantOf(wallMs)
    return utc + offsetAt(zone, utc) * 60_000 === wallMs
  }
}

describe('mergeBusy: the union of the time taken', () => {
  it('merges overlapping and touching intervals, drops empty ones, sorts', () => {
    expect(show(mergeBusy([
      [at('2026-03-02', '10:00'), at('2026-03-02', '11:00')],
      [at('2026-03-02', '09:00'), at('2026-03-02', '10:00')], // touching: one stretch
      [at('2026-03-02', '10:30'), at('2026-03-02', '12:00')], // overlapping
      [at('2026-03-02', '14:00'), at('2026-03-02', '14:00')], // zero length: nothing
      [at('2026-03-02', '15:00'), at('2026-03-02', '15:30')],
    ]))).to.deep.equal(['2026-03-02 09:00–2026-03-02 12:00', '2026-03-02 15:00–2026-03-02 15:30'])
  })

  it('keeps a stretch that an earlier, longer one swallows whole', () => {
    expect(show(mergeBusy([[at('2026-03-02', '08:00'), at('2026-03-02', '18:00')], [at('2026-03-02', '09:00'), at('2026-03-02', '10:00')]])))
      .to.deep.equal(['2026-03-02 08:00–2026-03-02 18:00'])
  })
})

describe('subtractBusy: the free windows', () => {
  it('a day with no booking and no rule is one window', () => {
    expect(show(subtractBusy(day('2026-03-02'), []))).to.deep.equal(['2026-03-02 00:00–2026-03-03 00:00'])
  })

  it('back-to-back bookings leave no window between them; a gap of a minute is one', () => {
    const busy: Interval[] = [
      [at('2026-03-02', '09:00'), at('2026-03-02', '10:00')], [at('2026-03-02', '10:00'), at('2026-03-02', '11:00')],
      [at('2026-03-02', '11:01'), at('2026-03-02', '12:00')],
    ]
    expect(show(subtractBusy(day('2026-03-02'), busy))).to.deep.equal([
      '2026-03-02 00:00–2026-03-02 09:00', '2026-03-02 11:00–2026-03-02 11:01', '2026-03-02 12:00–2026-03-03 00:00',
    ])
  })

  it('a window that crosses midnight is one window', () => {
    const range: Interval = [at('2026-03-02'), at('2026-03-04')]
    const busy: Interval[] = [[at('2026-03-02'), at('2026-03-02', '18:00')], [at('2026-03-03', '08:00'), at('2026-03-04')]]
    expect(show(subtractBusy(range, busy))).to.deep.equal(['2026-03-02 18:00–2026-03-03 08:00'])
  })

  it('what lies outside the range is not listed, and cuts nothing', () => {
    const busy: Interval[] = [[at('2026-03-01', '22:00'), at('2026-03-02', '02:00')], [at('2026-03-02', '23:00'), at('2026-03-03', '05:00')]]
    expect(show(subtractBusy(day('2026-03-02'), busy))).to.deep.equal(['2026-03-02 02:00–2026-03-02 23:00'])
    expect(show(subtractBusy(day('2026-03-02'), [[at('2026-03-05'), at('2026-03-06')]]))).to.deep.equal(['2026-03-02 00:00–2026-03-03 00:00'])
  })

  it('a range all taken has no window', () => {
    expect(subtractBusy(day('2026-03-02'), [[at('2026-03-01'), at('2026-03-04')]])).to.deep.equal([])
  })
})

describe('wallMinutes', () => {
  it('counts wall-clock minutes, as summary/ does: 1,440 on the day clocks go forward or back too', () => {
    expect(wallMinutes(day('2026-03-29'))).to.equal(1440)
    expect(wallMinutes(day('2026-10-25'))).to.equal(1440)
    expect(wallMinutes([at('2026-03-02', '09:00'), at('2026-03-02', '09:30') + 30_000])).to.equal(30.5)
  })
})

describe('bookingInterval: the time a blocking booking takes', () => {
  const booking = (date: string, from: string | null, to: string | null) => ({
    dayMs: dayToMs(date),
    fromSeconds: from === null ? null : Number(from.slice(0, 2)) * 3600 + Number(from.slice(3, 5)) * 60,
    toSeconds: to === null ? null : Number(to.slice(0, 2)) * 3600 + Number(to.slice(3, 5)) * 60,
  })
  const shown = (interval: Interval | undefined) => (interval ? show([interval])[0] : undefined)

  it('a timed booking its slot', () => {
    expect(shown(bookingInterval(booking('2026-03-02', '09:00', '10:30')))).to.equal('2026-03-02 09:00–2026-03-02 10:30')
  })
  it('a whole-day booking (time_from NULL) its whole day', () => {
    expect(shown(bookingInterval(booking('2026-03-02', null, null)))).to.equal('2026-03-02 00:00–2026-03-03 00:00')
  })
  it('a slot past midnight runs into the next day', () => {
    expect(shown(bookingInterval(booking('2026-03-02', '22:00', '02:00')))).to.equal('2026-03-02 22:00–2026-03-03 02:00')
  })
  it('24:00:00 ends at the next midnight', () => {
    expect(shown(bookingInterval(booking('2026-03-02', '20:00', '24:00')))).to.equal('2026-03-02 20:00–2026-03-03 00:00')
  })
  it('no end (time_to NULL) takes the rest of its day; from 00:00, the whole day', () => {
    expect(shown(bookingInterval(booking('2026-03-02', '15:00', null)))).to.equal('2026-03-02 15:00–2026-03-03 00:00')
    expect(shown(bookingInterval(booking('2026-03-02', '00:00', null)))).to.equal('2026-03-02 00:00–2026-03-03 00:00')
  })
  it('a whole-day booking with a stray end (time_from NULL, time_to set) still takes its whole day', () => {
    expect(shown(bookingInterval(booking('2026-03-02', null, '12:00')))).to.equal('2026-03-02 00:00–2026-03-03 00:00')
  })
  it('an end equal to the start takes nothing', () => {
    expect(bookingInterval(booking('2026-03-02', '15:00', '15:00'))).to.equal(undefined)
  })
  it('a day that cannot be read (the zero date) takes nothing', () => {
    expect(bookingInterval({ dayMs: NaN, fromSeconds: 0, toSeconds: 60 })).to.equal(undefined)
    expect(bookingInterval({ dayMs: NaN, fromSeconds: null, toSeconds: null })).to.equal(undefined)
  })
})

describe('bookableStarts: the grid of start times', () => {
  const starts = (windows: Interval[], options: { first: string; days?: number; duration: number; step?: number; limit?: number; zone?: string }) =>
    show([...bookableStarts(windows, {
      firstDayMs: at(options.first), endMs: at(options.first) + (options.days ?? 1) * DAY_MS,
      durationMs: options.duration * 60_000, stepMs: (options.step ?? options.duration) * 60_000,
      limit: options.limit ?? Number.POSITIVE_INFINITY, exists: existsIn(options.zone ?? 'Europe/Berlin'),
    })])

  it('times 00:00 + k × step whose [start, start + duration) lies wholly in one window', () => {
    expect(starts([[at('2026-03-02', '09:10'), at('2026-03-02', '11:00')]], { first: '2026-03-02', duration: 30, step: 30 })).to.deep.equal([
      '2026-03-02 09:30–2026-03-02 10:00', '2026-03-02 10:00–2026-03-02 10:30', '2026-03-02 10:30–2026-03-02 11:00',
    ])
  })

  it('a step shorter than the duration gives overlapping starts; none runs past its window', () => {
    expect(starts([[at('2026-03-02', '09:00'), at('2026-03-02', '10:00')]], { first: '2026-03-02', duration: 45, step: 15 })).to.deep.equal([
      '2026-03-02 09:00–2026-03-02 09:45', '2026-03-02 09:15–2026-03-02 10:00',
    ])
  })

  it('a window shorter than the duration gives none; two windows give theirs in order', () => {
    expect(starts([[at('2026-03-02', '09:00'), at('2026-03-02', '09:20')], [at('2026-03-02', '12:00'), at('2026-03-02', '13:00')]],
      { first: '2026-03-02', duration: 30 })).to.deep.equal(['2026-03-02 12:00–2026-03-02 12:30', '2026-03-02 12:30–2026-03-02 13:00'])
  })

  it('the grid starts again at each midnight: a step that does not divide the day', () => {
    expect(starts([[at('2026-03-02', '23:00'), at('2026-03-03', '01:00')]], { first: '2026-03-02', days: 2, duration: 25, step: 25 })).to.deep.equal([
      // 23:45 is 00:00 + 57 × 25 minutes, on the grid of the 2nd; the 3rd's grid starts at its own midnight.
      '2026-03-02 23:20–2026-03-02 23:45', '2026-03-02 23:45–2026-03-03 00:10', '2026-03-03 00:00–2026-03-03 00:25', '2026-03-03 00:25–2026-03-03 00:50',
    ])
  })

  it('a window on a later day of the range is on that day\'s own grid', () => {
    // 2026-03-03's grid of 25 minutes: 10:00 (k = 24), 10:25, 10:50; only 10:25 fits in 10:05 to 11:00.
    expect(starts([[at('2026-03-03', '10:05'), at('2026-03-03', '11:00')]], { first: '2026-03-02', days: 2, duration: 25 })).to.deep.equal([
      '2026-03-03 10:25–2026-03-03 10:50',
    ])
  })

  it('a start in a window past midnight may end on the next day', () => {
    expect(starts([[at('2026-03-02', '23:00'), at('2026-03-03', '02:00')]], { first: '2026-03-02', days: 2, duration: 120, step: 60 })).to.deep.equal([
      '2026-03-02 23:00–2026-03-03 01:00', '2026-03-03 00:00–2026-03-03 02:00',
    ])
  })

  it('nothing starts at or past the range\'s end', () => {
    expect(starts([[at('2026-03-02', '22:00'), at('2026-03-03', '02:00')]], { first: '2026-03-02', days: 1, duration: 60 })).to.deep.equal([
      '2026-03-02 22:00–2026-03-02 23:00', '2026-03-02 23:00–2026-03-03 00:00',
    ])
  })

  it('Europe/Berlin, clocks forward (2026-03-29): 02:00 and 02:30 do not exist and are left out', () => {
    expect(starts([day('2026-03-29')], { first: '2026-03-29', duration: 30, step: 30 }).filter((s) => /^2026-03-29 0[123]:/.test(s) && s < '2026-03-29 03:30')).to.deep.equal([
      '2026-03-29 01:00–2026-03-29 01:30', '2026-03-29 01:30–2026-03-29 02:00', '2026-03-29 03:00–2026-03-29 03:30',
    ])
    expect(starts([day('2026-03-29')], { first: '2026-03-29', duration: 30 })).to.have.length(46)
  })

  it('Europe/Berlin, clocks back (2026-10-25): 02:00 and 02:30 occur twice and are listed once', () => {
    const list = starts([day('2026-10-25')], { first: '2026-10-25', duration: 30 })
    expect(list).to.have.length(48)
    expect(list.filter((s) => s.startsWith('2026-10-25 02:'))).to.deep.equal(['2026-10-25 02:00–2026-10-25 02:30', '2026-10-25 02:30–2026-10-25 03:00'])
  })

  it('a fixed-offset site (+05:45) has every wall-clock time, every day', () => {
    expect(starts([day('2026-03-29')], { first: '2026-03-29', duration: 15, zone: '+05:45' })).to.have.length(96)
  })

  it('limit: the earliest so many', () => {
    expect(starts([[at('2026-03-02', '09:00'), at('2026-03-02', '12:00')]], { first: '2026-03-02', duration: 60, limit: 1 })).to.deep.equal(['2026-03-02 09:00–2026-03-02 10:00'])
    expect(starts([[at('2026-03-02', '09:00'), at('2026-03-02', '10:00')], [at('2026-03-02', '11:00'), at('2026-03-02', '13:00')]],
      { first: '2026-03-02', duration: 60, limit: 2 })).to.deep.equal(['2026-03-02 09:00–2026-03-02 10:00', '2026-03-02 11:00–2026-03-02 12:00'])
  })

  it('is lazy: a year of one-minute starts is made as it is read', () => {
    const generator = bookableStarts([[at('2026-01-01'), at('2027-01-01')]], {
      firstDayMs: at('2026-01-01'), endMs: at('2027-01-01'), durationMs: 60_000, stepMs: 60_000, limit: Number.POSITIVE_INFINITY, exists: () => true,
    })
    expect(show([generator.next().value as Interval])).to.deep.equal(['2026-01-01 00:00–2026-01-01 00:01'])
  })
})

describe('mostBookableStarts: the bound of AVAILABILITY_MAX_ITEMS, before anything is read', () => {
  const cases: [days: number, duration: number, step: number, most: number][] = [
    [1, 60, 60, 24],
    [2, 60, 60, 48],
    // The last day's 23:30 would end past the range; the other days' runs into the next day.
    [2, 60, 30, 48 + 47],
    [1, 1440, 1440, 1],
    [3, 1440, 1440, 3],
    [1, 1, 1, 1440],
    // 731 days, duration=1&step=1: the 1.05 million start times of one service.
    [731, 1, 1, 731 * 1440],
    // A step that does not divide the day: 00:00, 07:00, 14:00, 21:00; the last day's 21:00 + 181 ends past it, + 180 does not.
    [2, 181, 420, 4 + 3],
    [2, 180, 420, 4 + 4],
    [0, 60, 60, 0],
  ]
  for (const [days, duration, step, most] of cases) {
    it(`${days} days, duration ${duration}, step ${step}: ${most}`, () => {
      expect(mostBookableStarts(days, duration, step)).to.equal(most)
    })
  }

  it('is exactly the count of start times of a service free all the range long', () => {
    const firstDayMs = dayToMs('2026-01-01')
    for (const days of [1, 2, 5]) {
      for (const [duration, step] of [[15, 15], [45, 20], [90, 60], [1440, 1440], [7, 1440], [1440, 7], [100, 333]] as const) {
        const endMs = firstDayMs + days * DAY_MS
        const listed = [...bookableStarts([[firstDayMs, endMs]], { firstDayMs, endMs, durationMs: duration * 60_000, stepMs: step * 60_000, limit: Infinity, exists: () => true })].length
        expect(mostBookableStarts(days, duration, step), `${days} days, ${duration}/${step}`).to.equal(listed)
      }
    }
  })
})
