// openapi.json: a valid OpenAPI 3.1 document, generated from the
// schemas the routes validate with, and the committed file is what the code builds.
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { Validator } from '@seriousme/openapi-schema-validator'
import { buildOpenApiDocument } from '../../server/openapi.ts'
import { ROUTES } from '../../server/routes/index.ts'
import { BOOKING_FIELDS } from '../../server/domain/booking-record.ts'
import { contractProblem, requestProblem } from '../support/request.ts'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { RECORDS } from '../fixtures/site.ts'

type Doc = {
  openapi: string
  paths: Record<string, { get: { parameters?: { name: string; schema: Record<string, unknown> }[]; responses: Record<string, unknown> } }>
  components: { schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }>; securitySchemes: Record<string, unknown> }
}

describe('openapi.json', () => {
  const doc = buildOpenApiDocument() as unknown as Doc

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(doc))
    expect(result.errors ?? []).to.deep.equal([])
    expect(result.valid).to.equal(true)
    expect(validator.version).to.equal('3.1')
  })

  it('is committed as the code builds it (npm run openapi writes it)', () => {
    const committed = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'))
    expect(committed).to.deep.equal(JSON.parse(JSON.stringify(doc)))
  })

  it('describes every route with every parameter its schema validates', () => {
    for (const route of ROUTES) {
      const operation = doc.paths[route.path]?.get
      expect(operation, route.path).to.not.equal(undefined)
      const names = (operation!.parameters ?? []).map((p) => p.name)
      expect(names, route.path).to.deep.equal([...route.params ? Object.keys(route.params.shape) : [], '_envelope'])
    }
  })

  it('lists _envelope on every JSON route, and every rest_ code among WP_Error\'s', () => {
    for (const path of ['/', '/slots', '/disabled-time', '/summary', '/availability', '/openapi.json']) {
      expect(doc.paths[path]!.get.parameters!.map((p) => p.name), path).to.include('_envelope')
    }
    const code = doc.components.schemas.WP_Error!.properties!.code as { examples: string[] }
    expect(code.examples).to.include.members(['rest_metrics_unavailable', 'rest_service_stopping', 'rest_request_timeout', 'rest_invalid_param'])
  })

  it('takes each parameter\'s values from its schema: enums, bounds, defaults', () => {
    const param = (name: string) => doc.paths['/slots']!.get.parameters!.find((p) => p.name === name)!.schema
    expect(param('status')).to.deep.include({ type: 'array' })
    expect(param('per_page')).to.deep.equal({ type: 'integer', minimum: 1, maximum: 1000 })
    expect(param('filter_by')).to.deep.equal({ type: 'string', enum: ['booking_date', 'created_date'], default: 'booking_date' })
    expect(param('format')).to.deep.include({ type: 'string', default: 'json', examples: ['json', 'csv', 'ics'] })
    expect(param('flat')).to.deep.include({ default: false })
    expect(param('flat').anyOf).to.deep.include({ type: 'boolean' })
  })

  // Prism refused these valid requests when the document said boolean and exact enums.
  it('accepts in each parameter what the service accepts, and refuses what it refuses', () => {
    const ajv = new Ajv2020({ strict: false })
    const param = (name: string) => ajv.compile(doc.paths['/slots']!.get.parameters!.find((p) => p.name === name)!.schema)
    const cases: [string, string[], string[]][] = [
      ['flat', ['', '1', '0', 'true', 'TRUE', 'False'], ['yes', '2', 'truee']],
      ['format', ['json', 'CSV', 'Json'], ['xml', 'csv ', '']],
      ['filter_by', ['booking_date', 'created_date'], ['Created_Date']],
      ['start', ['2026-11-01', '01.11.2026', '01/11/2026'], ['01.11/2026', '2026-1-1', '1.11.2026']],
    ]
    for (const [name, good, bad] of cases) {
      const validate = param(name)
      for (const value of good) expect(validate(value), `${name}=${value}`).to.equal(true)
      for (const value of bad) expect(validate(value), `${name}=${value}`).to.equal(false)
    }
    const status = param('status')
    expect(status(['Pending', ' booked', 'REJECT '])).to.equal(true)
    expect(status(['pending', 'maybe'])).to.equal(false)
  })

  it('checks requests as a validating proxy would: Prism\'s refusals of valid requests pass, bad values do not', () => {
    const slots = '/wp-json/booking-calendar/v1/slots'
    for (const query of ['flat=1', 'flat=TRUE', 'flat=0', 'flat', 'status=Pending', 'status=pending,%20booked', 'format=CSV', 'start=01.11.2026&end=30/11/2026&per_page=1000']) {
      expect(requestProblem('GET', `${slots}?${query}`), query).to.equal(undefined)
      expect(requestProblem('GET', `/?rest_route=/booking-calendar/v1/slots/&${query}`), query).to.equal(undefined)
    }
    expect(requestProblem('GET', `${slots}?flat=yes`)).to.match(/openapi\.json refuses flat=yes/)
    expect(requestProblem('GET', `${slots}?per_page=1001`)).to.match(/openapi\.json refuses per_page=1001/)
    expect(requestProblem('GET', `${slots}?status=booked,maybe`)).to.match(/openapi\.json refuses status=booked,maybe/)
  })

  it('lists GET, HEAD and OPTIONS for every path, openapi.json under the prefixes, and the two address forms a client can build on', () => {
    const full = doc as unknown as { paths: Record<string, Record<string, { operationId: string }>>; servers: { url: string }[] }
    for (const path of ['/', '/slots', '/disabled-time', '/summary', '/availability', '/openapi.json', '/docs']) {
      expect(Object.keys(full.paths[path]!), path).to.deep.equal(['get', 'head', 'options'])
    }
    expect(full.paths['/slots']!.head!.operationId).to.equal('headSlots')
    // Trailing slashes are the same routes.
    expect(full.paths['/slots/']).to.deep.equal({ $ref: '#/paths/~1slots' })
    expect(full.paths['/disabled-time/']).to.deep.equal({ $ref: '#/paths/~1disabled-time' })
    expect(full.paths['/openapi.json/']).to.deep.equal({ $ref: '#/paths/~1openapi.json' })
    expect(full.paths['/docs/']).to.deep.equal({ $ref: '#/paths/~1docs' })
    // The ?rest_route= form is described, not a server: a client appends "?<query>" to a server's URL.
    expect(full.servers.map((server) => server.url)).to.deep.equal(['{site}/wp-json/booking-calendar/v1', '{site}/booking-calendar/v1'])
    expect((doc as unknown as { info: { description: string } }).info.description).to.include('{site}/?rest_route=/booking-calendar/v1/slots&per_page=10')
  })

  it('describes a booking with every field API.md names, all required, nothing else', () => {
    const booking = doc.components.schemas.Booking!
    expect(booking.required).to.deep.equal([...BOOKING_FIELDS])
    expect(Object.keys(booking.properties!)).to.deep.equal([...BOOKING_FIELDS])
    expect(doc.components.schemas.DisabledPeriod!.required).to.deep.equal(['rule_id', 'service_id', 'service_slug', 'type', 'start', 'end', 'all_day', 'note'])
  })

  describe('the integration tests\' check of booking records', () => {
    const slots = '/wp-json/booking-calendar/v1/slots'
    const answer = (booked_slots: unknown) =>
      ({ status: 200, body: { booked_slots, total: 1 }, headers: { 'content-type': 'application/json; charset=utf-8' } }) as unknown as Parameters<typeof contractProblem>[2]
    const { status: _status, ...withoutStatus } = RECORDS[101]

    it('passes a whole record without _fields, flat and grouped', () => {
      expect(contractProblem('GET', `${slots}?flat`, answer([RECORDS[101]]))).to.equal(undefined)
      expect(contractProblem('GET', slots, answer({ 12: [RECORDS[101]] }))).to.equal(undefined)
      expect(contractProblem('GET', `/?rest_route=/booking-calendar/v1/slots/&flat`, answer([RECORDS[101]]))).to.equal(undefined)
    })

    it('refuses a record missing status without _fields, flat and grouped, although it is a valid cut record', () => {
      expect(contractProblem('GET', `${slots}?flat`, answer([withoutStatus]))).to.match(/record 0 has no _fields to cut it, but is not a whole Booking: .*status/)
      expect(contractProblem('GET', `${slots}/`, answer({ 12: [RECORDS[101], withoutStatus] }))).to.match(/record 1 has no _fields to cut it, but is not a whole Booking/)
      expect(contractProblem('GET', `${slots}?flat&_fields=id,service_id,service_slug,booking_date,start,end,all_day,created_date,customer,note`, answer([withoutStatus]))).to.equal(undefined)
    })

    it('refuses an extra key, with _fields or without', () => {
      expect(contractProblem('GET', `${slots}?flat`, answer([{ ...RECORDS[101], colour: 'red' }]))).to.match(/does not match openapi.json/)
      expect(contractProblem('GET', `${slots}?flat&_fields=id`, answer([{ id: 101, colour: 'red' }]))).to.match(/does not match openapi.json/)
      expect(contractProblem('GET', `${slots}?flat&_fields=id,customer.email`, answer([{ id: 101, customer: { email: 'c@example.com', age: 3 } }]))).to.match(/does not match openapi.json/)
    })

    it('passes a _fields=id,customer.email record, and refuses one whose fields have other types', () => {
      expect(contractProblem('GET', `${slots}?flat&_fields=id,customer.email`, answer([{ id: 101, customer: { email: 'c101@example.com' } }]))).to.equal(undefined)
      expect(contractProblem('GET', `${slots}?_fields[]=id&_fields[]=customer.email`, answer({ 12: [{ id: 101, customer: { email: 'c101@example.com' } }] }))).to.equal(undefined)
      expect(contractProblem('GET', `${slots}?flat&_fields=nope`, answer([{}]))).to.equal(undefined)
      expect(contractProblem('GET', `${slots}?flat&_fields=id,customer.email`, answer([{ id: '101', customer: { email: 'c101@example.com' } }]))).to.match(/does not match openapi.json/)
      expect(contractProblem('GET', `${slots}?flat&_fields=customer.email`, answer([{ customer: { email: 7 } }]))).to.match(/does not match openapi.json/)
    })

    it('BookingFields has Booking\'s properties with Booking\'s types, requires none and allows nothing else; its customer is Customer\'s fields, none required', () => {
      type Schema = { required?: string[]; properties?: Record<string, unknown>; additionalProperties?: boolean }
      const schemas = doc.components.schemas as Record<string, Schema>
      const booking = schemas.Booking!
      const fields = schemas.BookingFields!
      expect(fields.required).to.equal(undefined)
      expect(fields.additionalProperties).to.equal(false)
      const { customer: fieldsCustomer, ...fieldsRest } = fields.properties!
      const { customer: _bookingCustomer, ...bookingRest } = booking.properties!
      expect(fieldsRest).to.deep.equal(bookingRest)
      const customer = schemas.Customer!
      expect(customer.required).to.deep.equal(['name', 'email', 'phone'])
      const cut = (fieldsCustomer as { anyOf: Schema[] }).anyOf
      expect(cut[1]).to.deep.equal({ type: 'null' })
      expect(cut[0]!.required).to.equal(undefined)
      expect(cut[0]!.additionalProperties).to.equal(false)
      expect(cut[0]!.properties).to.deep.equal(customer.properties)
    })

    it('says in the document why start may be null, and that it is the only case', () => {
      const start = doc.components.schemas.Booking!.properties!.start as { description: string }
      expect(start.description).to.include('null only when booking_date is the zero date, which has no instant')
    })
  })

  it('describes the error shape for every error status and both security schemes', () => {
    for (const status of ['400', '401', '403', '404', '500', '503', '504']) {
      expect(doc.paths['/slots']!.get.responses[status], status).to.deep.equal({
        description: (doc.paths['/slots']!.get.responses[status] as { description: string }).description,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/WP_Error' } } },
      })
    }
    expect(doc.components.schemas.WP_Error!.required).to.deep.equal(['code', 'message', 'data'])
    expect(Object.keys(doc.components.securitySchemes)).to.deep.equal(['applicationPassword', 'apiToken', 'feedToken'])
  })

  it('the integration tests\' check refuses an undocumented status, an undocumented content type and a body that does not match', () => {
    const answer = (status: number, body: unknown, type = 'application/json; charset=utf-8') =>
      ({ status, body, headers: { 'content-type': type } }) as unknown as Parameters<typeof contractProblem>[2]
    const slots = '/wp-json/booking-calendar/v1/slots'
    expect(contractProblem('GET', slots, answer(418, {}))).to.match(/status 418 is not in openapi.json for \/slots/)
    expect(contractProblem('GET', slots, answer(200, '<p>', 'text/html'))).to.match(/text\/html is not in openapi.json/)
    expect(contractProblem('GET', `${slots}?flat`, answer(200, { booked_slots: [{ id: 'x' }], total: 1 }))).to.match(/does not match openapi.json/)
    expect(contractProblem('GET', '/?rest_route=/booking-calendar/v1/disabled-time', answer(200, { disabled_times: [], total: 0 }))).to.match(/does not match/)
    expect(contractProblem('GET', '/nowhere', answer(404, { code: 'rest_no_route' }))).to.match(/does not match/)
    expect(contractProblem('GET', `${slots}?flat`, answer(200, { booked_slots: [], total: 0 }))).to.equal(undefined)
    expect(contractProblem('GET', slots, answer(200, 'id,service_id\r\n', 'text/csv; charset=utf-8'))).to.equal(undefined)
  })
})
