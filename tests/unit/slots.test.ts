// Which bookings answers are tried in one statement first (server/domain/slots.ts, isNarrow).
import { expect } from 'chai'
import { isNarrow } from '../../server/domain/slots.ts'

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
  })
})
