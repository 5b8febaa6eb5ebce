// supertest, with every answer checked against openapi.json: the
// status must be one the document lists for the operation, the content type one
// it lists for that status, and a JSON body must match the schema it gives. The
// integration tests import `request` from here, so the document cannot drift
// from what the service really sends.
import supertest from 'supertest'
import type { Response } from 'supertest'
import type { App } from 'supertest/types.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { buildOpenApiDocument } from '../../server/openapi.ts'
import { asksForEnvelope } from '../../server/http/envelope.ts'

interface Parameter { name: string; schema: { type?: string; items?: unknown }; allowEmptyValue?: boolean }
interface Operation { parameters?: Parameter[]; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }
const doc = buildOpenApiDocument() as { paths: Record<string, { get: Operation }>; components: unknown }
const ajv = new Ajv2020({ strict: false, allErrors: false })
ajv.addSchema({ $id: 'openapi', components: doc.components })

const validators = new Map<string, ReturnType<typeof ajv.compile>>()
function validatorFor(schema: unknown): ReturnType<typeof ajv.compile> {
  const key = JSON.stringify(schema)
  let validate = validators.get(key)
  if (!validate) {
    const text = key.replaceAll('"#/components/', '"openapi#/components/')
    validate = ajv.compile(JSON.parse(text) as object)
    validators.set(key, validate)
  }
  return validate
}

const NAMESPACE_PATH = /^(?:\/wp-json)?\/booking-calendar\/v1(\/[^/?]*)?\/?$/i

/** The document's path for a request URL, or undefined outside the namespace. */
export function documentedPath(url: string): string | undefined {
  const parsed = new URL(url, 'http://test')
  const restRoute = parsed.pathname === '/' || parsed.pathname === '/index.php' ? parsed.searchParams.get('rest_route') : null
  const match = NAMESPACE_PATH.exec(restRoute ?? parsed.pathname)
  if (!match) return undefined
  const path = (match[1] ?? '/').toLowerCase()
  return doc.paths[path === '' ? '/' : path] ? path : undefined
}

/**
 * What the document says against a request the service answered with success:
 * each documented parameter given once must match its schema (lists split on
 * commas, as `style: form, explode: false` says). This is what Prism's validating
 * proxy checks; requests the service refuses are not checked, since the document
 * cannot say everything the service refuses (31.02.2026, start after end).
 */
export function requestProblem(method: string, url: string): string | undefined {
  const path = documentedPath(url)
  if (path === undefined) return undefined
  const parsed = new URL(url, 'http://test')
  const operation = doc.paths[path]!.get
  for (const parameter of operation.parameters ?? []) {
    const values = parsed.searchParams.getAll(parameter.name)
    if (values.length !== 1) continue
    const value = values[0]!
    if (value === '' && parameter.allowEmptyValue) continue
    let sent: unknown = value
    if (parameter.schema.type === 'array') sent = value.split(',')
    else if (parameter.schema.type === 'integer' && /^-?\d+$/.test(value)) sent = Number(value)
    const validate = validatorFor(parameter.schema)
    if (!validate(sent)) return `${method} ${url}: the service answered, but openapi.json refuses ${parameter.name}=${value}: ${ajv.errorsText(validate.errors)}`
  }
  return undefined
}

/**
 * An answer WordPress's `_envelope` wrapped (http/envelope.ts), unwrapped: the
 * status, headers and body it stands for, which the document describes.
 */
function unwrapped(url: string, res: Response): Response {
  const body = res.body as { body?: unknown; status?: unknown; headers?: Record<string, string | number> } | undefined
  if (!asksForEnvelope(url) || res.status !== 200 || !body || typeof body.status !== 'number' || !body.headers) return res
  const headers = { ...res.headers }
  for (const [name, value] of Object.entries(body.headers)) headers[name.toLowerCase()] = String(value)
  return { ...res, status: body.status, headers, body: body.body } as Response
}

