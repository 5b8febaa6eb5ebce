import { expect } from 'chai'
import { parseParams } from '../../server/http/params.ts'
import { slotsParams } from '../../server/routes/slots.ts'
import { RestError } from '../../server/errors.ts'

function refusal(query: Record<string, unknown>): Record<string, string> {
  try {
    parseParams(slotsParams, query)
  } catch (error) {
    expect(error).to.be.instanceOf(RestError)
    expect((error as RestError).code).to.equal('rest_invalid_param')
    return (error as RestError).extra.params!
  }
  throw new Error('expected a refusal')
}

describe('slots/ parameters', () => {
  it('has defaults for every parameter', () => {
    expect(parseParams(slotsParams, {})).to.deep.equal({ filter_by: 'booking_date', flat: false, format: 'json' })
  })

  const statuses: [Record<string, unknown>, string[]][] = [
    [{ status: 'booked' }, ['booked']],
    [{ status: ' Booked , PENDING ' }, ['booked', 'pending']],
    [{ 'status[]': ['booked', 'reject'] }, ['booked', 'reject']],
    [{ status: ['booked', 'expired'] }, ['booked', 'expired']],
    [{ status: 'booked,,booked' }, ['booked']],
  ]
  for (const [query, expected] of statuses) {
    it(`status list form ${JSON.stringify(query)}`, () => {
      expect(parseParams(slotsParams, query).status).to.deep.equal(expected)
    })
  }

  const flats: [Record<string, unknown>, boolean][] = [
    [{ flat: '' }, true], [{ flat: '1' }, true], [{ flat: 'TRUE' }, true], [{ flat: 'True' }, true],
    [{ flat: '0' }, false], [{ flat: 'false' }, false], [{ flat: 'FALSE' }, false], [{}, false],
  ]
  for (const [query, expected] of flats) {
    it(`flat ${JSON.stringify(query)} is ${expected}`, () => expect(parseParams(slotsParams, query).flat).to.equal(expected))
  }

  it('reads the three date forms', () => {
    const params = parseParams(slotsParams, { start: '01.11.2026', end: '30/11/2026' })
    expect([params.start, params.end]).to.deep.equal(['2026-11-01', '2026-11-30'])
  })

  it('takes format in any letter case', () => {
    expect(parseParams(slotsParams, { format: 'CSV' }).format).to.equal('csv')
  })

  const refusals: [string, Record<string, unknown>, Record<string, string>][] = [
    ['an unknown status', { status: 'booked,maybe' }, { status: 'status must be one or more of pending, booked, reject, completed, expired, comma-separated (got "maybe").' }],
    ['an empty status', { status: '' }, { status: 'status must be one or more of pending, booked, reject, completed, expired, comma-separated.' }],
    ['31.02.2026', { start: '31.02.2026' }, { start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }],
    ['2026-2-3', { end: '2026-2-3' }, { end: 'end must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }],
    ['13/13/2026', { start: '13/13/2026' }, { start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }],
    ['start after end', { start: '2026-12-01', end: '2026-11-30' }, { start: 'start must not be after end (2026-12-01 is after 2026-11-30).' }],
    ['start given twice', { start: ['2026-01-01', '2026-01-02'] }, { start: 'start must be given only once.' }],
    ['flat=yes', { flat: 'yes' }, { flat: 'flat must be true or false (1, true, 0 or false).' }],
    ['filter_by=created', { filter_by: 'created' }, { filter_by: 'filter_by must be one of: booking_date, created_date.' }],
    ['per_page=0', { per_page: '0' }, { per_page: 'per_page must be a whole number from 1 to 1000.' }],
    ['per_page=1001', { per_page: '1001' }, { per_page: 'per_page must be a whole number from 1 to 1000.' }],
    ['per_page=2.5', { per_page: '2.5' }, { per_page: 'per_page must be a whole number from 1 to 1000.' }],
    ['page=0', { page: '0', per_page: '10' }, { page: 'page must be a whole number of at least 1.' }],
    ['page alone', { page: '2' }, { page: 'page needs per_page: give per_page (1 to 1000) to page through the bookings.' }],
    ['format=xml', { format: 'xml' }, { format: 'format must be one of: json, csv, ics.' }],
    ['an empty service', { service: ' ' }, { service: 'service must be a service ID or slug.' }],
    ['several at once', { start: 'x', flat: 'maybe' }, {
      start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.', flat: 'flat must be true or false (1, true, 0 or false).',
    }],
  ]
  for (const [name, query, expected] of refusals) {
    it(`refuses ${name} with a sentence naming the parameter`, () => expect(refusal(query)).to.deep.equal(expected))
  }

  it('ignores unknown parameters, as WordPress does', () => {
    expect(parseParams(slotsParams, { colour: 'blue', _embed: '1' }).flat).to.equal(false)
  })
})
