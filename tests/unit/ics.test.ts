// The iCalendar writer (API.md, "Calendar feeds: format=ics"): escaping,
// folding, events, and the feed's range. Pure functions, no database.
import { expect } from 'chai'
import ICAL from 'ical.js'
import nodeIcal from 'node-ical'
import {
  bookingEvent, bookingStatus, calendarStart, disabledEvent, escapeText, foldLine, slotsIcsChunks, utcDateTime,
  CALENDAR_END, type EventContext,
} from '../../server/http/ics.ts'
import { resolveFeedRange } from '../../server/domain/feed-range.ts'
import type { RestError } from '../../server/errors.ts'
import type { BookingRecord } from '../../server/domain/booking-record.ts'
import type { ExpandedPeriod } from '../../server/domain/rules.ts'

const context: EventContext = { host: 'shop.example.com', stamp: '20261122T120000Z' }

const booking: BookingRecord = {
  id: 101, service_id: 12, service_slug: 'haircut', status: 'booked', booking_date: '2026-11-25',
  start: '2026-11-25T09:00:00+01:00', end: '2026-11-25T10:00:00+01:00', all_day: false,
  created_date: '2026-11-01T10:00:00+01:00', customer: null, note: 'Window seat',
}

/** The octets of each line of a body, CRLF removed. */
function lineOctets(text: string): number[] {
  return text.split('\r\n').slice(0, -1).map((line) => Buffer.byteLength(line, 'utf8'))
}

describe('escapeText', () => {
  it('escapes backslash, semicolon and comma, and writes every line break as \\n (RFC 5545, 3.3.11)', () => {
    expect(escapeText('a\\b;c,d')).to.equal('a\\\\b\\;c\\,d')
    expect(escapeText('one\r\ntwo\nthree\rfour')).to.equal('one\\ntwo\\nthree\\nfour')
    expect(escapeText('plain')).to.equal('plain')
  })

  it('writes Unicode\'s line breaks (NEL, U+2028, U+2029) as \\n too: node-ical dropped a DESCRIPTION holding U+2028', () => {
    expect(escapeText('a\u2028b\u2029c\u0085d')).to.equal('a\\nb\\nc\\nd')
    const text = calendarStart('Bookings', 'Europe/Berlin') + bookingEvent({ ...booking, note: 'first\u2028second' }, context) + CALENDAR_END
    const event = Object.values(nodeIcal.sync.parseICS(text)).find((component) => component?.type === 'VEVENT') as nodeIcal.VEvent
    expect(event.description).to.equal('first\nsecond')
  })

  it('drops control characters TEXT does not allow, keeps a tab and all Unicode', () => {
    expect(escapeText('a\u0000b\u0007c\u007fd\te')).to.equal('abcd\te')
    expect(escapeText('🎉 שלום стрижка')).to.equal('🎉 שלום стрижка')
  })
})

describe('foldLine', () => {
  it('leaves a line of 75 octets as it is and ends it with CRLF', () => {
    const line = 'X'.repeat(75)
    expect(foldLine(line)).to.equal(`${line}\r\n`)
  })

  it('folds at 75 octets, continuation lines starting with one space and at most 75 octets too', () => {
    const folded = foldLine(`DESCRIPTION:${'a'.repeat(200)}`)
    expect(lineOctets(folded).every((n) => n <= 75)).to.equal(true)
    expect(folded.split('\r\n')[0]).to.have.length(75)
    expect(folded.split('\r\n').slice(1, -1).every((line) => line.startsWith(' '))).to.equal(true)
    expect(folded.replace(/\r\n /g, '')).to.equal(`DESCRIPTION:${'a'.repeat(200)}\r\n`)
  })

  it('never splits a UTF-8 character: 2-, 3- and 4-octet characters at every offset', () => {
    for (const char of ['é', 'ש', '€', '🎉']) {
      for (let offset = 0; offset < 4; offset++) {
        const line = `SUMMARY:${'x'.repeat(offset)}${char.repeat(60)}`
        const folded = foldLine(line)
        const bytes = Buffer.from(folded, 'utf8')
        // Every physical line decodes on its own: no character is cut in two.
        for (const part of folded.split('\r\n')) expect(Buffer.from(part, 'utf8').toString('utf8')).to.equal(part)
        expect(bytes.toString('utf8')).to.not.include('\uFFFD')
        expect(lineOctets(folded).every((n) => n <= 75), `${char} at ${offset}`).to.equal(true)
        expect(folded.replace(/\r\n /g, '')).to.equal(`${line}\r\n`)
      }
    }
  })
})

