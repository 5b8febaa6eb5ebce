// What a measurement added to npm run bench receives (scripts/bench/run.ts).
// A hook is `async (ctx: BenchContext) => string[]`: it runs after the indexed
// phase's loads, while both services, WordPress and the database are up, and
// returns the Markdown lines it wants in the results file (run.ts prints and
// writes them). Loopback only; bound every load in time (ctx.seconds).

export interface ReaderDb {
  host: string
  port: number
  user: string
  password: string
  database: string
}

export interface Load {
  /** Whole 2xx answers per second. */
  rps: number
  /** Latency in ms; NaN where the tool cannot measure it (autocannon against php -S). */
  p50: number
  p99: number
  failures: number
  /** What the failures were: status codes other than 2xx, errors, time-outs; empty when none. */
  failureKinds?: string
}

export interface Serial {
  /** One request at a time, timed with process.hrtime from the request to the last byte, in ms. */
  p50: number
  p99: number
  mean: number
  requests: number
}

export interface BenchContext {
  /** The service (server/main.ts, WORKERS as configured), customer data hidden: http://127.0.0.1:<port>. */
  serviceUrl: string
  /** A second service on the same database with EXPOSE_CUSTOMER_DATA=true. */
  serviceShowingCustomersUrl: string
  /** WordPress under php -S; the competitor's routes are under /wp-json/booking-calendar-bench/v1/. */
  wordpressUrl: string
  /** The SELECT-only account the services use, for raw-SQL floors. */
  readerDb: ReaderDb
  /** Runs SQL as the database's administrator (e.g. EXPLAIN, or a setting for the run). */
  adminQuery(sql: string): Promise<unknown>
  /** The size of this run's data set (100,000 or 1,000,000 bookings). */
  bookings: number
  /** Seconds per load. */
  seconds: number
  /** Concurrent connections of the bench's loads. */
  connections: number
  /** Prints a line to the terminal only. */
  say(line?: string): void
  /** Prints a line and writes it to the results file (use for Markdown tables and verdicts). */
  table(...lines: string[]): void
  /** autocannon from a second process: req/s of whole 2xx answers, latency. */
  load(url: string, connections: number, seconds: number): Load
  /** Sub-millisecond serial timings of a URL for `seconds`. */
  serial(url: string, seconds: number): Promise<Serial>
  /** A target line: what was measured against the target, with the verdict. */
  verdict(label: string, measured: number, target: number, unit: '×' | 'ms' | 'rows/s' | 'MB' | '%', better: 'higher' | 'lower'): string
}
