// The OpenAPI 3.1 document of the namespace, generated from the zod schemas the
// routes validate their parameters with (server/routes/*.ts) and the shapes they
// answer with (server/http/response-schemas.ts). `npm run openapi` writes it to
// openapi.json; GET /openapi.json serves it; tests check both against the code.
import { packageVersion } from './http/service-version.ts'
import { z } from 'zod'
import { ROUTES, NAMESPACE } from './routes/index.ts'
import {
  availabilityAnswerSchema, changesAnswerSchema, disabledTimeAnswerSchema, namespaceIndexSchema, restErrorSchema, rootIndexSchema, slotsAnswerSchema, summaryAnswerSchema,
} from './http/response-schemas.ts'

type JsonSchema = Record<string, unknown>

const REF = (id: string) => ({ $ref: `#/components/schemas/${id}` })

/**
 * A parameter's JSON Schema. zod sees what the query parser hands it (a list of
 * strings); the `.meta()` of each parameter says what a client sends, so it
 * replaces what zod derived.
 */
function parameterSchema(field: z.ZodType): JsonSchema {
  return z.toJSONSchema(field, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      const meta: JsonSchema | undefined = z.globalRegistry.get(ctx.zodSchema)
      if (!meta || typeof meta.type !== 'string') return
      for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as JsonSchema)[key]
      Object.assign(ctx.jsonSchema, asSent(meta))
    },
  })
}

