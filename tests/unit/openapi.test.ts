// openapi.json (issue 6): a valid OpenAPI 3.1 document, generated from the
// schemas the routes validate with, and the committed file is what the code builds.
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { Validator } from '@seriousme/openapi-schema-validator'
import { buildOpenApiDocument } from '../../server/openapi.ts'
import { ROUTES } from '../../server/routes/index.ts'
import { BOOKING_FIELDS } from '../../server/domain/records.ts'
import { contractProblem } from '../support/request.ts'

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
      expect(names, route.path).to.deep.equal(route.params ? Object.keys(route.params.shape) : [])
    }
  })

  it('takes each parameter\'s values from its schema: enums, bounds, defaults', () => {
    const param = (name: string) => doc.paths['/slots']!.get.parameters!.find((p) => p.name === name)!.schema
    expect(param('status')).to.deep.equal({ type: 'array', items: { type: 'string', enum: ['pending', 'booked', 'reject', 'completed', 'expired'] } })
    expect(param('per_page')).to.deep.equal({ type: 'integer', minimum: 1, maximum: 1000 })
    expect(param('format')).to.deep.equal({ type: 'string', enum: ['json', 'csv', 'ics'], default: 'json' })
    expect(param('flat')).to.deep.equal({ type: 'boolean', default: false })
  })

  it('describes a booking with every field API.md names, all required, nothing else', () => {
    const booking = doc.components.schemas.Booking!
    expect(booking.required).to.deep.equal([...BOOKING_FIELDS])
    expect(Object.keys(booking.properties!)).to.deep.equal([...BOOKING_FIELDS])
    expect(doc.components.schemas.DisabledPeriod!.required).to.deep.equal(['rule_id', 'service_id', 'service_slug', 'type', 'start', 'end', 'all_day', 'note'])
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
