// The rows of a summary (db/summary.ts, one per day, service and status) as
// columns of numbers, filled as the rows arrive: nothing of a row outlives its
// packet but its numbers (docs/performance.md).
import { addParsedSummaryRow, type SummaryRow, type SummaryRowSink } from '../../db/summary.ts'
import { dayToMs } from './day-arithmetic.ts'

/** Room for this many rows at first. */
const FIRST_ROOM = 1024
/** Columns with room for up to this many rows (3.5 MB) are kept for the next summary (release). */
const MAX_KEPT_ROOM = 65_536

/**
 * The summary whose columns the next one takes (release). A year at a million
 * bookings is about 9,500 rows: columns made anew each time grew four times
 * (7 columns, 1.7 MB allocated, zeroed and copied), and filling them took
 * 1.1 ms instead of 0.3 (docs/performance.md). One per process.
 */
let spare: SummaryRows | undefined

export class SummaryRows implements SummaryRowSink {
  length = 0
  // A spare's columns are taken as they are: only rows up to `length` are ever read.
  /** The row's day as dayToMs gives it: NaN for a text that is no date. */
  dayMs: Float64Array
  serviceId: Float64Array
  /** The row's stored status, as an index into `statuses`. */
  status: Float64Array
  /** The day of the row's whole-day bookings, as dayToMs gives it; NaN when it has none. */
  wholeDayMs: Float64Array
  bookings: Float64Array
  allDayBookings: Float64Array
  bookedSeconds: Float64Array
  /** Of allDayBookings and bookedSeconds, those of bookings whose status blocks (`blocking`). */
  blockedAllDayBookings: Float64Array
  blockedSeconds: Float64Array
  /** Each status met, as stored (null when the rows are not grouped by status), in the order met. */
  readonly statuses: Array<string | null> = []
  readonly #statusIndexes = new Map<string | null, number>()
  // Rows come in the order of their day (the GROUP BY reads the index in it): its text read once per day.
  #lastDay: string | undefined
  #lastDayMs = NaN

  constructor() {
    const from = spare
    spare = undefined
    this.dayMs = from?.dayMs ?? new Float64Array(FIRST_ROOM)
    this.serviceId = from?.serviceId ?? new Float64Array(FIRST_ROOM)
    this.status = from?.status ?? new Float64Array(FIRST_ROOM)
    this.wholeDayMs = from?.wholeDayMs ?? new Float64Array(FIRST_ROOM)
    this.bookings = from?.bookings ?? new Float64Array(FIRST_ROOM)
    this.allDayBookings = from?.allDayBookings ?? new Float64Array(FIRST_ROOM)
    this.bookedSeconds = from?.bookedSeconds ?? new Float64Array(FIRST_ROOM)
    this.blockedAllDayBookings = from?.blockedAllDayBookings ?? new Float64Array(FIRST_ROOM)
    this.blockedSeconds = from?.blockedSeconds ?? new Float64Array(FIRST_ROOM)
  }

  /**
   * Gives the columns to the next summary: call it once the rows have been read
   * for the last time (summarize is done), and read nothing of them afterwards.
   */
  release(): void {
    const room = this.dayMs.length
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- this released object is kept whole as the next one's spare
    if (room <= MAX_KEPT_ROOM && (spare === undefined || spare.dayMs.length < room)) spare = this
    this.length = 0
  }

  /** Rows given as objects (tests, and answers made without the database). */
  static of(rows: readonly SummaryRow[]): SummaryRows {
    const columns = new SummaryRows()
    for (const row of rows) addParsedSummaryRow(columns, row)
    return columns
  }

  add(
    day: string, serviceId: number, status: string | null, wholeDayDate: string | null, bookings: number, allDayBookings: number, bookedSeconds: number,
    blockedAllDayBookings: number, blockedSeconds: number,
  ): void {
    if (this.length === this.dayMs.length) this.#grow()
    const row = this.length++
    // Stryker disable next-line ConditionalExpression: dayToMs gives the same again; this only skips reading the text
    if (day !== this.#lastDay) {
      this.#lastDay = day
      this.#lastDayMs = dayToMs(day)
    }
    this.dayMs[row] = this.#lastDayMs
    this.serviceId[row] = serviceId
    let statusIndex = this.#statusIndexes.get(status)
    if (statusIndex === undefined) {
      statusIndex = this.statuses.push(status) - 1
      this.#statusIndexes.set(status, statusIndex)
    }
    this.status[row] = statusIndex
    this.wholeDayMs[row] = wholeDayDate === null ? NaN : dayToMs(wholeDayDate)
    this.bookings[row] = bookings
    this.allDayBookings[row] = allDayBookings
    this.bookedSeconds[row] = bookedSeconds
    this.blockedAllDayBookings[row] = blockedAllDayBookings
    this.blockedSeconds[row] = blockedSeconds
  }

  /** The services the rows name, each once. */
  serviceIds(): Set<number> {
    const ids = new Set<number>()
    for (let row = 0; row < this.length; row++) ids.add(this.serviceId[row]!)
    return ids
  }

  #grow(): void {
    const doubled = (column: Float64Array) => {
      const grown = new Float64Array(column.length * 2)
      grown.set(column)
      return grown
    }
    this.dayMs = doubled(this.dayMs)
    this.serviceId = doubled(this.serviceId)
    this.status = doubled(this.status)
    this.wholeDayMs = doubled(this.wholeDayMs)
    this.bookings = doubled(this.bookings)
    this.allDayBookings = doubled(this.allDayBookings)
    this.bookedSeconds = doubled(this.bookedSeconds)
    this.blockedAllDayBookings = doubled(this.blockedAllDayBookings)
    this.blockedSeconds = doubled(this.blockedSeconds)
  }
}