/** A pattern matching these words in any letter case: JSON Schema patterns take no `i` flag. */
function anyCase(words: readonly string[]): string {
  return words.map((word) => word.replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`)).join('|')
}

/**
 * What a client may send for a parameter, exactly as the service accepts it:
 * booleans as 1, true, 0, false in any case or empty; words of a list in any
 * case with spaces around them; `format` in any case. The namespace index keeps
 * WordPress's plain types; this is for validators such as Prism's.
 */
function asSent(meta: JsonSchema): JsonSchema {
  const { caseInsensitive, ...rest } = meta
  if (rest.type === 'boolean') {
    // A boolean for a generated client (openapi-typescript makes `flat?: boolean | string`, and
    // openapi-fetch writes `flat=true`), or the words as a query string holds them, for validators
    // such as Prism's that read every query value as a string. anyOf, not oneOf: `true` is both.
    const { type: _boolean, description, default: fallback, ...others } = rest
    return {
      ...others, description, default: fallback,
      anyOf: [{ type: 'boolean' }, { type: 'string', pattern: `^(?:|0|1|${anyCase(['true', 'false'])})$` }],
    }
  }
  const items = rest.items as { enum?: string[] } | undefined
  if (rest.type === 'array' && items?.enum) {
    return { ...rest, items: { type: 'string', pattern: `^\\s*(?:(?:${anyCase(items.enum)})\\s*)?$`, examples: items.enum } }
  }
  if (caseInsensitive && Array.isArray(rest.enum)) {
    const { enum: words, ...others } = rest
    return { ...others, pattern: `^(?:${anyCase(words as string[])})$`, examples: words }
  }
  return rest
}

function parameters(schema: z.ZodObject | undefined) {
  return [...routeParameters(schema), ENVELOPE_PARAMETER]
}

function routeParameters(schema: z.ZodObject | undefined) {
  if (!schema) return []
  return Object.entries(schema.shape).map(([name, field]) => {
    const { $schema: _ignored, description, ...fieldSchema } = parameterSchema(field as z.ZodType)
    return {
      name, in: 'query', required: false, description,
      schema: fieldSchema,
      // Lists are comma-separated (status=pending,booked); name[]=a&name[]=b works too.
      ...(fieldSchema.type === 'array' ? { style: 'form', explode: false } : {}),
      // ?flat alone means true, as in WordPress.
      ...((field as z.ZodType).meta()?.type === 'boolean' ? { allowEmptyValue: true } : {}),
    }
  })
}

/**
 * WordPress's `_envelope` global parameter (server/http/envelope.ts): every route of the
 * namespace takes it, so it is added to each rather than to the routes' schemas.
 */
const ENVELOPE_PARAMETER = {
  name: '_envelope', in: 'query', required: false, allowEmptyValue: true,
  description: 'WordPress\'s envelope: present with any value or none, a JSON answer (errors included) is sent with status 200 as {"body":…,"status":…,"headers":{…}}, ' +
    'its X-WP-Total, X-WP-TotalPages, Link, Allow and Retry-After moved into headers. CSV, iCalendar, HTML and HEAD answers are sent as they are. The answers below are described without it.',
  schema: { type: 'string' },
}

/** Every named schema (`.meta({ id })`) as components. */
function componentSchemas(): Record<string, JsonSchema> {
  const all = z.toJSONSchema(z.globalRegistry, {
    io: 'output', target: 'draft-2020-12', uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, JsonSchema> }
  const out: Record<string, JsonSchema> = {}
  for (const [id, schema] of Object.entries(all.schemas)) {
    const { $schema: _ignored, $id: _id, ...rest } = schema
    out[id] = rest
  }
  return out
}

const error = (description: string) => ({ description, content: { 'application/json': { schema: REF('WP_Error') } } })
const header = (description: string, type: 'integer' | 'string') => ({ description, schema: { type } })

/** The body of format=ics (API.md, "Calendar feeds: format=ics"). */
const ICALENDAR = {
  schema: { type: 'string', description: 'iCalendar (RFC 5545), UTF-8: one VCALENDAR, one VEVENT per booking or period; lines folded at 75 octets, CRLF.' },
}

/** The document's security, plus access_token for the feeds (format=ics) and CSV exports (format=csv). */
const FEED_SECURITY = [{}, { applicationPassword: [] }, { apiToken: [] }, { feedToken: [] }]

const ERRORS = {
  400: error('A parameter is not valid (rest_invalid_param, with a sentence per parameter), or rest_invalid_page_number.'),
  401: error('No credentials, or credentials WordPress or API_TOKENS does not accept (AUTH_MODE wordpress or token).'),
  403: error('Good credentials without the capability AUTH_CAPABILITY names.'),
  404: error('rest_service_not_found: no service has this ID or slug.'),
  500: error('rest_internal_error: a fixed sentence; the details are in the log.'),
  503: error('rest_database_unavailable, rest_auth_unavailable, or rest_service_stopping (the service stopped before it could answer), with Retry-After.'),
  504: error('rest_query_timeout: the query ran longer than QUERY_TIMEOUT_MS (or the database hung) and was cancelled; with Retry-After.'),
}

const site = { default: 'http://localhost:8080', description: 'The site\'s address, or the service\'s own.' }

/**
 * The document as served to one request: each server's `site` defaults to the
 * address the client used (publicBaseUrl: PUBLIC_URL, else its scheme and
 * host), as every other absolute URL the service writes (API.md, "Links and
 * addresses"); the file `npm run openapi` writes keeps http://localhost:8080.
 */
export function withSiteAddress(document: Record<string, unknown>, address: string): Record<string, unknown> {
  const servers = document.servers as Array<{ variables: { site: typeof site } }>
  return { ...document, servers: servers.map((server) => ({ ...server, variables: { site: { ...server.variables.site, default: address } } })) }
}

/**
 * The groups of the docs page (API.md, "GET docs"): what a person comes for.
 * Each operation is in one group, so it is listed once; Feeds has no operation
 * of its own (a feed is slots/ or disabled-time/ with format=ics), only its text.
 */
const TAG = {
  bookings: 'Bookings',
  disabledTimes: 'Disabled times',
  reports: 'Reports',
  feeds: 'Feeds',
  about: 'About the API',
} as const

const TAGS = [
  { name: TAG.bookings, description: 'The booked slots in every status, as JSON (grouped by service, or flat) or CSV, paged or whole.' },
  { name: TAG.disabledTimes, description: 'Non-working hours and days off, expanded into periods of the range.' },
  { name: TAG.reports, description: 'Counts, sums and occupancy by period, service and status (summary/); free windows and bookable start times (availability/). JSON or CSV.' },
  {
    name: TAG.feeds,
    description: 'Calendar feeds for calendar apps (Google Calendar, Apple Calendar, Outlook, Thunderbird): '
      + '[GET slots/](#/Bookings/getSlots) and [GET disabled-time/](#/Disabled%20times/getDisabledTime) with `format=ics` answer iCalendar (RFC 5545). '
      + 'Subscribe to the feed\'s URL, as `https://` or `webcal://`; in token mode put the token in it as `access_token=`, since a calendar app sends no header.',
  },
  { name: TAG.about, description: 'The namespace index, as WordPress lists routes; this document as OpenAPI; this page.' },
]

/**
 * The opening paragraph of the docs page and of a generated client: who may
 * call and in which formats the answers come (API.md, "Access", "Spreadsheets and BI tools").
 */
