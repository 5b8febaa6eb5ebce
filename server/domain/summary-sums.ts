// summary/'s groups and totals (API.md, "GET summary/"): the rows summed into
// every combination of period, service and status, and occupancy. Pure.
import { DAY_MS, dayToMs, daysInclusive, msToDay } from './day-arithmetic.ts'
import type { SummaryRows } from './summary-rows.ts'
import type { DateRange } from './rules.ts'
import type { OpenMinutes } from './open-minutes.ts'
import type { GroupBy } from './summary-params.ts'
import { periodsOf } from './summary-periods.ts'

export interface SummaryMeasures {
  bookings: number
  all_day_bookings: number
  booked_minutes: number
  /** Of booked_minutes, those of bookings whose status takes time (`blocking`, as availability/'s). */
  blocked_minutes: number
  open_minutes: number | null
  occupancy: number | null
}

/** A group's keys: those of its dimensions only. */
export interface SummaryKeys {
  period_start?: string
  period_end?: string
  service_id?: number
  service_slug?: string | null
  status?: string
}

export type SummaryGroup = SummaryKeys & SummaryMeasures
/** A service of the answer: its ID, and its slug as a booking shows it (null when the post is gone). */
export interface SummaryService {
  id: number
  slug: string | null
}

/** Minutes with at most two decimals (a fraction only where stored times carry seconds). */
function roundMinutes(minutes: number): number {
  return Math.round(minutes * 100) / 100
}

/**
 * booked ÷ open, to 4 decimals, an exact half rounded up; null when open is 0
 * or unknown. Above 1 where bookings overlap. Both are minutes of at most two
 * decimals, so the quotient is taken of whole hundredths, in integers: in
 * floating point 18 / 120000 × 10000 is 1.4999999999999998, and 0.00015 came out 0.0001.
 */
export function occupancyOf(bookedMinutes: number, openMinutes: number | null): number | null {
  if (openMinutes === null || openMinutes === 0) return null
  const booked = Math.round(bookedMinutes * 100) * 10_000
  const open = Math.round(openMinutes * 100)
  // Integers far below 2^53 (a million years of minutes): the floor of their
  // float quotient is the true one, and the remainder is exact.
  const quotient = Math.floor(booked / open)
  const remainder = booked - quotient * open
  return (2 * remainder >= open ? quotient + 1 : quotient) / 10_000
}

export interface SummaryInput {
  groupBy: GroupBy
  range: DateRange
  startOfWeek: number
  /** The services of the answer, ascending by ID: the one named by `service`, or every published one and every one with a matching booking. */
  services: SummaryService[]
  rows: SummaryRows
  /** Open minutes of those services over the range (and, through `on`, on any whole-day booking's day). */
  open: OpenMinutes
  /** Whether open_minutes is given: not with filter_by=created_date nor with status in group_by. */
  withOpenMinutes: boolean
}

