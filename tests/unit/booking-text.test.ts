// The bookings body writes each record by hand (server/http/slots-body.ts): it
// must give exactly what JSON.stringify and the cell-by-cell CSV give, for
// every kind of text a booking can hold.
import { expect } from 'chai'
import { bookingCsvRow, bookingJson, csvCell, csvText, jsonText } from '../../server/http/booking-text.ts'
import type { BookingRecord } from '../../server/domain/booking-record.ts'

const plain: BookingRecord = {
  id: 101, service_id: 12, service_slug: 'haircut', status: 'booked', booking_date: '2026-11-25',
  start: '2026-11-25T09:00:00+01:00', end: '2026-11-25T10:00:00+01:00', all_day: false,
  created_date: '2026-11-01T10:00:00+01:00', customer: { name: 'Ann', email: 'ann@example.com', phone: '+49 1' }, note: 'n',
}

const texts = [
  '', 'plain', 'say "hi"', 'back\\slash', 'line\nbreak', 'tab\there', '\u0000\u001f\u007f', 'a,b', '=1+1', '-5', '@x',
  '🎉 стрижка שלום', 'lone \ud800 high', 'lone \udfff low', 'pair \ud83c\udf89', '\u2028\u2029', '</script>', "it's",
]

const records: [string, BookingRecord][] = [
  ['an ordinary booking', plain],
  ['negative IDs (the formula guard of CSV)', { ...plain, id: -1, service_id: -12 }],
  ['customer hidden, nulls everywhere they may be', {
    ...plain, service_slug: null, start: null, end: null, all_day: true, created_date: null, customer: null, note: null,
  }],
  ...texts.map((text): [string, BookingRecord] => [`text ${JSON.stringify(text)} in every string field`, {
    ...plain, service_slug: text, status: text, booking_date: text, note: text, customer: { name: text, email: text, phone: text },
  }]),
]

describe('bookingJson: JSON.stringify of a booking, byte for byte', () => {
  for (const [name, record] of records) {
    it(name, () => {
      expect(bookingJson(record)).to.equal(JSON.stringify(record))
    })
  }

  it('jsonText quotes what needs nothing and escapes the rest as JSON.stringify does', () => {
    for (const text of texts) expect(jsonText(text)).to.equal(JSON.stringify(text))
    expect(jsonText(null)).to.equal('null')
  })
})

describe('bookingCsvRow: every column, each cell by csvCell', () => {
  const cellByCell = (record: BookingRecord) => [
    record.id, record.service_id, record.service_slug, record.status, record.booking_date, record.start, record.end,
    record.all_day, record.created_date, record.customer?.name ?? null, record.customer?.email ?? null,
    record.customer?.phone ?? null, record.note,
  ].map(csvCell).join(',') + '\r\n'

  for (const [name, record] of records) {
    it(name, () => {
      expect(bookingCsvRow(record)).to.equal(cellByCell(record))
    })
  }

  it('csvText is csvCell for every kind of text, and for null', () => {
    for (const text of [...texts, null, '\rx', '\tx', '+49 30 1', 'x\r', 'a"b']) expect(csvText(text)).to.equal(csvCell(text))
  })
})
