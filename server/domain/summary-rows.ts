// The rows of a summary (db/summary.ts, one per day, service and status) as
// columns of numbers, filled as the rows arrive: nothing of a row outlives its
// packet but its numbers (scripts/bench/README.md, eighteenth pass).
import { addParsedSummaryRow, type SummaryRow, type SummaryRowSink } from '../../db/summary.ts'
import { dayToMs } from './day-arithmetic.ts'

export class SummaryRows implements SummaryRowSink {
  length = 0
  /** The row's day as dayToMs gives it: NaN for a text that is no date. */
  dayMs = new Float64Array(1024)
  serviceId = new Float64Array(1024)
  /** The row's stored status, as an index into `statuses`. */
  status = new Float64Array(1024)
  /** The day of the row's whole-day bookings, as dayToMs gives it; NaN when it has none. */
  wholeDayMs = new Float64Array(1024)
  bookings = new Float64Array(1024)
  allDayBookings = new Float64Array(1024)
  bookedSeconds = new Float64Array(1024)
  /** Each status met, as stored (null when the rows are not grouped by status), in the order met. */
  readonly statuses: Array<string | null> = []
  readonly #statusIndexes = new Map<string | null, number>()

  /** Rows given as objects (tests, and answers made without the database). */
  static of(rows: readonly SummaryRow[]): SummaryRows {
    const columns = new SummaryRows()
    for (const row of rows) addParsedSummaryRow(columns, row)
    return columns
  }

  add(day: string, serviceId: number, status: string | null, wholeDayDate: string | null, bookings: number, allDayBookings: number, bookedSeconds: number): void {
    if (this.length === this.dayMs.length) this.#grow()
    const row = this.length++
    this.dayMs[row] = dayToMs(day)
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
  }
}
