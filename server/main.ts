// Reads config and, with WORKERS > 1, becomes the cluster's primary (server/cluster.ts),
// which forks workers that run this same file. A worker (or the one process of
// WORKERS=1) creates the database handle, listens, and on SIGTERM stops gracefully (server/shutdown.ts).
// The primary serves nothing, so it loads only what it runs: the app, the
// database driver and the routes are imported by the worker alone (loaded, they
// held 25 MB of the idle primary's memory).
import cluster from 'node:cluster'
import type { Logger } from 'pino'
import { loadConfig, ConfigError, dbSettings, type Config } from './config.ts'
import { createLogger } from './log.ts'
import { isIanaZone } from './domain/zone-offsets.ts'
import type { NicenessPlan, ReportNiceness } from './niceness.ts'

let config
try {
  config = loadConfig()
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`booking-calendar-api: ${error.message}\n`)
    process.exit(1)
  }
  throw error
}

const log = createLogger(config.logLevel)
if (cluster.isPrimary && config.authMode === 'none' && config.exposeCustomerData) {
  log.warn('EXPOSE_CUSTOMER_DATA is true while AUTH_MODE is none: anyone who can reach this service reads customer names, emails and phone numbers')
}
if (cluster.isPrimary && config.authMode !== 'none' && config.metricsToken === undefined) {
  log.warn(`/metrics is open while AUTH_MODE is ${config.authMode}: anyone who can reach this service reads its request counts per route and status and the rows it sent; set METRICS_TOKEN to guard it`)
}
if (cluster.isPrimary && config.workers > 1) {
  const { refusedV8Flags, runPrimary } = await import('./cluster.ts')
  const refused = refusedV8Flags(config.workerV8Flags)
  if (refused !== undefined) {
    process.stderr.write(`booking-calendar-api: WORKER_V8_FLAGS must be flags Node takes, or empty for V8's defaults (Node said: ${refused}).\n`)
    process.exit(1)
  }
  await takeServiceNiceness(config, log)
  // AUTH_MODE=wordpress: the primary holds the one verdict cache and asks WordPress for every worker.
  let verdicts: { attach(worker: import('node:cluster').Worker): void } | undefined
  if (config.authMode === 'wordpress') {
    const [{ createWordPressCheck }, { serveVerdicts }] = await Promise.all([import('./wordpress-check.ts'), import('./shared-verdicts.ts')])
    verdicts = serveVerdicts(createWordPressCheck({ wordpressUrl: config.wordpressUrl!, authCapability: config.authCapability, authCacheSeconds: config.authCacheSeconds }, log))
  }
  // changes/: the primary chooses the source and runs the instance's one log reader; workers ask it (server/change-log-channel.ts).
  const [{ startConfiguredChangesFeed }, { serveChangeLog }] = await Promise.all([import('./change-log-start.ts'), import('./change-log-channel.ts')])
  const changes = serveChangeLog(await startConfiguredChangesFeed(config, log))
  runPrimary({
    workers: config.workers, graceMs: config.shutdownGraceMs, log, v8Flags: config.workerV8Flags,
    permits: { permits: config.dbStreamConnections, maxWaiting: config.dbQueueLength, timeoutMs: config.dbQueueTimeoutMs },
    onFork: (worker) => {
      verdicts?.attach(worker)
      changes.attach(worker)
    },
  })
} else {
  // A worker inherited the primary's niceness and plans its own (reportNicenessOf); the one process of WORKERS=1 plans it here.
  await serve(config, log, cluster.isPrimary ? await takeServiceNiceness(config, log) : undefined)
}

/**
 * SERVICE_NICENESS, in the process that forks the others or serves alone
 * (server/niceness.ts): taken for good where a niceness cannot be lowered
 * again, and inherited; elsewhere left as it was, and each serving process
 * steps back while it runs reports (reportNicenessOf).
 */
async function takeServiceNiceness(config: Config, log: Logger): Promise<NicenessPlan> {
  const { planNiceness } = await import('./niceness.ts')
  const wanted = config.serviceNiceness
  const plan = planNiceness(wanted)
  if (plan.kind === 'while-reporting') log.info({ niceness: plan.base, reportNiceness: wanted }, `niceness ${plan.base}, and ${wanted} while a report is made or sent: the site beside goes first when the cores are short`)
  else if (plan.kind === 'refused') log.warn({ niceness: plan.now }, `SERVICE_NICENESS ${wanted} was refused (${plan.reason}): the service runs at niceness ${plan.now}`)
  else if (plan.now === 0) log.info({ niceness: 0 }, 'niceness 0 (SERVICE_NICENESS=0): the service does not step back for the site when the cores are short')
  else if (plan.kind === 'kept') log.info({ niceness: plan.now }, `niceness ${plan.now}, as started: the site beside goes first when the cores are short`)
  else log.info({ niceness: plan.now }, `niceness ${plan.now} for good (it cannot be lowered again here: docs/operations.md, "Under load"): the site beside goes first when the cores are short`)
  return plan
}

/**
 * A serving process's niceness while reports run, from the plan of the process
 * that serves alone, or a worker's own (the same as its primary's: it inherited
 * its niceness, credentials and limits; a worker that cannot lower stays at
 * SERVICE_NICENESS for good).
 */
