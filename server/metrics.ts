// GET /metrics in Prometheus's text format (prom-client): requests by route and
// status, their durations, rows streamed, the database pool, and the access
// guard's cache. One registry per app, so tests can build many apps side by side.
// In a cluster worker the answer holds every worker's counts, summed by the
// primary (server/cluster.ts), whichever worker the scrape reached.
import type { ChangesFeed } from './change-source.ts'
import cluster from 'node:cluster'
import type { RequestHandler } from 'express'
import type { DbPools } from '../db/connect.ts'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { bearerToken, sha256, tokenIsOneOf, type Access } from './access.ts'
import { askPrimaryForMetrics, shareMetricsWithPrimary } from './cluster.ts'
import { RestError } from './errors.ts'
import { routeOf, statusSent } from './http/response-locals.ts'
import type { AnswerHolding } from './http/held-answer.ts'

export interface Metrics {
  /** Counts and times every request, by the route that answered it (`res.locals.route`). */
  observe: RequestHandler
  /** Serves the registry, behind METRICS_TOKEN when one is set. */
  serve: RequestHandler
  registry: Registry
}

/** What the short queries' pool holds right now. mysql2's counts are private fields: read defensively. */
function poolCounts(pools: DbPools): { all: number; free: number; waiting: number } {
  const inner = pools.short.raw as unknown as Record<string, { length?: number } | undefined>
  return {
    all: inner._allConnections?.length ?? 0,
    free: inner._freeConnections?.length ?? 0,
    waiting: pools.short.waiting,
  }
}