const ACCESS_AND_FORMATS = [
  'Read-only access to a WordPress booking calendar plugin\'s bookings and disabled times, in the WordPress REST API\'s dialect.',
  '',
  '**Access.** The service\'s `AUTH_MODE` says who may call. `none`: anyone. `wordpress`: a WordPress user name and application password '
  + '(HTTP Basic), checked by the site. `token`: `Authorization: Bearer <token>`, one of `API_TOKENS`; tools that cannot send a header '
  + '(calendar apps, Google Sheets\' `IMPORTDATA`) put it in the URL as `access_token=`, which works on `format=ics` and `format=csv` only, never on JSON. '
  + 'To send requests from this page in `wordpress` or `token` mode, give the credentials under **Authorize**.',
  '',
  '**Formats.** JSON by default. `format=csv` (or `Accept: text/csv`): RFC 4180 CSV in UTF-8, `bom=1` for spreadsheets that need a byte-order mark (Excel). '
  + '`format=ics` (or `Accept: text/calendar`) on slots/ and disabled-time/: an iCalendar feed. '
  + 'Without `per_page` a list comes whole, streamed; with it, paged, with `X-WP-Total`, `X-WP-TotalPages` and `Link`. '
  + 'Every answer with data has a weak `ETag`: send it back in `If-None-Match` and an unchanged answer is a `304` without a body. '
  + 'Times are ISO 8601 with the site\'s offset. Errors are WordPress\'s `{ code, message, data: { status } }`.',
  '',
].join('\n')

interface Operation {
  summary: string
  operationId: string
  responses: Record<string | number, unknown>
  [key: string]: unknown
}

/**
 * A path item with GET, HEAD (the same answer without a body, as Express gives
 * it) and OPTIONS (204 with Allow, open in every access mode, as WordPress answers it).
 */
function withHeadAndOptions(get: Operation) {
  const head = {
    ...get,
    summary: `${get.summary} (headers only)`,
    operationId: get.operationId.replace(/^get/, 'head'),
    responses: Object.fromEntries(Object.entries(get.responses).map(([status, response]) => {
      const { content: _body, ...rest } = response as { content?: unknown }
      return [status, rest]
    })),
  }
  const options = {
    summary: 'The methods this route answers',
    operationId: get.operationId.replace(/^get/, 'options'),
    security: [{}],
    responses: { 204: { description: 'No body; Allow lists GET, HEAD, OPTIONS.', headers: { Allow: header('GET, HEAD, OPTIONS', 'string') } } },
  }
  return { get, head, options }
}

