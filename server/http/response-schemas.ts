// The shapes the routes answer with, as zod schemas, for the OpenAPI document
// (server/openapi.ts). The compile-time checks at the end tie each schema to the
// TypeScript type the code builds, so the document cannot drift from the code.
import { z } from 'zod'
import type { BookingRecord } from '../domain/booking-record.ts'
import type { DisabledPeriod } from '../domain/rules.ts'
import type { DisabledTimeAnswer } from '../domain/disabled-time.ts'
import type { SummaryAnswer } from '../domain/summary.ts'
import type { SummaryGroup } from '../domain/summary-sums.ts'
import type { RestErrorCode } from '../errors.ts'
import type { ChangesAnswer } from '../domain/changes.ts'

const isoWithOffset = (description: string) =>
  z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/).meta({ description, examples: ['2026-11-25T09:00:00+01:00'] })

export const customerSchema = z.object({ name: z.string(), email: z.string(), phone: z.string() }).strict()
  .meta({ id: 'Customer', description: 'Who made a booking, as stored.' })

export const bookingSchema = z.object({
  id: z.number().int(),
  service_id: z.number().int(),
  service_slug: z.string().nullable().meta({ description: 'The slug, decoded to Unicode; null when the service post no longer exists.' }),
  status: z.string().meta({ description: 'Trimmed and in lower case; legacy values are passed on as stored.' }),
  booking_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).meta({ description: 'YYYY-MM-DD, as stored: 0000-00-00 for the zero date.' }),
  start: isoWithOffset('ISO 8601 with the site\'s UTC offset on that date.').nullable()
    .meta({ description: 'ISO 8601 with the site\'s UTC offset on that date; 00:00 of the day for a whole-day booking. null only when booking_date is the zero date, which has no instant.' }),
  end: isoWithOffset('ISO 8601 with the site\'s UTC offset on that date.').nullable()
    .meta({ description: 'The same form; the next day\'s 00:00 for a whole-day booking. null when the stored end is NULL, or when booking_date is the zero date.' }),
  all_day: z.boolean(),
  created_date: isoWithOffset('When the booking was made; null for the zero date.').nullable(),
  customer: customerSchema.nullable()
    .meta({ description: 'For an authenticated caller; null in AUTH_MODE=none unless EXPOSE_CUSTOMER_DATA=true.' }),
  note: z.string().nullable(),
}).strict().meta({ id: 'Booking', description: 'A booking (API.md, "GET slots/").' })

/**
 * A booking cut by `_fields`: any of Booking's fields with Booking's types,
 * nothing else; `customer.email` keeps one field of customer. OpenAPI cannot
 * tie a schema to `_fields`, and `_fields=nope` gives `{}` as in WordPress, so
 * nothing is required here. Answers without `_fields` match Booking itself.
 */
export const bookingFieldsSchema = bookingSchema.extend({
  customer: customerSchema.partial().strict().nullable()
    .meta({ description: 'All three fields with _fields=customer; only those named with customer.name, customer.email, customer.phone.' }),
}).partial().strict()
  .meta({ id: 'BookingFields', description: 'A booking with only the fields `_fields` named.' })

const bookingOrFields = z.union([bookingSchema, bookingFieldsSchema])

export const slotsAnswerSchema = z.object({
  booked_slots: z.union([
    z.record(z.string().regex(/^\d+$/), z.array(bookingOrFields)).meta({ description: 'Grouped by service ID, keys in ascending numeric order.' }),
    z.array(bookingOrFields).meta({ description: 'With flat: the bookings in booking order.' }),
  ]),
  total: z.number().int().min(0).meta({ description: 'The bookings that match, over all pages.' }),
}).strict().meta({ id: 'SlotsAnswer' })

export const disabledPeriodSchema = z.object({
  rule_id: z.number().int(),
  service_id: z.number().int().nullable().meta({ description: 'null for a site-wide rule.' }),
  service_slug: z.string().nullable(),
  type: z.enum(['weekly', 'date']),
  start: isoWithOffset('Where the period starts, cut to the range.'),
  end: isoWithOffset('Where it ends, cut to the range.'),
  all_day: z.boolean(),
  note: z.string(),
}).strict().meta({ id: 'DisabledPeriod', description: 'A disabled period (API.md, "GET disabled-time/").' })

export const disabledPeriodFieldsSchema = disabledPeriodSchema.partial().strict()
  .meta({ id: 'DisabledPeriodFields', description: 'A period with only the fields `_fields` named.' })

export const disabledTimeAnswerSchema = z.object({
  disabled_times: z.array(z.union([disabledPeriodSchema, disabledPeriodFieldsSchema])),
  start: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  end: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  timezone: z.string().meta({ description: 'The IANA name, +05:45 for a fixed offset, or UTC.' }),
  total: z.number().int().min(0),
}).strict().meta({ id: 'DisabledTimeAnswer' })

