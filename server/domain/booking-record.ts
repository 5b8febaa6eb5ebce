// Database rows in, the JSON records of API.md out. Pure: no database, no clock.
import type { BookingRow } from '../../db/booking-queries.ts'
import { DAY_SECONDS } from './day-arithmetic.ts'
import { remember } from './remember.ts'
import type { WallClock } from './wall-clock.ts'

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

export interface BookingMapping {
  clock: WallClock
  exposeCustomer: boolean
  slugOf: (postName: string | null) => string | null
}

/** API.md, "GET slots/", a booking: one row in, one record out. */
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
export function statusOf(stored: string): string {
  return remember(statuses, 1000, stored, normalStatus)
}

function normalStatus(stored: string): string {
  return stored.trim().toLowerCase()
}