describe('utcDateTime and bookingStatus', () => {
  it('writes an instant with any offset in UTC', () => {
    expect(utcDateTime(Date.parse('2026-11-24T08:00:00+01:00'))).to.equal('20261124T070000Z')
    expect(utcDateTime(Date.parse('2026-10-25T02:30:00+02:00'))).to.equal('20261025T003000Z')
  })

  it('maps pending to TENTATIVE, booked and completed to CONFIRMED, reject and expired to CANCELLED, others to none', () => {
    expect(['pending', 'booked', 'completed', 'reject', 'expired', 'legacy_hold', ''].map(bookingStatus))
      .to.deep.equal(['TENTATIVE', 'CONFIRMED', 'CONFIRMED', 'CANCELLED', 'CANCELLED', undefined, undefined])
  })
})

describe('bookingEvent', () => {
  it('a timed booking: UID with the host, DTSTAMP, DTSTART and DTEND in UTC, SUMMARY, STATUS, CATEGORIES, DESCRIPTION', () => {
    expect(bookingEvent(booking, context).split('\r\n')).to.deep.equal([
      'BEGIN:VEVENT', 'UID:booking-101@shop.example.com', 'DTSTAMP:20261122T120000Z',
      'DTSTART:20261125T080000Z', 'DTEND:20261125T090000Z', 'SUMMARY:haircut', 'STATUS:CONFIRMED',
      'CATEGORIES:booked', 'DESCRIPTION:Window seat', 'END:VEVENT', '',
    ])
  })

  it('a whole-day booking has DATE values, the end the next day', () => {
    const text = bookingEvent({ ...booking, all_day: true, booking_date: '2026-12-31', start: '2026-12-31T00:00:00+01:00', end: '2027-01-01T00:00:00+01:00' }, context)
    expect(text).to.include('\r\nDTSTART;VALUE=DATE:20261231\r\nDTEND;VALUE=DATE:20270101\r\n')
  })

  it('no DTEND when end is null; service <id> when the service is gone; a cancelled booking is transparent', () => {
    const text = bookingEvent({ ...booking, end: null, service_slug: null, status: 'reject' }, context)
    expect(text).to.not.include('DTEND')
    expect(text).to.include('\r\nSUMMARY:service 12\r\nSTATUS:CANCELLED\r\nTRANSP:TRANSPARENT\r\nCATEGORIES:reject\r\n')
  })

  it('no DTEND when end is not after start (RFC 5545: DTEND must be later; the event ends when it starts), written in another offset too', () => {
    expect(bookingEvent({ ...booking, end: booking.start }, context)).to.not.include('DTEND')
    const sameInstant = new Date(Date.parse(booking.start!)).toISOString().replace('.000Z', '+00:00')
    expect(bookingEvent({ ...booking, end: sameInstant }, context)).to.not.include('DTEND')
    // Before the start: 02:30 to 03:00 on Berlin's spring-forward day reads 03:30 to 03:00 (API.md's rule).
    expect(bookingEvent({ ...booking, start: '2026-03-29T03:30:00+02:00', end: '2026-03-29T03:00:00+02:00' }, context)).to.not.include('DTEND')
    expect(bookingEvent(booking, context)).to.include('\r\nDTEND:')
  })

  it('a legacy status gets CATEGORIES but no STATUS', () => {
    const text = bookingEvent({ ...booking, status: 'legacy_hold' }, context)
    expect(text).to.not.include('STATUS:')
    expect(text).to.include('CATEGORIES:legacy_hold')
  })

  it('DESCRIPTION holds the customer lines only when the record carries customer', () => {
    const shown = bookingEvent({ ...booking, customer: { name: 'Anna', email: 'a@example.com', phone: '+49 1' } }, context)
    expect(shown).to.include('DESCRIPTION:Window seat\\nAnna\\na@example.com\\n+49 1\r\n')
    expect(bookingEvent(booking, context)).to.not.include('Anna')
    expect(bookingEvent({ ...booking, note: null }, context)).to.not.include('DESCRIPTION')
  })

  it('a booking without a readable day is left out', () => {
    expect(bookingEvent({ ...booking, start: null, end: null }, context)).to.equal('')
  })

  it('ical.js reads back the escaped and folded text exactly', () => {
    const note = 'a,b;c\\d\nsecond line 🎉 שלום עליכם '.repeat(4)
    const text = calendarStart('Bookings', 'Europe/Berlin') + bookingEvent({ ...booking, note }, context) + CALENDAR_END
    const event = new ICAL.Event(new ICAL.Component(ICAL.parse(text)).getFirstSubcomponent('vevent')!)
    expect(event.description).to.equal(note)
  })
})

