import { expect } from 'chai'
import { WallClock, wallClockFor } from '../../server/domain/wall-clock.ts'
import { zoneFromOptions, type SiteZone } from '../../server/domain/zone-offsets.ts'

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