const summaryMeasures = {
  bookings: z.number().int().min(0).meta({ description: 'The bookings slots/ gives for the same filter, cut to the group.' }),
  all_day_bookings: z.number().int().min(0).meta({ description: 'Of those, the whole-day ones.' }),
  booked_minutes: z.number().min(0).meta({ description: 'Wall-clock minutes booked, counted on the booking_date; a whole-day booking counts its day\'s open minutes.' }),
  blocked_minutes: z.number().min(0).meta({ description: 'Of booked_minutes, those of bookings whose status takes time (blocking; default pending, booked, completed, as availability/\'s).' }),
  open_minutes: z.number().min(0).nullable().meta({ description: 'Minutes not covered by disabled periods, over the group\'s services and days; null with filter_by=created_date or status in group_by.' }),
  occupancy: z.number().min(0).nullable().meta({ description: 'blocked_minutes / open_minutes to 4 decimals; null when open_minutes is 0 or null; above 1 where bookings overlap.' }),
}

export const summaryGroupSchema = z.object({
  period_start: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().meta({ description: 'With a period: its first day, cut to the range.' }),
  period_end: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().meta({ description: 'With a period: its last day, inclusive, cut to the range.' }),
  service_id: z.number().int().optional(),
  service_slug: z.string().nullable().optional().meta({ description: 'As in a booking; null when the service post no longer exists.' }),
  status: z.string().optional().meta({ description: 'Trimmed, lower case; legacy values too.' }),
  ...summaryMeasures,
}).strict().meta({ id: 'SummaryGroup', description: 'A group of GET summary/: the keys of its dimensions, then the measures.' })

export const summaryTotalsSchema = z.object(summaryMeasures).strict().meta({ id: 'SummaryTotals', description: 'The measures over everything the groups cover.' })

export const summaryAnswerSchema = z.object({
  groups: z.array(z.union([summaryGroupSchema, summaryGroupSchema.partial().strict()])),
  totals: z.union([summaryTotalsSchema, summaryTotalsSchema.partial().strict()]),
  start: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  end: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  timezone: z.string().meta({ description: 'The IANA name, +05:45 for a fixed offset, or UTC.' }),
  group_by: z.array(z.enum(['day', 'week', 'month', 'year', 'service', 'status'])).meta({ description: 'The period first, then service, then status.' }),
  filter_by: z.enum(['booking_date', 'created_date']),
  blocking: z.array(z.string()).meta({ description: 'The statuses whose bookings count in blocked_minutes and occupancy.' }),
}).strict().meta({ id: 'SummaryAnswer' })

export const freeItemSchema = z.object({
  service_id: z.number().int(),
  service_slug: z.string().nullable().meta({ description: 'The slug, decoded to Unicode.' }),
  start: z.string().meta({ description: 'ISO 8601 with the site\'s UTC offset on that date.' }),
  end: z.string().meta({ description: 'ISO 8601 with offset: the window\'s end, or start + duration on the wall clock.' }),
  minutes: z.number().optional().meta({ description: 'Windows only: wall-clock minutes, as summary/ counts them.' }),
}).strict().meta({ id: 'FreeItem', description: 'A free window of a service (without duration), or a bookable start time (with duration).' })

export const availabilityAnswerSchema = z.object({
  free: z.array(z.union([freeItemSchema, freeItemSchema.partial().strict()])),
  start: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  end: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  timezone: z.string().meta({ description: 'The IANA name, +05:45 for a fixed offset, or UTC.' }),
  blocking: z.array(z.string()).meta({ description: 'The statuses whose bookings took time.' }),
  duration: z.number().int().optional(),
  step: z.number().int().optional(),
}).strict().meta({ id: 'AvailabilityAnswer' })

/**
 * Every `rest_…` code the service sends, for WP_Error's examples (docs/api.md's Errors table
 * lists the same, checked by npm run check-docs). A code added to RestErrorCode and not here
 * does not compile.
 */
const REST_ERROR_CODES = Object.keys({
  rest_invalid_param: true, rest_invalid_page_number: true, rest_bad_request: true, rest_not_logged_in: true, rest_forbidden: true,
  rest_no_route: true, rest_service_not_found: true, rest_request_timeout: true, rest_uri_too_long: true, rest_headers_too_large: true,
  rest_internal_error: true, rest_database_unavailable: true, rest_auth_unavailable: true, rest_service_stopping: true,
  rest_metrics_unavailable: true, rest_query_timeout: true, rest_changes_token_expired: true,
} satisfies Record<Extract<RestErrorCode, `rest_${string}`>, true>)