export function buildOpenApiDocument(): Record<string, unknown> {
  // Referenced so that their ids are registered before the components are read.
  void [changesAnswerSchema, slotsAnswerSchema, disabledTimeAnswerSchema, restErrorSchema, namespaceIndexSchema, summaryAnswerSchema, availabilityAnswerSchema, rootIndexSchema]
  const version = packageVersion()
  const requestId = header('The request\'s id: the X-Request-Id sent, or a new one. It is in the log line of the request.', 'string')
  const route = (path: string) => ROUTES.find((r) => r.path === path)!
  // API.md, "Conditional requests": every data route's 200 is tagged, and a client holding the tag gets 304.
  const tagHeaders = {
    ETag: header('A weak tag (W/"…") naming the data of the answer; equal tags mean equal data. Send it back in If-None-Match.', 'string'),
    'Cache-Control': header('private, no-cache: a client may keep the answer, and asks again with If-None-Match before using it.', 'string'),
  }
  const notModified = {
    description: 'Not Modified: If-None-Match named the answer\'s current tag (or was *). No body; the ETag, Cache-Control and Vary of the 200.',
    headers: { ...tagHeaders, 'X-Request-Id': requestId },
  }

  const slots = {
    summary: 'Booked slots in every status',
    description: 'Without per_page every matching booking is sent, streamed. With format=csv or Accept: text/csv, the flat list as CSV. ' +
      'With format=ics or Accept: text/calendar, an iCalendar feed (30 days back to a year ahead by default, never paged; access_token in token mode).',
    operationId: 'getSlots',
    tags: [TAG.bookings],
    security: FEED_SECURITY,
    parameters: parameters(route('/slots').params),
    responses: {
      200: {
        description: 'The bookings, grouped by service ID or flat.',
        headers: {
          'X-WP-Total': header('The bookings that match, over all pages.', 'integer'),
          'X-WP-TotalPages': header('With per_page: how many pages.', 'integer'),
          Link: header('With per_page: rel="prev" and rel="next", keeping the other parameters.', 'string'),
          'X-Request-Id': requestId,
          ...tagHeaders,
        },
        content: {
          'application/json': { schema: REF('SlotsAnswer') },
          'text/csv': { schema: { type: 'string', description: 'RFC 4180, UTF-8, one header row; a cell starting =, +, -, @, tab or CR gets a leading \'.' } },
          'text/calendar': ICALENDAR,
        },
      },
      304: notModified,
      ...ERRORS,
    },
  }
  const disabledTime = {
    summary: 'Disabled times: non-working hours and days off, expanded into periods',
    operationId: 'getDisabledTime',
    tags: [TAG.disabledTimes],
    security: FEED_SECURITY,
    parameters: parameters(route('/disabled-time').params),
    responses: {
      200: {
        description: 'The periods of the range.',
        headers: { 'X-Request-Id': requestId, ...tagHeaders },
        content: { 'application/json': { schema: REF('DisabledTimeAnswer') }, 'text/calendar': ICALENDAR },
      },
      304: notModified,
      ...ERRORS,
    },
  }
  const summary = {
    summary: 'Bookings counted and summed by period, service and status, with occupancy',
    description: 'Counts and sums in the database; every combination of the range\'s periods and the services is listed, with zeros where nothing matched. With format=csv or Accept: text/csv, one row per group.',
    operationId: 'getSummary',
    tags: [TAG.reports],
    security: FEED_SECURITY,
    parameters: parameters(route('/summary').params),
    responses: {
      200: {
        description: 'The groups, the totals, and the range they cover.',
        headers: { 'X-Request-Id': requestId, ...tagHeaders },
        content: {
          'application/json': { schema: REF('SummaryAnswer') },
          'text/csv': { schema: { type: 'string', description: 'One row per group: its keys, then the measures; no totals row.' } },
        },
      },
      304: notModified,
      ...ERRORS,
    },
  }
  const availability = {
    summary: 'The free time of each service: free windows, or bookable start times with duration',
    description: 'The range less each service\'s disabled periods (disabled-time/\'s) and the time its blocking bookings take. ' +
      'Without duration, the free windows; with duration (and step), the bookable start times on the site\'s wall clock. Long answers stream. With format=csv or Accept: text/csv, one line per item.',
    operationId: 'getAvailability',
    tags: [TAG.reports],
    security: FEED_SECURITY,
    parameters: parameters(route('/availability').params),
    responses: {
      200: {
        description: 'The free windows or start times, by service then start.',
        headers: { 'X-Request-Id': requestId, ...tagHeaders },
        content: {
          'application/json': { schema: REF('AvailabilityAnswer') },
          'text/csv': { schema: { type: 'string', description: 'One header row, then one line per item.' } },
        },
      },
      304: notModified,
      ...ERRORS,
    },
  }
  const changes = {
    summary: 'What changed since a token: bookings upserted and deleted in commit order, or periods of days replaced',
    description: 'Without since: a new sync, every matching booking as upserts, paged. With since: what changed after that token. '
      + 'Follow next while more is true; keep the last next for the next sync. 410 rest_changes_token_expired: start a new sync.',
    operationId: 'getChanges',
    tags: [TAG.bookings],
    parameters: parameters(route('/changes').params),
    responses: {
      200: {
        description: 'A page of operations, and the token for the next.',
        headers: { 'X-Request-Id': requestId, 'Cache-Control': header('no-store: every answer holds a token.', 'string') },
        content: { 'application/json': { schema: REF('ChangesAnswer') } },
      },
      410: error('rest_changes_token_expired: the token can no longer be served (the log no longer reaches back to it, the site\'s zone, a slug or the service changed). Start a new sync.'),
      ...ERRORS,
    },
  }
  const index = {
    summary: 'The namespace index, as WordPress gives it, with every parameter of each route',
    operationId: 'getNamespaceIndex',
    parameters: parameters(undefined),
    tags: [TAG.about],
    responses: {
      200: { description: 'The routes of the namespace.', content: { 'application/json': { schema: REF('NamespaceIndex') } } },
      401: ERRORS[401], 403: ERRORS[403], 503: ERRORS[503],
    },
  }

  const rootIndex = {
    summary: 'The REST API\'s root index, as WordPress gives it at /wp-json/ (also /?rest_route=/ and the service\'s /)',
    description: 'Open in every access mode, as WordPress\'s is: a client that discovers a site (node-wpapi\'s WPAPI.discover) reads the Link rel="https://api.w.org/" that every answer carries, then this index.',
    operationId: 'getRootIndex',
    tags: [TAG.about],
    security: [{}],
    responses: {
      200: { description: 'The site, this namespace and its routes.', content: { 'application/json': { schema: REF('RootIndex') } } },
      503: ERRORS[503],
    },
  }

  const openApi = {
    summary: 'This document, guarded like the rest of the namespace (also open at /openapi.json)',
    operationId: 'getOpenApi',
    parameters: parameters(undefined),
    tags: [TAG.about],
    responses: {
      200: { description: 'The OpenAPI document.', content: { 'application/json': { schema: { type: 'object' } } } },
      401: ERRORS[401], 403: ERRORS[403], 503: ERRORS[503],
    },
  }

  const docs = {
    summary: 'This reference for people: Swagger UI, rendered in the browser from this document',
    description: 'An HTML page; its script and style are served by the service under docs/ (swagger-ui-dist), with a Content-Security-Policy that allows nothing from elsewhere.',
    operationId: 'getDocs',
    parameters: parameters(undefined),
    tags: [TAG.about],
    responses: {
      200: { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } },
      401: ERRORS[401], 403: ERRORS[403], 503: ERRORS[503],
    },
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'booking-calendar-api',
      version,
      description: `${ACCESS_AND_FORMATS}\n`
        + `Sites without pretty permalinks use the form {site}/?rest_route=/${NAMESPACE}/slots&per_page=10 too, which is not among the servers: `
        + 'the path goes into rest_route and the other parameters follow with &, which a client built from this document cannot do.',
    },
    servers: [
      { url: `{site}/wp-json/${NAMESPACE}`, description: 'WordPress\'s address form.', variables: { site } },
      { url: `{site}/${NAMESPACE}`, description: 'The short form, on the service\'s own address.', variables: { site } },
      // Not {site}/?rest_route=/<namespace>: a server URL with a query string breaks every call with parameters
      // in a generated client (openapi-fetch asked `?rest_route=/booking-calendar/v1/slots?start=...` and got 404).
    ],
    tags: TAGS,
    // AUTH_MODE decides which one applies: none (no credentials), wordpress (basic) or token (bearer).
    security: [{}, { applicationPassword: [] }, { apiToken: [] }],
    paths: {
      '/': withHeadAndOptions(index),
      '/slots': withHeadAndOptions(slots),
      '/disabled-time': withHeadAndOptions(disabledTime),
      '/summary': withHeadAndOptions(summary),
      '/availability': withHeadAndOptions(availability),
      '/changes': withHeadAndOptions(changes),
      '/openapi.json': withHeadAndOptions(openApi),
      '/docs': withHeadAndOptions(docs),
      // A trailing slash is the same route (as in WordPress); a Path Item $ref keeps one definition.
      '/slots/': { $ref: '#/paths/~1slots' },
      '/disabled-time/': { $ref: '#/paths/~1disabled-time' },
      '/summary/': { $ref: '#/paths/~1summary' },
      '/availability/': { $ref: '#/paths/~1availability' },
      '/changes/': { $ref: '#/paths/~1changes' },
      '/openapi.json/': { $ref: '#/paths/~1openapi.json' },
      '/docs/': { $ref: '#/paths/~1docs' },
      // Outside the namespace: at the site's address, not under the servers' prefixes.
      '/wp-json/': { servers: [{ url: '{site}', description: 'The site\'s address, or the service\'s own.', variables: { site } }], ...withHeadAndOptions(rootIndex) },
    },
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        applicationPassword: { type: 'http', scheme: 'basic', description: 'AUTH_MODE=wordpress: a WordPress user name and application password, checked by the site.' },
        apiToken: { type: 'http', scheme: 'bearer', description: 'AUTH_MODE=token: one of API_TOKENS.' },
        feedToken: {
          type: 'apiKey', in: 'query', name: 'access_token',
          description: 'AUTH_MODE=token, with format=ics (slots, disabled-time) or format=csv (slots, summary, availability) in the query only: one of API_TOKENS in the query string, for calendar apps and spreadsheets that import a URL (RFC 6750, 2.3).',
        },
      },
    },
  }
}
