import { expect } from 'chai'
import { z } from 'zod'
import { DATE_PARAM_PATTERN, collectQuery, dateParam, decodedPairName, describeParams, nameListParam, nestedParameterName, parameterName, parseParams, startNotAfterEnd, whenValid } from '../../server/http/params.ts'
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
    expect(parseParams(slotsParams, {})).to.deep.equal({ filter_by: 'booking_date', flat: false, bom: false, format: 'json' })
  })

  const statuses: [Record<string, unknown>, string[]][] = [
    [{ status: 'booked' }, ['booked']],
    [{ status: ' Booked , PENDING ' }, ['booked', 'pending']],
    [{ 'status[]': ['booked', 'reject'] }, ['booked', 'reject']],
    [{ status: ['booked', 'expired'] }, ['booked', 'expired']],
    [{ status: 'booked,,booked' }, ['booked']],
    [{ 'status[0]': 'booked', 'status[1]': 'pending' }, ['booked', 'pending']],
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

  it('takes start alone, end alone, and start on the same day as end (start_not_after_end)', () => {
    const ranges: [Record<string, string>, [string | undefined, string | undefined]][] = [
      [{ start: '2026-12-01' }, ['2026-12-01', undefined]],
      [{ end: '2026-11-30' }, [undefined, '2026-11-30']],
      [{ start: '2026-11-30', end: '30.11.2026' }, ['2026-11-30', '2026-11-30']],
      [{ start: '2026-11-29', end: '2026-11-30' }, ['2026-11-29', '2026-11-30']],
    ]
    for (const [query, expected] of ranges) {
      const params = parseParams(slotsParams, query)
      expect([params.start, params.end], JSON.stringify(query)).to.deep.equal(expected)
    }
  })

  it('takes format in any letter case', () => {
    expect(parseParams(slotsParams, { format: 'CSV' }).format).to.equal('csv')
  })

  it('takes per_page from 1 to 1000, and any page from 1', () => {
    expect(parseParams(slotsParams, { per_page: '1', page: '1' })).to.include({ per_page: 1, page: 1 })
    expect(parseParams(slotsParams, { per_page: '1000', page: '9007199254740991' })).to.include({ per_page: 1000, page: 9007199254740991 })
  })

  it('takes a service ID or slug, trimmed', () => {
    expect(parseParams(slotsParams, { service: ' haircut ' }).service).to.equal('haircut')
  })

  it('names a raw pair of a query string as the query parser does, and folds name[] into name', () => {
    const names = ['page=1', '%70age=2', 'a+b=1', 'x', '=1', '%E0%A4%A=1', 'c%3Dd=e=f'].map(decodedPairName)
    expect(names).to.deep.equal(['page', 'page', 'a b', 'x', '', '%E0%A4%A', 'c=d'])
    const folded = ['page[]', 'page[0]', 'page', 'page[', '[]', 'a[b]c', 'a[b][c]'].map(parameterName)
    expect(folded).to.deep.equal(['page', 'page', 'page', 'page[', '[]', 'a[b]c', 'a[b][c]'])
  })

  it('reads an empty status or _fields as not given, as WordPress reads an empty list', () => {
    for (const empty of ['', ' , ', ',']) {
      const parsed = parseParams(slotsParams, { status: empty, '_fields[]': empty })
      expect([parsed.status, parsed._fields], JSON.stringify(empty)).to.deep.equal([undefined, undefined])
    }
    expect(parseParams(slotsParams, { status: ', booked,' }).status).to.deep.equal(['booked'])
  })

  it('takes _fields as a list without repeats', () => {
    expect(parseParams(slotsParams, { _fields: 'id, start ,id', '_fields[]': 'customer.email' })._fields)
      .to.deep.equal(['id', 'start', 'customer.email'])
  })

  const refusals: [string, Record<string, unknown>, Record<string, string>][] = [
    ['an unknown status', { status: 'booked,maybe' }, { status: 'status must be one or more of pending, booked, reject, completed, expired, comma-separated (got "maybe").' }],
    ['31.02.2026', { start: '31.02.2026' }, { start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }],
    ['2026-2-3', { end: '2026-2-3' }, { end: 'end must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }],
    ['13/13/2026', { start: '13/13/2026' }, { start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }],
    ['0999-12-31', { start: '0999-12-31' }, { start: 'start must be 1000-01-01 or later: years before 1000 are outside the database\'s dates.' }],
    ['31/12/0999', { end: '31/12/0999' }, { end: 'end must be 1000-01-01 or later: years before 1000 are outside the database\'s dates.' }],
    ['30.02.1000 (no such day, in year 1000 itself: the day is what to change)', { start: '30.02.1000' }, { start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }],
    ['31.02.0999 (no such day either: the form is right, the year is what to change)', { start: '31.02.0999' }, { start: 'start must be 1000-01-01 or later: years before 1000 are outside the database\'s dates.' }],
    ['start after end', { start: '2026-12-01', end: '2026-11-30' }, { start: 'start must not be after end (2026-12-01 is after 2026-11-30).' }],
    ['start given twice', { start: ['2026-01-01', '2026-01-02'] }, { start: 'start must be given only once.' }],
    ['flat=yes', { flat: 'yes' }, { flat: 'flat must be true or false (1, true, 0 or false).' }],
    ['filter_by=created', { filter_by: 'created' }, { filter_by: 'filter_by must be one of: booking_date, created_date.' }],
    ['filter_by in another letter case (WordPress enums are exact)', { filter_by: 'Created_Date' }, { filter_by: 'filter_by must be one of: booking_date, created_date.' }],
    ['two unknown statuses', { status: 'maybe,Perhaps' }, { status: 'status must be one or more of pending, booked, reject, completed, expired, comma-separated (got "maybe", "perhaps").' }],
    ['service given twice', { service: ['a', 'b'] }, { service: 'service must be given only once.' }],
    ['per_page=0', { per_page: '0' }, { per_page: 'per_page must be a whole number from 1 to 1000.' }],
    ['per_page=1001', { per_page: '1001' }, { per_page: 'per_page must be a whole number from 1 to 1000.' }],
    ['per_page=2.5', { per_page: '2.5' }, { per_page: 'per_page must be a whole number from 1 to 1000.' }],
    ['page=0', { page: '0', per_page: '10' }, { page: 'page must be a whole number of at least 1.' }],
    ['page alone', { page: '2' }, { page: 'page needs per_page: give per_page (1 to 1000) to page through the bookings.' }],
    ['a page number too large for the service', { page: '99999999999999999999', per_page: '10' }, { page: 'page must be a whole number from 1 to 9007199254740991.' }],
    ['a page of 2.5', { page: '2.5', per_page: '10' }, { page: 'page must be a whole number of at least 1.' }],
    // Not a whole number as written, though Number() reads it as the largest page: what to change is its form.
    ['a page of 9007199254740991.0', { page: '9007199254740991.0', per_page: '10' }, { page: 'page must be a whole number of at least 1.' }],
    ['a bad start beside page without per_page: every problem at once', { start: 'x', page: '2' }, {
      start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.', page: 'page needs per_page: give per_page (1 to 1000) to page through the bookings.',
    }],
    ['start after end beside a bad flat', { start: '2026-12-01', end: '2026-11-30', flat: 'yes' }, {
      start: 'start must not be after end (2026-12-01 is after 2026-11-30).', flat: 'flat must be true or false (1, true, 0 or false).',
    }],
    ['a bad end: no start-after-end check on it', { start: '2026-12-01', end: '2026-13-01' }, { end: 'end must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }],
    ['a bad per_page beside page: no page-needs-per_page check', { page: '2', per_page: '0' }, { per_page: 'per_page must be a whole number from 1 to 1000.' }],
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

  it('says what the namespace index and the OpenAPI document show of each parameter', () => {
    const statuses = ['pending', 'booked', 'reject', 'completed', 'expired']
    const described = describeParams(slotsParams)
    expect(Object.fromEntries(Object.entries(described).map(([name, { description: _d, ...rest }]) => [name, rest]))).to.deep.equal({
      status: { type: 'array', items: { type: 'string', enum: statuses } },
      service: { type: 'string' },
      start: { type: 'string', pattern: DATE_PARAM_PATTERN },
      end: { type: 'string', pattern: DATE_PARAM_PATTERN },
      filter_by: { type: 'string', enum: ['booking_date', 'created_date'], default: 'booking_date' },
      flat: { type: 'boolean', default: false },
      bom: { type: 'boolean', default: false },
      page: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      per_page: { type: 'integer', minimum: 1, maximum: 1000 },
      _fields: { type: 'array', items: { type: 'string' } },
      format: { type: 'string', enum: ['json', 'csv', 'ics'], default: 'json', caseInsensitive: true },
    })
    expect(described.start!.description).to.equal('The first day, inclusive: DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.')
  })

  it('describes dates with a pattern that takes exactly the three forms', () => {
    const pattern = new RegExp(DATE_PARAM_PATTERN)
    for (const text of ['2026-11-01', '01.11.2026', '01/11/2026']) expect(pattern.test(text), text).to.equal(true)
    for (const text of ['01.11/2026', '2026-1-1', 'x2026-11-01', '2026-11-01x']) expect(pattern.test(text), text).to.equal(false)
  })
})

describe('collectQuery: the query as lists of strings', () => {
  const cases: [Record<string, unknown>, Record<string, string[]>][] = [
    [{ status: 'booked' }, { status: ['booked'] }],
    [{ 'status[]': ['booked', 'pending'] }, { status: ['booked', 'pending'] }],
    [{ 'status[0]': 'booked', 'status[1]': 'reject', status: 'pending' }, { status: ['booked', 'reject', 'pending'] }],
    [{ 'a[b]c[]': 'x' }, { 'a[b]c[]': ['x'] }],
    [{ 'status[0]x': 'x' }, { 'status[0]x': ['x'] }],
    [{ '[0]': 'x' }, { '[0]': ['x'] }],
    // Nested brackets are left out (parseParams refuses them for a parameter of the route).
    [{ 'status[x][y]': 'x', 'status[][]': 'y', status: 'z' }, { status: ['z'] }],
    [{ a: ['x', { nested: 'y' }, 5] }, { a: ['x'] }],
    [{ a: { nested: 'y' } }, { a: [] }],
    // Names of Object.prototype's members are parameters like any other (they once gave a 500).
    [{ toString: '1', constructor: ['a', 'b'], 'hasOwnProperty[]': 'x' }, { toString: ['1'], constructor: ['a', 'b'], hasOwnProperty: ['x'] }],
    [JSON.parse('{"__proto__": "1", "valueOf[]": "2"}') as Record<string, unknown>, JSON.parse('{"__proto__": ["1"], "valueOf": ["2"]}') as Record<string, string[]>],
  ]
  for (const [query, expected] of cases) {
    it(`${JSON.stringify(query)} gives ${JSON.stringify(expected)}`, () => expect(collectQuery(query)).to.deep.equal(expected))
  }
})

describe('parseParams: problems as WordPress reports them', () => {
  function problems(schema: z.ZodObject, query: Record<string, unknown>): Record<string, string> {
    try {
      parseParams(schema, query)
    } catch (error) {
      return (error as RestError).extra.params!
    }
    throw new Error('expected a refusal')
  }

  it('refuses a parameter of the route in nested brackets, beside the other problems, and ignores other names in them', () => {
    expect(problems(slotsParams, { 'service[x][y]': 'haircut', start: 'x' })).to.deep.equal({
      service: 'service must be given as service=…, not in nested brackets (service[…][…]).',
      start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.',
    })
    expect(problems(slotsParams, { 'status[][]': 'pending', status: 'booked' })).to.have.keys(['status'])
    expect(parseParams(slotsParams, { 'other[a][b]': '1', 'constructor[a][b]': '1', 'a[b]c[d]': '1' }).service).to.equal(undefined)
    expect(['a[b][c]', 'a[][]', 'a[b][c][d]', 'a[b]', 'a[b]c[d]', '[a][b]', '[x]y[a][b]', 'a[b][c]d', 'a[b][c]d]', 'a'].map(nestedParameterName))
      .to.deep.equal(['a', 'a', 'a', undefined, undefined, undefined, undefined, undefined, undefined, undefined])
  })

  it('a check across parameters (whenValid) still runs beside a problem that names no parameter', () => {
    const schema = z.object({ start: dateParam('start', 'The first day.'), end: dateParam('end', 'The last day.') })
      .superRefine((_value, ctx) => ctx.addIssue({ code: 'custom', message: 'Something is off.' }))
      .superRefine(startNotAfterEnd, whenValid('start', 'end'))
    expect(problems(schema, { start: '2026-12-01', end: '2026-11-30' })).to.deep.equal({
      query: 'Something is off.', start: 'start must not be after end (2026-12-01 is after 2026-11-30).',
    })
  })

  it('a parameter named "undefined", given plainly, is not one in nested brackets', () => {
    const schema = z.object({ undefined: nameListParam('Odd, but a name like any other.') })
    expect(parseParams(schema, { undefined: 'a,b' })).to.deep.equal({ undefined: ['a', 'b'] })
    expect(problems(schema, { 'undefined[a][b]': 'x' })).to.deep.equal({ undefined: 'undefined must be given as undefined=…, not in nested brackets (undefined[…][…]).' })
  })

  it('gives a generic sentence for a problem zod found by itself, and names the query for one without a parameter', () => {
    expect(problems(z.object({ n: z.array(z.number()) }), { n: 'x' })).to.deep.equal({ n: 'n is not valid.' })
    const whole = z.object({}).superRefine((_value, ctx) => ctx.addIssue({ code: 'custom', message: 'Something is off.' }))
    expect(problems(whole, {})).to.deep.equal({ query: 'Something is off.' })
  })
})
