import { expect } from 'chai'
import { bookingRowCrcs, dayOfNumber, MOST_EXACT_DAY_ROWS, periodDigestsOfDays } from '../../db/day-digests.ts'
import { periodOfDay, type BookingRow } from '../../db/booking-queries.ts'

describe('day digests added up by period (db/day-digests.ts)', () => {
  it('bookingRowCrcs: a NULL cell is not the text NULL, and each cell counts', () => {
    const row: BookingRow = { id: 7, service_id: 1, status: 'booked', booking_date: '2026-01-05', time_from: '10:00:00', time_to: null, customer_name: 'A', customer_email: 'a@b', customer_phone: '1', note: null, created_at: '2026-01-01 00:00:00', service_post_name: 'cut' }
    const crcs = (changed: Partial<BookingRow>) => {
      const out = { crc: 0, reversed: 0 }
      bookingRowCrcs({ ...row, ...changed }, { customer: false }, out)
      return `${out.crc}:${out.reversed}`
    }
    const all = [crcs({}), crcs({ note: 'null' }), crcs({ note: 'NULL' }), crcs({ note: '' }), crcs({ time_to: '11:00:00' }), crcs({ status: 'pending' }), crcs({ id: 8 })]
    expect(new Set(all).size, all.join(' ')).to.equal(all.length)
    // Customer cells only where they are shown.
    expect(crcs({ customer_name: 'B' })).to.equal(crcs({}))
  })

  it('reads a day as booking_date + 0 gives it, the zero date and odd days kept as they are', () => {
    const days: Array<[number | string, string]> = [
      [20250101, '2025-01-01'], ['20251231', '2025-12-31'], [0, '0000-00-00'], [10101, '0001-01-01'],
      [20250230, '2025-02-30'], [20250300, '2025-03-00'], [20250000, '2025-00-00'], [99991231, '9999-12-31'],
    ]
    for (const [number, text] of days) expect(dayOfNumber(number), String(number)).to.equal(text)
  })

  it('adds the days of a period, from either half, to the digit past 2^53', () => {
    const big = '9007199254740993' // 2^53 + 1: exact only as a big integer
    const digests = periodDigestsOfDays([
      { day: 20250101, row_count: 2, row_crc_sum: 10, row_crc_reversed_sum: '20' },
      { day: '20250102', row_count: '3', row_crc_sum: big, row_crc_reversed_sum: 1 },
      { day: 20250101, row_count: 1, row_crc_sum: 5, row_crc_reversed_sum: 7 },
      { day: 20250103, row_count: 4, row_crc_sum: 100, row_crc_reversed_sum: 200 },
      { day: 0, row_count: 1, row_crc_sum: 1, row_crc_reversed_sum: 2 },
    ], 'two-days')
    expect([...digests]).to.deep.equal([
      [periodOfDay('2025-01-01', 'two-days'), '6:9007199254741008:28'],
      [periodOfDay('2025-01-03', 'two-days'), '4:100:200'],
      [0, '1:1:2'],
    ])
    expect(periodDigestsOfDays([{ day: 20250103, row_count: 4, row_crc_sum: 100, row_crc_reversed_sum: 200 }], 'month'))
      .to.deep.equal(new Map([[periodOfDay('2025-01-01', 'month'), '4:100:200']]))
    expect(periodDigestsOfDays([], 'month')).to.deep.equal(new Map())
  })

  it('gives a period with a day past the exact sums a digest no other read gives', () => {
    let made = 0
    const unique = () => `u${++made}`
    const rows = [
      { day: 20250101, row_count: MOST_EXACT_DAY_ROWS, row_crc_sum: 1, row_crc_reversed_sum: 1 },
      { day: 20250103, row_count: MOST_EXACT_DAY_ROWS + 1, row_crc_sum: 1, row_crc_reversed_sum: 1 },
      { day: 20250104, row_count: 1, row_crc_sum: 1, row_crc_reversed_sum: 1 },
    ]
    const first = periodDigestsOfDays(rows, 'two-days', unique)
    expect(first.get(periodOfDay('2025-01-01', 'two-days'))).to.equal(`${MOST_EXACT_DAY_ROWS}:1:1`)
    expect(first.get(periodOfDay('2025-01-03', 'two-days'))).to.equal(`${MOST_EXACT_DAY_ROWS + 2}:unknown:u1`)
    expect(periodDigestsOfDays(rows, 'two-days').get(periodOfDay('2025-01-03', 'two-days'))).to.not.equal(periodDigestsOfDays(rows, 'two-days').get(periodOfDay('2025-01-03', 'two-days')))
  })
})