describe('disabledEvent', () => {
  const period: ExpandedPeriod = {
    rule_id: 9, service_id: null, service_slug: null, type: 'date',
    start: '2026-12-24T00:00:00+01:00', end: '2026-12-27T00:00:00+01:00', all_day: true, note: 'Christmas', windowDay: '2026-12-24',
  }

  it('whole days as dates, UID from the rule and the start day, TRANSP:OPAQUE', () => {
    expect(disabledEvent(period, context).split('\r\n')).to.deep.equal([
      'BEGIN:VEVENT', 'UID:disabled-9-20261224@shop.example.com', 'DTSTAMP:20261122T120000Z',
      'DTSTART;VALUE=DATE:20261224', 'DTEND;VALUE=DATE:20261227', 'SUMMARY:Christmas', 'TRANSP:OPAQUE', 'END:VEVENT', '',
    ])
  })

  it('a timed period in UTC; an empty note gives SUMMARY Disabled; a service rule names its service', () => {
    const text = disabledEvent({ ...period, service_id: 12, service_slug: 'haircut', all_day: false, note: ' ',
      start: '2026-11-23T18:00:00+01:00', end: '2026-11-24T08:00:00+01:00' }, context)
    expect(text).to.include('\r\nDTSTART:20261123T170000Z\r\nDTEND:20261124T070000Z\r\nSUMMARY:Disabled\r\nDESCRIPTION:haircut\r\n')
  })

  it('a window cut at the range start keeps the UID of the day it began, not the range start day', () => {
    const cut = { ...period, all_day: false, start: '2027-01-12T00:00:00+01:00', end: '2027-01-12T06:00:00+01:00', windowDay: '2027-01-11' }
    expect(disabledEvent(cut, context)).to.include('\r\nUID:disabled-9-20270111@shop.example.com\r\n')
  })
})

describe('UID with a long host name', () => {
  const long: EventContext = { host: 'bookings.a-rather-long-subdomain-name.example-hairdresser.co.uk', stamp: context.stamp }

  it('is folded at 75 octets like every line, and ical.js reads the whole UID back', () => {
    const period: ExpandedPeriod = {
      rule_id: 12345, service_id: null, service_slug: null, type: 'weekly',
      start: '2026-11-23T18:00:00+01:00', end: '2026-11-24T08:00:00+01:00', all_day: false, note: 'After hours', windowDay: '2026-11-23',
    }
    const text = calendarStart('Bookings', 'Europe/Berlin') + bookingEvent({ ...booking, id: 987654 }, long) + disabledEvent(period, long) + CALENDAR_END
    expect(Math.max(...lineOctets(text))).to.be.at.most(75)
    const uids = new ICAL.Component(ICAL.parse(text)).getAllSubcomponents('vevent').map((event) => event.getFirstPropertyValue('uid'))
    expect(uids).to.deep.equal([`booking-987654@${long.host}`, `disabled-12345-20261123@${long.host}`])
  })
})

