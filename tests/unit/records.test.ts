import { expect } from 'chai'
import type { BookingRow } from '../../db/booking-queries.ts'
import { WallClock } from '../../server/domain/wall-clock.ts'
import { toBookingRecord } from '../../server/domain/booking-record.ts'
import { pickFields } from '../../server/domain/pick-fields.ts'
import { createSlugDecoder, decodeSlug, storedSlugForms } from '../../server/domain/slugs.ts'

const clock = new WallClock({ kind: 'iana', name: 'Europe/Berlin' })
const mapping = { clock, exposeCustomer: false, slugOf: createSlugDecoder() }

function row(overrides: Partial<BookingRow>): BookingRow {
  return {
    id: 1, service_id: 12, status: 'booked', booking_date: '2026-11-25', time_from: '09:00:00', time_to: '10:00:00',
    customer_name: 'Ann', customer_email: 'ann@example.com', customer_phone: '+49 1', note: 'n',
    created_at: '2026-11-01 10:00:00', service_post_name: 'haircut', ...overrides,
  }
}

describe('toBookingRecord: a row in, API.md\'s booking out', () => {
  it('maps every field of an ordinary booking', () => {
    expect(toBookingRecord(row({}), mapping)).to.deep.equal({
      id: 1, service_id: 12, service_slug: 'haircut', status: 'booked', booking_date: '2026-11-25',
      start: '2026-11-25T09:00:00+01:00', end: '2026-11-25T10:00:00+01:00', all_day: false,
      created_date: '2026-11-01T10:00:00+01:00', customer: null, note: 'n',
    })
  })

  const ends: [string, Partial<BookingRow>, string | null, string | null, boolean][] = [
    ['a whole-day booking runs 00:00 to the next day 00:00', { time_from: null, time_to: null }, '2026-11-25T00:00:00+01:00', '2026-11-26T00:00:00+01:00', true],
    ['24:00:00 ends at the next day 00:00', { time_from: '18:00:00', time_to: '24:00:00' }, '2026-11-25T18:00:00+01:00', '2026-11-26T00:00:00+01:00', false],
    ['an end before the start runs past midnight', { time_from: '22:00:00', time_to: '01:30:00' }, '2026-11-25T22:00:00+01:00', '2026-11-26T01:30:00+01:00', false],
    ['an end equal to the start is the start', { time_from: '10:00:00', time_to: '10:00:00' }, '2026-11-25T10:00:00+01:00', '2026-11-25T10:00:00+01:00', false],
    ['a NULL end with a start is null', { time_from: '10:00:00', time_to: null }, '2026-11-25T10:00:00+01:00', null, false],
    ['past midnight into the autumn change keeps each side\'s offset', { booking_date: '2026-10-24', time_from: '23:00:00', time_to: '04:00:00' }, '2026-10-24T23:00:00+02:00', '2026-10-25T04:00:00+01:00', false],
  ]
  for (const [name, overrides, start, end, allDay] of ends) {
    it(name, () => {
      const record = toBookingRecord(row(overrides), mapping)
      expect([record.start, record.end, record.all_day]).to.deep.equal([start, end, allDay])
    })
  }

  it('trims and lower-cases the status, keeping legacy values', () => {
    expect(toBookingRecord(row({ status: 'Booked  ' }), mapping).status).to.equal('booked')
    expect(toBookingRecord(row({ status: 'ON_HOLD' }), mapping).status).to.equal('on_hold')
    // A status no test has shown before, so the process-wide cache of statuses cannot answer it.
    const legacy = `Held_${Math.random().toString(36).slice(2)}`
    expect(toBookingRecord(row({ status: ` ${legacy} ` }), mapping).status).to.equal(legacy.toLowerCase())
  })

  it('gives created_date null for the zero date', () => {
    expect(toBookingRecord(row({ created_at: '0000-00-00 00:00:00' }), mapping).created_date).to.equal(null)
  })

  it('gives service_slug null when the service post is gone', () => {
    const slugOf = (name: string | null) => `slug of ${name}`
    expect(toBookingRecord(row({ service_post_name: null }), { ...mapping, slugOf }).service_slug).to.equal(null)
    expect(toBookingRecord(row({}), { ...mapping, slugOf }).service_slug).to.equal('slug of haircut')
  })

  it('gives start and end null for a booking_date that is no date', () => {
    const record = toBookingRecord(row({ booking_date: '0000-00-00' }), mapping)
    expect([record.booking_date, record.start, record.end, record.all_day]).to.deep.equal(['0000-00-00', null, null, false])
  })

  it('carries customer only when asked to', () => {
    expect(toBookingRecord(row({}), { ...mapping, exposeCustomer: true }).customer)
      .to.deep.equal({ name: 'Ann', email: 'ann@example.com', phone: '+49 1' })
  })
})

describe('slugs as WordPress stores them', () => {
  it('decodes a percent-encoded slug and drops __trashed', () => {
    expect(decodeSlug('%d1%81%d1%82%d1%80%d0%b8%d0%b6%d0%ba%d0%b0')).to.equal('стрижка')
    expect(decodeSlug('massage__trashed')).to.equal('massage')
    expect(decodeSlug('100%-sure')).to.equal('100%-sure')
  })

  it('encodes a slug the way sanitize_title() stores it, lower-cased first', () => {
    expect(storedSlugForms('СТРИЖКА')).to.deep.equal(['СТРИЖКА', '%d1%81%d1%82%d1%80%d0%b8%d0%b6%d0%ba%d0%b0'])
    expect(storedSlugForms('Haircut')).to.deep.equal(['Haircut', 'haircut'])
    expect(storedSlugForms('haircut')).to.deep.equal(['haircut'])
    // U+007F is the last ASCII character; U+0080 is the first that is encoded.
    expect(storedSlugForms('a\u007f')).to.deep.equal(['a\u007f'])
    expect(storedSlugForms('a\u0080')).to.deep.equal(['a\u0080', 'a%c2%80'])
  })

  it('decodes slugs through a decoder that passes null through', () => {
    const slugOf = createSlugDecoder()
    expect(slugOf(null)).to.equal(null)
    expect(slugOf('massage__trashed')).to.equal('massage')
    expect(slugOf('massage__trashed')).to.equal('massage')
  })
})

describe('pickFields: WordPress\'s _fields', () => {
  const record = { id: 1, start: 's', customer: { name: 'n', email: 'e', phone: 'p' }, note: null }
  it('keeps the named fields in the record\'s order', () => {
    expect(pickFields(record, ['note', 'id'])).to.deep.equal({ id: 1, note: null })
  })
  it('keeps one field of a nested object', () => {
    expect(pickFields(record, ['customer.email'])).to.deep.equal({ customer: { email: 'e' } })
  })
  it('ignores unknown names', () => {
    expect(pickFields(record, ['nope'])).to.deep.equal({})
  })
  it('keeps every field without _fields', () => {
    expect(pickFields(record, undefined)).to.equal(record)
  })
  it('keeps a null or plain value asked for with a nested name', () => {
    expect(pickFields({ customer: null, id: 1 }, ['customer.email', 'id.x'])).to.deep.equal({ customer: null, id: 1 })
  })
})