/** The groups (every combination, with zeros where nothing matched) and the totals. */
export function summarize(input: SummaryInput): { groups: SummaryGroup[]; totals: SummaryMeasures } {
  const { groupBy, range, services, rows, open, withOpenMinutes } = input
  const periods = periodsOf(range, groupBy.period, input.startOfWeek)
  const offset = daysInclusive(open.span.start, range.start) - 1
  // Status groups only for the statuses that occur (API.md).
  const statuses = groupBy.status ? [...new Set(rows.statuses.map(normalStatus))].sort() : [undefined]
  const serviceDim = groupBy.service ? services : [undefined]
  // Each day of the range: the index of its period.
  const periodOfDay = new Int32Array(daysInclusive(range.start, range.end))
  periods.forEach((period, index) => { for (let day = period.first; day <= period.last; day++) periodOfDay[day] = index })

  // In the order period, service, status, so a row finds its group by arithmetic
  // on the three indexes. Each group is made field by field in the answer's
  // order (every group alike, as V8 likes them), its booked seconds kept apart.
  const groups: SummaryGroup[] = []
  for (const period of periods) {
    for (const service of serviceDim) {
      for (const status of statuses) {
        const group = {} as SummaryGroup
        if (groupBy.period) { group.period_start = period.start; group.period_end = period.end }
        if (service) { group.service_id = service.id; group.service_slug = service.slug }
        if (status !== undefined) group.status = status
        group.bookings = 0
        group.all_day_bookings = 0
        group.booked_minutes = 0
        group.blocked_minutes = 0
        group.open_minutes = withOpenMinutes
          ? roundMinutes((service ? [service] : services).reduce((sum, s) => sum + open.sum(s.id, period.first + offset, period.last + offset), 0))
          : null
        group.occupancy = null
        groups.push(group)
      }
    }
  }
  const bookedSeconds = new Float64Array(groups.length)
  const blockedSeconds = new Float64Array(groups.length)
  const serviceIndexes = new Map(services.map((service, index) => [service.id, index]))
  const statusIndexes = new Map(statuses.map((status, index) => [status, index]))
  // Each stored status of the rows: the index of its group's status.
  const statusOfRows = rows.statuses.map((status) => statusIndexes.get(normalStatus(status)))

  // Per row (thousands for a year): numbers and Map lookups, no string keys built.
  const rangeStartMs = dayToMs(range.start)
  for (let row = 0; row < rows.length; row++) {
    const period = periodOfDay[Math.round((rows.dayMs[row]! - rangeStartMs) / DAY_MS)]
    const serviceId = rows.serviceId[row]!
    const service = groupBy.service ? serviceIndexes.get(serviceId) : 0
    const status = groupBy.status ? statusOfRows[rows.status[row]!] : 0
    // A row outside every period, service or status makes the index NaN, which names no group.
    const index = ((period ?? NaN) * serviceDim.length + (service ?? NaN)) * statuses.length + (status ?? NaN)
    const group = groups[index]
    if (!group) {
      const day = Number.isNaN(rows.dayMs[row]) ? 'a day that is no date' : msToDay(rows.dayMs[row]!)
      throw new Error(`a summary row fell outside every group: ${day} ${serviceId} ${rows.statuses[rows.status[row]!] ?? ''}`)
    }
    const allDayBookings = rows.allDayBookings[row]!
    const blockedAllDay = rows.blockedAllDayBookings[row]!
    group.bookings += rows.bookings[row]!
    group.all_day_bookings += allDayBookings
    bookedSeconds[index] = bookedSeconds[index]! + rows.bookedSeconds[row]!
    blockedSeconds[index] = blockedSeconds[index]! + rows.blockedSeconds[row]!
    // A whole-day booking counts the open minutes of its day for its service.
    if (allDayBookings > 0) {
      const dayOpenSeconds = open.onDay(serviceId, rows.wholeDayMs[row]!) * 60
      bookedSeconds[index] = bookedSeconds[index] + allDayBookings * dayOpenSeconds
      blockedSeconds[index] = blockedSeconds[index] + blockedAllDay * dayOpenSeconds
    }
  }

  const totalsOpen = withOpenMinutes
    ? roundMinutes(services.reduce((sum, s) => sum + open.sum(s.id, offset, offset + daysInclusive(range.start, range.end) - 1), 0))
    : null
  const totals = { bookings: 0, all_day_bookings: 0, booked_seconds: 0, blocked_seconds: 0 }
  groups.forEach((group, index) => {
    totals.bookings += group.bookings
    totals.all_day_bookings += group.all_day_bookings
    totals.booked_seconds += bookedSeconds[index]!
    totals.blocked_seconds += blockedSeconds[index]!
    group.booked_minutes = roundMinutes(bookedSeconds[index]! / 60)
    group.blocked_minutes = roundMinutes(blockedSeconds[index]! / 60)
    // A manager asking how full March was counts only time that was taken (API.md, "GET summary/").
    group.occupancy = occupancyOf(group.blocked_minutes, group.open_minutes)
  })
  const totalBooked = roundMinutes(totals.booked_seconds / 60)
  const totalBlocked = roundMinutes(totals.blocked_seconds / 60)
  return {
    groups,
    totals: {
      bookings: totals.bookings, all_day_bookings: totals.all_day_bookings, booked_minutes: totalBooked, blocked_minutes: totalBlocked,
      open_minutes: totalsOpen, occupancy: occupancyOf(totalBlocked, totalsOpen),
    },
  }
}

function normalStatus(status: string | null): string {
  return (status ?? '').trim().toLowerCase()
}