describe('slotsIcsChunks', () => {
  it('one VCALENDAR with the properties of API.md, events in order, ending with END:VCALENDAR and CRLF', async () => {
    async function* batches() { yield [booking, { ...booking, id: 102 }] }
    let text = ''
    for await (const chunk of slotsIcsChunks({ batches: batches() }, { name: 'Bookings: стрижка', timezone: 'Europe/Berlin' }, context)) text += chunk.toString()
    const lines = text.split('\r\n')
    expect(lines.slice(0, 9)).to.deep.equal([
      'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//booking-calendar-api//Calendar feed//EN', 'CALSCALE:GREGORIAN',
      'METHOD:PUBLISH', 'X-WR-CALNAME:Bookings: стрижка', 'X-WR-TIMEZONE:Europe/Berlin',
      'REFRESH-INTERVAL;VALUE=DURATION:PT15M', 'X-PUBLISHED-TTL:PT15M',
    ])
    expect(lines.filter((line) => line.startsWith('UID:'))).to.deep.equal(['UID:booking-101@shop.example.com', 'UID:booking-102@shop.example.com'])
    expect(text.endsWith('END:VEVENT\r\nEND:VCALENDAR\r\n')).to.equal(true)
  })

  it('no X-WR-TIMEZONE for a fixed offset or UTC', () => {
    expect(calendarStart('Bookings', undefined)).to.not.include('X-WR-TIMEZONE')
  })
})

describe('resolveFeedRange', () => {
  it('without start and end: 30 days before today to one year after', () => {
    expect(resolveFeedRange(undefined, undefined, '2026-11-22', 731)).to.deep.equal({ start: '2026-10-23', end: '2027-11-22' })
  })

  it('start alone: one year from start; end alone: from 30 days before today', () => {
    expect(resolveFeedRange('2027-02-28', undefined, '2026-11-22', 731)).to.deep.equal({ start: '2027-02-28', end: '2028-02-28' })
    expect(resolveFeedRange(undefined, '2026-12-31', '2026-11-22', 731)).to.deep.equal({ start: '2026-10-23', end: '2026-12-31' })
  })

  it('start alone in the last year a date can name: the default end stops at 9999-12-30 (it was a 400 saying start is after 10000-06-01)', () => {
    expect(resolveFeedRange('9999-06-01', undefined, '2026-11-22', 731)).to.deep.equal({ start: '9999-06-01', end: '9999-12-30' })
  })

  it('more than MAX_RANGE_DAYS gives 400 naming the parameter; an end before the default start names end', () => {
    const problem = (run: () => unknown) => {
      try {
        run()
      } catch (error) {
        return error as RestError
      }
      throw new Error('no error')
    }
    const tooLong = problem(() => resolveFeedRange('2020-01-01', '2026-01-01', '2026-11-22', 731))
    expect(tooLong.status).to.equal(400)
    expect(tooLong.extra.params?.end).to.match(/at most 731/)
    const early = problem(() => resolveFeedRange(undefined, '2026-01-01', '2026-11-22', 731))
    expect(early.extra.params).to.deep.equal({ end: 'end must not be before start, which for a calendar feed defaults to 30 days before today (2026-10-23).' })
    expect(problem(() => resolveFeedRange(undefined, undefined, '2026-11-22', 100)).extra.params).to.have.property('start')
  })
})
