import { expect } from 'chai'
import { resolveFeedRange } from '../../server/domain/feed-range.ts'
import type { RestError } from '../../server/errors.ts'

function problemOf(run: () => unknown): Record<string, string> | undefined {
  try {
    run()
  } catch (error) {
    expect((error as RestError).status).to.equal(400)
    return (error as RestError).extra.params
  }
  throw new Error('no error')
}

describe('resolveFeedRange: the edges of a calendar feed\'s range', () => {
  it('end alone on the default start (30 days before today) is a one-day feed', () => {
    expect(resolveFeedRange(undefined, '2026-10-23', '2026-11-22', 731)).to.deep.equal({ start: '2026-10-23', end: '2026-10-23' })
  })
  it('end alone one day before the default start names end and the default', () => {
    expect(problemOf(() => resolveFeedRange(undefined, '2026-10-22', '2026-11-22', 731)))
      .to.deep.equal({ end: 'end must not be before start, which for a calendar feed defaults to 30 days before today (2026-10-23).' })
  })
  it('a given start after end names start, as every other range does', () => {
    expect(problemOf(() => resolveFeedRange('2026-12-02', '2026-12-01', '2026-11-22', 731)))
      .to.deep.equal({ start: 'start must not be after end (2026-12-02 is after 2026-12-01).' })
  })
  it('a default end inside year 9999 stays as it is; only one past it stops at 9999-12-31', () => {
    expect(resolveFeedRange('9998-12-31', undefined, '2026-11-22', 731)).to.deep.equal({ start: '9998-12-31', end: '9999-12-31' })
    expect(resolveFeedRange('9998-06-01', undefined, '2026-11-22', 731)).to.deep.equal({ start: '9998-06-01', end: '9999-06-01' })
    expect(resolveFeedRange('9999-01-01', undefined, '2026-11-22', 731)).to.deep.equal({ start: '9999-01-01', end: '9999-12-31' })
  })
  it('the default end of a range without start is a year after today, within the limit when the limit allows 396 days', () => {
    expect(resolveFeedRange(undefined, undefined, '2026-11-22', 396)).to.deep.equal({ start: '2026-10-23', end: '2027-11-22' })
    expect(problemOf(() => resolveFeedRange(undefined, undefined, '2026-11-22', 395))).to.have.property('start')
  })
})
