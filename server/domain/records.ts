// Database rows in, the JSON records of API.md out. Pure: no database, no clock.
import type { BookingRow } from '../../db/bookings.ts'
import { DAY_SECONDS } from './day-arithmetic.ts'
import { remember } from './remember.ts'
import { type WallClock } from './wall-clock.ts'

export interface BookingRecord {
  id: number
  service_id: number
  service_slug: string | null
  status: string
  booking_date: string
  start: string | null
  end: string | null
  all_day: boolean
  created_date: string | null
  customer: { name: string; email: string; phone: string } | null
  note: string | null
}

/** The fields of a booking, in API.md's order (also the CSV column order). */
export const BOOKING_FIELDS = [
  'id', 'service_id', 'service_slug', 'status', 'booking_date', 'start', 'end', 'all_day', 'created_date', 'customer', 'note',
] as const

const TRASHED_SUFFIX = '__trashed'

/**
 * A stored post_name as the slug a person typed: WordPress stores non-ASCII
 * slugs percent-encoded, and appends `__trashed` when a post goes to the trash.
 */
export function decodeSlug(postName: string): string {
  const name = postName.endsWith(TRASHED_SUFFIX) ? postName.slice(0, -TRASHED_SUFFIX.length) : postName
  try {
    return decodeURIComponent(name)
  } catch {
    // A stray "%" that is no escape: the stored text is the best answer.
    return name
  }
}

/**
 * The forms a `service` slug may be stored in: as given, and lower-cased then
 * percent-encoded in lower case the way WordPress's sanitize_title() stores
 * non-ASCII slugs (`стрижка` → `%d1%81%d1%82…`). ASCII characters stay as they are.
 */
export function storedSlugForms(slug: string): string[] {
  const lower = slug.toLowerCase()
  let encoded = ''
  for (const char of lower) {
    if (char.charCodeAt(0) < 0x80) {
      encoded += char
    } else {
      for (const byte of Buffer.from(char, 'utf8')) encoded += `%${byte.toString(16).padStart(2, '0')}`
    }
  }
  return [...new Set([slug, encoded])]
}

/** decodeSlug, remembered per post_name: a million bookings name at most a few hundred services. */
export function createSlugDecoder(): (postName: string | null) => string | null {
  const cache = new Map<string, string>()
  return (postName) => (postName === null ? null : remember(cache, 10_000, postName, decodeSlug))
}

export interface BookingMapping {
  clock: WallClock
  exposeCustomer: boolean
  slugOf: (postName: string | null) => string | null
}

/** API.md, "A booking": one row in, one record out. */
export function toBookingRecord(row: BookingRow, { clock, exposeCustomer, slugOf }: BookingMapping): BookingRecord {
  const day = clock.day(row.booking_date)
  const from = row.time_from === null ? NaN : clock.timeSeconds(row.time_from)
  // A whole-day booking (and, defensively, a start no TIME parser can read) runs 00:00 to the next 00:00.
  const allDay = row.time_from === null
  let start: string | null = null
  let end: string | null = null
  if (day !== null) {
    if (Number.isNaN(from)) {
      start = clock.isoOfDay(day, 0)
      end = clock.isoOfDay(day, DAY_SECONDS)
    } else {
      start = clock.isoOfDay(day, from)
      const to = row.time_to === null ? NaN : clock.timeSeconds(row.time_to)
      if (!Number.isNaN(to)) {
        // An end before the start runs past midnight; 24:00:00 is the next day's 00:00 by arithmetic.
        end = clock.isoOfDay(day, to < from ? DAY_SECONDS + to : to)
      }
    }
  }
  return {
    id: row.id,
    service_id: row.service_id,
    service_slug: row.service_post_name === null ? null : slugOf(row.service_post_name),
    status: statusOf(row.status),
    booking_date: row.booking_date,
    start,
    end,
    all_day: allDay,
    created_date: clock.isoDateTime(row.created_at) ?? null,
    customer: exposeCustomer ? { name: row.customer_name, email: row.customer_email, phone: row.customer_phone } : null,
    note: row.note,
  }
}

const statuses = new Map<string, string>()
/** A stored status as API.md spells it: trimmed, lower-case (a handful of values, each made once). */
function statusOf(stored: string): string {
  return remember(statuses, 1000, stored, normalStatus)
}

function normalStatus(stored: string): string {
  return stored.trim().toLowerCase()
}

/**
 * WordPress's `_fields`: keeps only the named fields of a record, in the
 * record's own order. `customer.email` keeps one field of a nested object, as
 * rest_filter_response_fields() does. Unknown names are ignored.
 */
export function pickFields<T extends object>(record: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields) return record
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(record)) {
    if (fields.includes(key)) {
      out[key] = value
      continue
    }
    const nested = fields.filter((field) => field.startsWith(`${key}.`)).map((field) => field.slice(key.length + 1))
    if (nested.length > 0) out[key] = value !== null && typeof value === 'object' ? pickFields(value as object, nested) : value
  }
  return out as Partial<T>
}