export const restErrorSchema = z.object({
  code: z.string().meta({
    description: 'One of these, or with 401 in AUTH_MODE=wordpress the code WordPress gave (incorrect_password, …).',
    examples: REST_ERROR_CODES,
  }),
  message: z.string().meta({ description: 'A sentence a person can act on.' }),
  data: z.object({
    status: z.number().int(),
    params: z.record(z.string(), z.string()).optional().meta({ description: 'With rest_invalid_param: a sentence per bad parameter.' }),
    details: z.record(z.string(), z.object({ code: z.string(), message: z.string(), data: z.null() }).strict()).optional()
      .meta({ description: 'With rest_invalid_param, as WordPress 5.5+ sends it: per bad parameter, the same sentence as an error.' }),
  }).strict(),
}).strict().meta({ id: 'WP_Error', description: 'WordPress\'s error shape.' })

export const namespaceIndexSchema = z.object({
  namespace: z.literal('booking-calendar/v1'),
  routes: z.record(z.string(), z.object({
    namespace: z.string(),
    methods: z.array(z.string()),
    endpoints: z.array(z.object({ methods: z.array(z.string()), args: z.record(z.string(), z.object({}).passthrough()) })),
  })),
}).strict().meta({ id: 'NamespaceIndex', description: 'What WordPress answers for GET /wp-json/{namespace}.' })

export const rootIndexSchema = z.object({
  name: z.string().meta({ description: 'The site\'s title (blogname).' }),
  description: z.string().meta({ description: 'The site\'s tagline (blogdescription).' }),
  url: z.string().meta({ description: 'The site\'s siteurl option; the service\'s public address when the site has none.' }),
  home: z.string().meta({ description: 'The site\'s home option; the service\'s public address when the site has none.' }),
  gmt_offset: z.number(),
  timezone_string: z.string(),
  namespaces: z.array(z.literal('booking-calendar/v1')),
  authentication: z.record(z.string(), z.unknown()).meta({ description: 'AUTH_MODE wordpress: where application passwords are authorised, as WordPress says it.' }),
  routes: z.record(z.string(), z.object({
    namespace: z.string(),
    methods: z.array(z.string()),
    endpoints: z.array(z.object({ methods: z.array(z.string()), args: z.record(z.string(), z.object({}).passthrough()) })),
    _links: z.object({}).passthrough().optional(),
  })),
}).strict().meta({ id: 'RootIndex', description: 'What WordPress answers for GET /wp-json/: the site, its namespaces (this one) and their routes.' })

export const changesAnswerSchema = z.object({
  changes: z.array(z.union([
    z.object({ op: z.literal('upsert'), id: z.number().int(), booking: bookingSchema }).strict()
      .meta({ description: 'The booking as slots/ shows it to this caller, now matching the filters.' }),
    z.object({ op: z.literal('delete'), id: z.number().int() }).strict()
      .meta({ description: 'Deleted, or no longer matching the filters. Ignore a delete of an id you do not hold.' }),
    z.object({
      op: z.literal('replace'),
      start: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
      end: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
      bookings: z.array(bookingSchema),
    }).strict().meta({ description: 'The digest source: every matching booking of the booking_date days start to end, replacing all you hold for them.' }),
  ])).meta({ description: 'In commit order; a booking at most once per page.' }),
  more: z.boolean().meta({ description: 'true: ask for next now, the same delta goes on. false: next is the token to keep for the next sync.' }),
  next: z.string().meta({ description: 'The token for since.' }),
}).strict().meta({ id: 'ChangesAnswer', description: 'API.md, "GET changes/".' })

// The code's types and the documented shapes are the same, or this does not compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const bookingIsDocumented: Same<z.output<typeof bookingSchema>, BookingRecord> = true
const periodIsDocumented: Same<z.output<typeof disabledPeriodSchema>, DisabledPeriod> = true
const answerIsDocumented: Same<Omit<z.output<typeof disabledTimeAnswerSchema>, 'disabled_times'>, Omit<DisabledTimeAnswer, 'disabled_times'>> = true
const summaryGroupIsDocumented: Same<z.output<typeof summaryGroupSchema>, SummaryGroup> = true
const summaryIsDocumented: Same<Omit<z.output<typeof summaryAnswerSchema>, 'groups' | 'totals'>, Omit<SummaryAnswer, 'groups' | 'totals'>> = true
const changesIsDocumented: Same<z.output<typeof changesAnswerSchema>, ChangesAnswer> = true
void [changesIsDocumented, bookingIsDocumented, periodIsDocumented, answerIsDocumented, summaryGroupIsDocumented, summaryIsDocumented]
