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
  it('a default end up to 9999-12-30 stays as it is; one past it stops at 9999-12-30', () => {
    expect(resolveFeedRange('9998-12-30', undefined, '2026-11-22', 731)).to.deep.equal({ start: '9998-12-30', end: '9999-12-30' })
    expect(resolveFeedRange('9998-12-31', undefined, '2026-11-22', 731)).to.deep.equal({ start: '9998-12-31', end: '9999-12-30' })
    expect(resolveFeedRange('9998-06-01', undefined, '2026-11-22', 731)).to.deep.equal({ start: '9998-06-01', end: '9999-06-01' })
    expect(resolveFeedRange('9999-01-01', undefined, '2026-11-22', 731)).to.deep.equal({ start: '9999-01-01', end: '9999-12-30' })
  })
  it('a range reaching 9999-12-31 is refused, naming the parameter (its events could end in the year 10000)', () => {
    const why = 'must be 9999-12-30 or earlier: a time on the last day of 9999 can end in the year 10000, which the answer\'s dates cannot be written in.'
    expect(problemOf(() => resolveFeedRange('9999-12-25', '9999-12-31', '2026-11-22', 731))).to.deep.equal({ end: `end ${why}` })
    expect(problemOf(() => resolveFeedRange('9999-12-31', undefined, '2026-11-22', 731))).to.deep.equal({ start: `start ${why}` })
  })
  it('the default end of a range without start is a year after today, within the limit when the limit allows 396 days', () => {
    expect(resolveFeedRange(undefined, undefined, '2026-11-22', 396)).to.deep.equal({ start: '2026-10-23', end: '2027-11-22' })
    expect(problemOf(() => resolveFeedRange(undefined, undefined, '2026-11-22', 395))).to.have.property('start')
  })
})