/** What is wrong with an answer by the document; undefined when nothing is. */
export function contractProblem(method: string, url: string, answer: Response): string | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined
  const res = unwrapped(url, answer)
  if (res.status < 300) {
    const refused = requestProblem(method, url)
    if (refused) return refused
  }
  const path = documentedPath(url)
  const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim()
  let schema: unknown
  if (path !== undefined) {
    const response = doc.paths[path]!.get.responses[String(res.status)]
    if (!response) return `${method} ${url}: status ${res.status} is not in openapi.json for ${path}`
    if (method === 'HEAD') return undefined
    // A 304 has no body (RFC 9110, 15.4.5): its status being documented is all there is to check.
    if (res.status === 304) return res.text ? `${method} ${url}: a 304 with a body` : undefined
    const content = response.content?.[type]
    if (!content) return `${method} ${url}: ${res.status} with ${type} is not in openapi.json for ${path}`
    schema = content.schema
  } else if (res.status >= 400 && type === 'application/json') {
    // Outside the namespace, errors still have WordPress's shape.
    schema = { $ref: '#/components/schemas/WP_Error' }
  } else {
    return undefined
  }
  if (type !== 'application/json') return undefined
  const validate = validatorFor(schema)
  if (!validate(res.body)) return `${method} ${url}: the ${res.status} body does not match openapi.json: ${ajv.errorsText(validate.errors)}`
  return wholeRecordProblem(method, url, path, res)
}

/** The whole-record schema of each route's records, for answers without `_fields`. */
const WHOLE_RECORDS: Record<string, { list: string; schema: string }> = {
  '/slots': { list: 'booked_slots', schema: 'Booking' },
  '/disabled-time': { list: 'disabled_times', schema: 'DisabledPeriod' },
}

/**
 * The document lets a record be whole or cut by `_fields` (anyOf), since OpenAPI
 * cannot tie a schema to a parameter. Without `_fields` the service must send
 * whole records, so each one is checked against the whole schema: a record
 * missing a field fails here although it would pass as a cut one.
 */
function wholeRecordProblem(method: string, url: string, path: string | undefined, res: Response): string | undefined {
  const whole = path === undefined ? undefined : WHOLE_RECORDS[path.replace(/\/$/, '')]
  if (!whole || res.status !== 200) return undefined
  const params = new URL(url, 'http://test').searchParams
  // _fields, _fields[] and _fields[0] all name fields.
  if ([...params.keys()].some((name) => name.startsWith('_fields'))) return undefined
  const list = (res.body as Record<string, unknown>)[whole.list]
  const records = Array.isArray(list) ? list : Object.values(list as Record<string, unknown[]>).flat()
  const validate = validatorFor({ $ref: `#/components/schemas/${whole.schema}` })
  for (const [index, record] of records.entries()) {
    if (!validate(record)) return `${method} ${url}: record ${index} has no _fields to cut it, but is not a whole ${whole.schema}: ${ajv.errorsText(validate.errors)}`
  }
  return undefined
}

type Verb = 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete' | 'options'
type Agent = ReturnType<typeof supertest>

/** supertest(app), with each GET and HEAD answer checked against openapi.json before the test's own expectations. */
export default function request(app: App): Agent {
  const agent = supertest(app)
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown
      if (typeof value !== 'function' || !['get', 'head', 'post', 'put', 'patch', 'delete', 'options'].includes(property as string)) return value
      return (url: string) => (target[property as Verb](url)).expect((res: Response) => {
        const problem = contractProblem((property as string).toUpperCase(), url, res)
        if (problem) throw new Error(problem)
      })
    },
  })
}

/**
 * The `data` of a 400 rest_invalid_param with these sentences: `params`, and
 * `details` as WordPress 5.5+ has it (tests/integration/slots.test.ts spells one out).
 */
export function invalidParamsData(params: Record<string, string>): Record<string, unknown> {
  const details = Object.fromEntries(Object.entries(params).map(([name, message]) => [name, { code: 'rest_invalid_param', message, data: null }]))
  return { status: 400, params, details }
}

/**
 * The paging links of a Link header, without the api.w.org link every answer
 * under the prefixes starts with (http/api-root-link.ts); undefined when there are none.
 */
export function pagingLinksOf(link: unknown): string | undefined {
  if (typeof link !== 'string') return undefined
  const rest = link.replace(/^<[^>]*>; rel="https:\/\/api\.w\.org\/"(?:, )?/, '')
  return rest === '' ? undefined : rest
}
