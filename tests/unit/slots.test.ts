// Which bookings answers are tried in one statement first (server/domain/slots.ts, isNarrow),
// and what their tags are made of.
import { expect } from 'chai'
import { bookingFilter, isNarrow, recordsDigest } from '../../server/domain/slots.ts'
import type { BookingRecord } from '../../server/domain/booking-record.ts'
import { parseParams } from '../../server/http/params.ts'
import { slotsParams } from '../../server/routes/slots.ts'

describe('isNarrow', () => {
  it('is true for one service, or a range of at most two months; false otherwise', () => {
    expect(isNarrow({ serviceId: 12 })).to.equal(true)
    expect(isNarrow({ bookingDate: { from: '2026-03-01', to: '2026-03-31' } })).to.equal(true)
    expect(isNarrow({ bookingDate: { from: '2026-03-01', to: '2026-05-01' } })).to.equal(true)
    expect(isNarrow({ bookingDate: { from: '2026-03-01', to: '2026-05-02' } })).to.equal(false)
    expect(isNarrow({ createdAt: { from: '2026-03-01 00:00:00', to: '2026-03-31 23:59:59' } })).to.equal(true)
    expect(isNarrow({ bookingDate: { from: '2026-03-01', to: undefined } })).to.equal(false)
    expect(isNarrow({ statuses: ['pending'] })).to.equal(false)
    expect(isNarrow({})).to.equal(false)
    expect(isNarrow({ createdAt: { from: undefined, to: '2026-03-31 23:59:59' } })).to.equal(false)
    expect(isNarrow({ createdAt: { from: '2026-03-01 00:00:00', to: undefined } })).to.equal(false)
    expect(isNarrow({ bookingDate: { from: undefined, to: '2026-03-31' } })).to.equal(false)
  })
})

describe('bookingFilter: what the parameters ask of the bookings table', () => {
  const filter = (query: Record<string, string>, serviceId?: number) => bookingFilter(parseParams(slotsParams, query), serviceId)

  it('applies start and end to booking_date by default', () => {
    expect(filter({ start: '2026-03-01', end: '2026-03-31', status: 'booked' }, 12)).to.deep.equal({
      serviceId: 12, statuses: ['booked'], bookingDate: { from: '2026-03-01', to: '2026-03-31' },
    })
    expect(filter({ end: '2026-03-31' })).to.deep.equal({ serviceId: undefined, statuses: undefined, bookingDate: { from: undefined, to: '2026-03-31' } })
  })

  it('applies them from 00:00:00 to 23:59:59 of created_date with filter_by=created_date', () => {
    expect(filter({ start: '2026-03-01', end: '2026-03-31', filter_by: 'created_date' })).to.deep.equal({
      serviceId: undefined, statuses: undefined, createdAt: { from: '2026-03-01 00:00:00', to: '2026-03-31 23:59:59' },
    })
    expect(filter({ start: '2026-03-01', filter_by: 'created_date' }).createdAt).to.deep.equal({ from: '2026-03-01 00:00:00', to: undefined })
    expect(filter({ end: '2026-03-31', filter_by: 'created_date' }).createdAt).to.deep.equal({ from: undefined, to: '2026-03-31 23:59:59' })
  })

  it('has no date bounds without start and end', () => {
    expect(filter({ filter_by: 'created_date' })).to.deep.equal({ serviceId: undefined, statuses: undefined })
  })
})

describe('recordsDigest: the SHA-256 of the records as their JSON, in base64url', () => {
  it('gives the digest of the JSON text, so the same records give the same digest and others another', () => {
    // echo -n '[]' | sha256sum, in base64url; and of [{"id":1}].
    expect(recordsDigest([])).to.equal('T1PNoYwrqgwDVLtfmj7L5e0Sq02OEbqHPC8RFhICuUU')
    expect(recordsDigest([{ id: 1 } as unknown as BookingRecord])).to.equal('u0Hu7tt3iaNILMdKGsjYTv-ypQi3U5SBMOOVjDkAQSA')
  })
})