async function reportNicenessOf(config: Config, log: Logger, given: NicenessPlan | undefined): Promise<ReportNiceness | undefined> {
  const { planNiceness, ReportNiceness } = await import('./niceness.ts')
  const plan = given ?? planNiceness(config.serviceNiceness)
  if (plan.kind !== 'while-reporting') return undefined
  return new ReportNiceness(plan.base, plan.reporting, (reason) => {
    log.warn({ niceness: plan.reporting }, `niceness could not be lowered again after a report (${reason}): this process stays at ${plan.reporting}`)
  })
}

/**
 * Asks the database once, at start, for each table the service reads: a
 * refused account or a wrong TABLE_PREFIX is logged at error with what to
 * check, instead of first showing as failed requests. The service runs on
 * either way: a database still starting (docker-compose) may be ready soon.
 */
async function checkDatabaseAtStart(db: import('../db/connect.ts').Db, log: Logger, database: Config['database']): Promise<void> {
  const [{ checkTablesRead, setupProblem }, { effectiveSslMode }] = await Promise.all([import('../db/options.ts'), import('../db/connection-options.ts')])
  const { errorFields } = await import('./errors.ts')
  try {
    // The first connection also reads the server (logServerFound).
    await checkTablesRead(db)
  } catch (error) {
    const problem = setupProblem(error, effectiveSslMode(database))
    if (problem !== undefined) log.error({ err: errorFields(error) }, problem)
    else log.warn({ err: errorFields(error) }, 'the database did not answer at start: /readyz tells when it does')
  }
}

/**
 * Which server, and so which statements (db/server-dialect.ts): MariaDB or
 * MySQL, and how a time limit is kept; one line, when the first connection
 * has read it. A version that cannot be read is said once, at warn.
 */
function logServerFound(log: Logger): (server: import('../db/server-info.ts').DatabaseServerFound) => void {
  return (server) => {
    const fields = { database: { kind: server.kind, version: server.version, comment: server.comment, timeLimit: server.timeLimit } }
    if (server.major !== 0) return log.info(fields, `database: ${server.kind} ${server.version}`)
    log.warn({ database: { ...fields.database, versionText: server.text.slice(0, 100) } },
      'database: no version could be read from what SELECT VERSION() says: only the statements every supported server takes are sent, and QUERY_TIMEOUT_MS is kept by the service\'s own timer')
  }
}

async function serve(config: Config, log: Logger, niceness: NicenessPlan | undefined): Promise<void> {
  const [{ createDb }, { createApp }, { shutDownGracefully, watchConnections }, { configureServer }, { createAppServer }] = await Promise.all([
    import('../db/connect.ts'), import('./app.ts'), import('./shutdown.ts'), import('./http/server-setup.ts'), import('./http/app-server.ts'),
  ])
  // The first time zone a process names loads ICU's zone data: 12 to 26 ms
  // that otherwise held the first request's event loop (docs/performance.md).
  isIanaZone('Etc/UTC')
  // In a worker, stream permits come from the primary: DB_STREAM_CONNECTIONS is the whole service's.
  // Held files of processes that are gone (a crash) swept, HOLD_DIR probed, one line logged (http/held-answer.ts).
  const { startHolding } = await import('./http/held-answer.ts')
  const holding = startHolding(config.hold, log)
  const streamGate = cluster.isWorker ? (await import('./stream-permits.ts')).createClusterGate(config.dbQueueTimeoutMs) : undefined
  const handle = createDb({ ...dbSettings(config), streamGate, onServerFound: logServerFound(log) })
  // In a worker, credentials are checked by the primary, whose verdicts every worker shares.
  const access = cluster.isWorker && config.authMode === 'wordpress'
    ? (await import('./access.ts')).createAccess(config, log, { check: (await import('./shared-verdicts.ts')).askPrimaryForVerdicts({ timeoutMs: 7_000 /* WordPress's own bound, 5 s, and some */ }) })
    : undefined
  const changes = cluster.isWorker
    ? (await import('./change-log-channel.ts')).askPrimaryForChanges()
    : await (await import('./change-log-start.ts')).startConfiguredChangesFeed(config, log)
  const app = createApp({ db: handle.db, pool: handle.pool, config, log, access, holding, changes, reportNiceness: await reportNicenessOf(config, log, niceness) })
  const server = createAppServer(app, { headersTimeoutMs: config.headersTimeoutMs, reusePrototypes: config.httpPrototypeReuse }).listen(config.port, () => {
    log.info({ port: config.port, authMode: config.authMode, tablePrefix: config.tablePrefix }, 'listening')
  })
  // A port that cannot be had (taken, not allowed) ends the process, which the primary reports.
  server.once('error', (error) => {
    log.fatal({ err: error, port: config.port }, 'cannot listen')
    process.exit(1)
  })
  configureServer(server, log)
  watchConnections(server)
  server.once('listening', () => { void checkDatabaseAtStart(handle.db, log, config.database) })

  let stopping = false
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) {
        log.info({ signal }, 'already stopping: the requests in flight still have SHUTDOWN_GRACE_MS')
        return
      }
      stopping = true
      log.info({ signal, graceMs: config.shutdownGraceMs }, 'stopping: no new connections; finishing the requests in flight')
      // Should closing the pool hang on a dead database, the process still ends.
      setTimeout(() => process.exit(0), config.shutdownGraceMs + 5_000).unref()
      void shutDownGracefully(server, { graceMs: config.shutdownGraceMs, log, closeDb: async () => { await changes.stop(); await handle.close() } })
        .then(() => process.exit(0), (error: unknown) => {
          log.error({ err: error }, 'stopping failed')
          process.exit(1)
        })
    })
  }
}
