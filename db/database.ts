// Kysely types for exactly the tables of PLUGIN_TABLES.md, keyed by their
// unprefixed names; connect.ts applies the site's prefix. DATE, DATETIME and
// TIME columns arrive as strings (mysql2 dateStrings): they are site wall-clock
// values, and the zero date must survive as '0000-00-00 00:00:00'.
import type { ColumnType, Kysely } from 'kysely'

type ReadOnly<T> = ColumnType<T, never, never>

/** {prefix}posts (WordPress core); a service is a row with post_type = 'bc_service'. */
export interface PostsTable {
  ID: ReadOnly<number>
  post_type: ReadOnly<string>
  /** Non-ASCII slugs are stored percent-encoded in lower case; trashed posts end in `__trashed`. */
  post_name: ReadOnly<string>
  post_title: ReadOnly<string>
  post_status: ReadOnly<string>
}

/** {prefix}options (WordPress core): timezone_string and gmt_offset. */
export interface OptionsTable {
  option_name: ReadOnly<string>
  option_value: ReadOnly<string>
}

/** {prefix}booking_calendar_bookings. */
export interface BookingsTable {
  id: ReadOnly<number>
  service_id: ReadOnly<number>
  /** pending, booked, reject, completed, expired; legacy rows differ in case, carry trailing spaces, or hold other values. */
  status: ReadOnly<string>
  booking_date: ReadOnly<string>
  /** NULL for a whole-day booking. */
  time_from: ReadOnly<string | null>
  /** Less than time_from: past midnight. 24:00:00: end of day. NULL with a time_from: unknown. */
  time_to: ReadOnly<string | null>
  customer_name: ReadOnly<string>
  customer_email: ReadOnly<string>
  customer_phone: ReadOnly<string>
  note: ReadOnly<string | null>
  /** The zero date '0000-00-00 00:00:00' on rows imported from old versions. */
  created_at: ReadOnly<string>
}

/** {prefix}booking_calendar_disabled_times: one rule a row. */
export interface DisabledTimesTable {
  id: ReadOnly<number>
  /** 0 = every service (site-wide). */
  service_id: ReadOnly<number>
  rule_type: ReadOnly<string>
  weekday: ReadOnly<number | null>
  date_from: ReadOnly<string | null>
  date_to: ReadOnly<string | null>
  time_from: ReadOnly<string | null>
  time_to: ReadOnly<string | null>
  note: ReadOnly<string>
  created_at: ReadOnly<string>
}

export interface Database {
  posts: PostsTable
  options: OptionsTable
  booking_calendar_bookings: BookingsTable
  booking_calendar_disabled_times: DisabledTimesTable
}

/** The typed handle every query of db/ is built on (made by db/connect.ts). */
export type Db = Kysely<Database>