export function createMetrics(options: { pool: DbPools; access: Access; token: string | undefined; holding?: AnswerHolding; changes?: ChangesFeed }): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  if (cluster.isWorker) shareMetricsWithPrimary(registry)

  const labelNames = ['route', 'method', 'status'] as const
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by route, method and status.', labelNames, registers: [registry] })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the last byte of the answer, by route, method and status.',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  const rows = new Counter({ name: 'booking_calendar_rows_sent_total', help: 'Bookings and disabled times sent, by route.', labelNames: ['route'], registers: [registry] })
  const cuts = new Counter({
    name: 'booking_calendar_answers_cut_total',
    help: 'Streamed answers cut before their end, by reason (database_lost, database_timeout, send_timeout, hold_full).',
    labelNames: ['reason'], registers: [registry],
  })
  const { pool, access } = options
  // changes/'s source (API.md, "GET changes/", Sources); 'max': every worker says the same.
  new Gauge({
    name: 'booking_calendar_changes_source', help: 'The source changes/ reads: 1 with its name (log, digest, waiting, deciding).',
    labelNames: ['source'], aggregator: 'max', registers: [registry],
    collect() {
      this.reset()
      if (options.changes) this.set({ source: options.changes.status().source }, 1)
    },
  })
  new Gauge({
    name: 'booking_calendar_changes_log_connected', help: 'In the log source: 1 while the binary log reader is connected to the database, else 0.',
    aggregator: 'max', registers: [registry],
    collect() {
      const reader = options.changes?.status().reader
      if (reader) this.set(reader.connected ? 1 : 0)
    },
  })
  new Gauge({
    name: 'booking_calendar_db_pool_connections', help: 'Database pool connections, by state (in_use, idle).', labelNames: ['state'], registers: [registry],
    collect() {
      const counts = poolCounts(pool)
      this.set({ state: 'in_use' }, counts.all - counts.free)
      this.set({ state: 'idle' }, counts.free)
    },
  })
  // The server the pools read with SELECT VERSION() on their first connection (db/server-info.ts); none before it.
  // 'max': under WORKERS > 1 every worker says the same, and a sum would read as WORKERS.
  new Gauge({
    name: 'booking_calendar_database_info', help: 'The database server connected to: 1 with its kind (mariadb, mysql) and version.',
    labelNames: ['kind', 'version'], aggregator: 'max', registers: [registry],
    collect() {
      this.reset()
      const server = pool.server()
      if (server) this.set({ kind: server.kind, version: server.version }, 1)
    },
  })
  new Gauge({
    name: 'booking_calendar_db_stream_connections', help: 'Connections held by streamed answers (at most DB_STREAM_CONNECTIONS).', registers: [registry],
    collect() { this.set(pool.stream.inUse) },
  })
  // The line for stream permits (API.md, "Under load"). Each worker counts its own requests; the primary sums them.
  const gate = pool.gate.stats
  new Gauge({
    name: 'booking_calendar_db_queue_length', help: 'Streamed answers waiting in line for a permit of DB_STREAM_CONNECTIONS.', registers: [registry],
    collect() { this.set(gate.waiting) },
  })
  new Gauge({
    name: 'booking_calendar_db_stream_permits_in_use', help: 'Permits of DB_STREAM_CONNECTIONS held by streamed answers (the whole service\'s, summed over the workers).', registers: [registry],
    collect() { this.set(gate.holding) },
  })
  const queueWait = new Histogram({
    name: 'booking_calendar_db_queue_wait_seconds', help: 'Time streamed answers waited in line for a permit, granted or refused.',
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 60], registers: [registry],
  })
  const refusals = new Counter({
    name: 'booking_calendar_db_queue_refusals_total', help: 'Streamed answers refused 503 by the line, by reason (queue_full, waited_too_long).',
    labelNames: ['reason'], registers: [registry],
  })
  for (const reason of ['queue_full', 'waited_too_long'] as const) refusals.inc({ reason }, 0)
  gate.onWait = (seconds) => queueWait.observe(seconds)
  gate.onRefusal = (reason) => refusals.inc({ reason })
  // Held answers (http/held-answer.ts): bytes their clients have not read yet, and answers that went on to a file.
  const held = options.holding?.stats
  new Gauge({
    name: 'booking_calendar_held_bytes', help: 'Bytes of streamed answers held for clients that have not read them, by where (memory, disk).', labelNames: ['where'], registers: [registry],
    collect() {
      this.set({ where: 'memory' }, held?.memoryBytes ?? 0)
      this.set({ where: 'disk' }, held?.diskBytes ?? 0)
    },
  })
  const spills = new Counter({ name: 'booking_calendar_held_spills_total', help: 'Held answers that went on to a temporary file (HOLD_DIR).', registers: [registry] })
  if (options.holding) options.holding.onSpill = () => spills.inc()
  // Counted by the holding from its start (its probe runs before this registry exists).
  new Counter({
    name: 'booking_calendar_held_disk_failures_total', help: 'File operations of HOLD_DIR that failed (the start-up probe, a held file\'s open or write): each leaves the disk unused for a minute.', registers: [registry],
    collect() {
      this.reset()
      this.inc(held?.diskFailures ?? 0)
    },
  })
  new Gauge({
    name: 'booking_calendar_db_pool_waiting', help: 'Requests waiting for a database connection.', registers: [registry],
    collect() { this.set(poolCounts(pool).waiting) },
  })
  new Gauge({
    name: 'booking_calendar_auth_cache_hits', help: 'Requests whose credentials were answered from the cache (AUTH_MODE=wordpress), since start.', registers: [registry],
    collect() { this.set(access.stats.cacheHits) },
  })
  new Gauge({
    name: 'booking_calendar_auth_wordpress_calls', help: 'Calls to WordPress to check credentials (AUTH_MODE=wordpress), since start.', registers: [registry],
    collect() { this.set(access.stats.wordpressCalls) },
  })

  // One function for every response: markCut (http/cut-answer.ts) finds it in res.locals.
  const countCut = (reason: string) => cuts.inc({ reason })
  const observe: RequestHandler = (req, res, next) => {
    const started = process.hrtime.bigint()
    let done = false
    const finish = () => {
      if (done) return
      done = true
      const labels = { route: routeOf(res), method: req.method, status: String(statusSent(res) ?? 'none') }
      requests.inc(labels)
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9)
      if (typeof res.locals.rowsSent === 'number' && res.locals.rowsSent > 0) rows.inc({ route: labels.route }, res.locals.rowsSent)
    }
    res.on('finish', finish)
    res.on('close', finish)
    res.locals.countCut = countCut
    next()
  }

  const digests = options.token === undefined ? undefined : [sha256(options.token)]
  const serve: RequestHandler = async (req, res) => {
    res.locals.route = 'metrics'
    if (digests) {
      const token = bearerToken(req.get('authorization'))
      if (token === undefined || !tokenIsOneOf(token, digests)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"')
        throw new RestError(401, 'rest_not_logged_in', 'The metrics need the token of METRICS_TOKEN: send it as Authorization: Bearer <token>.')
      }
    }
    let text: string
    if (cluster.isWorker) {
      try {
        text = await askPrimaryForMetrics()
      } catch {
        throw new RestError(503, 'rest_metrics_unavailable', 'The workers\' metrics did not arrive in time; try again.', { retryAfterSeconds: 1 })
      }
    } else {
      text = await registry.metrics()
    }
    res.setHeader('Content-Type', registry.contentType)
    res.send(text)
  }

  return { observe, serve, registry }
}
