// The one door for scripts/ (the bench, `npm run indexes`) into db/ and server/:
// the statements the service sends, compiled as it compiles them, and the pieces
// that build them. .dependency-cruiser.cjs (scripts-through-tools) keeps it the
// only one. It lives in server/ because db/ may not import the domain.
import type { CompiledQuery } from 'kysely'
import type { Db } from '../db/connect.ts'
import type { BookingFilter, BookingOrder } from '../db/booking-filter.ts'
import { compileBookings, EVERY_COLUMN, type BookingColumns, type BookingRow } from '../db/booking-queries.ts'
import { statementsForTools as summaryStatements } from '../db/summary.ts'
import { statementsForTools as rulesStatements } from '../db/disabled-times.ts'
import { statementsForTools as servicesStatements } from '../db/services.ts'

export type { Database } from '../db/database.ts'
export type { Db } from '../db/connect.ts'
export type { BookingFilter, BookingOrder } from '../db/booking-filter.ts'
export type { BookingColumns, BookingRow } from '../db/booking-queries.ts'
export type { RuleRow } from '../db/disabled-times.ts'
export { TablePrefixPlugin } from '../db/connect.ts'
export { settledTarget, type MysqlTarget } from '../db/connection-options.ts'
export { readBookingIndexes } from '../db/booking-indexes.ts'
export { DEFAULT_STREAM_CONNECTIONS } from '../db/stream-gate.ts'
export { takeRowPackets } from '../db/row-packets.ts'
export { crc32, rowPacketCrcs } from '../db/row-digest.ts'
export { parseServerVersion, rowsInTableOrder } from '../db/server-dialect.ts'
export { readVisibleLogPosition } from '../db/binlog-requirements.ts'
export { compileBookingsPage, compileCountQuery, compileBookingsDayDigests, compileBookingsOfPeriod, bookingsDigestHalves } from '../db/booking-queries.ts'
export { periodKindOf, periodOfDay, periodRange } from './domain/change-days.ts'
export { bookingFilter } from './domain/slots.ts'
export { splitByBookingDate } from './domain/summary-split.ts'
export { addDays, daysInclusive } from './domain/day-arithmetic.ts'
export { WallClock } from './domain/wall-clock.ts'
export { expandRules, periodFields, readRule, type ValidRule } from './domain/rules.ts'
export { createAppServer } from './http/app-server.ts'

/** The SQL the service streams for these bookings (no limit), for EXPLAIN and the bench's raw timings. */
export function compileBookingsQuery(db: Db, filter: BookingFilter, order: BookingOrder, columns: BookingColumns = EVERY_COLUMN, joinSlug = true): CompiledQuery<BookingRow> {
  return compileBookings(db, filter, order, columns, undefined, joinSlug)
}

export const { compileSummaryQuery } = summaryStatements
export const { compileRulesQuery } = rulesStatements
export const { compileAllServicesQuery } = servicesStatements
