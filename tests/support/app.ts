// The service as a test sees it: createApp over a test database, read through
// the SELECT-only account, with a settable clock and a log the test can read.
import { Writable } from 'node:stream'
import type { Express } from 'express'
import { createApp } from '../../server/app.ts'
import { dbSettings, loadConfig, type Config } from '../../server/config.ts'
import { createDb, type DbHandle } from '../../db/connect.ts'
import { createLogger } from '../../server/log.ts'
import type { SiteTimezone } from '../../server/site-timezone.ts'
import { createAccess, type Access, type AccessOptions } from '../../server/access.ts'
import { testServer, type TestDatabase } from './database.ts'

export interface TestApp {
  app: Express
  handle: DbHandle
  config: Config
  /** Every JSON log line written so far. */
  logs: Record<string, unknown>[]
  /** The access guard, with its counts of cache hits and calls to WordPress. */
  access: Access
  close(): Promise<void>
}

export interface TestAppOptions {
  env?: Record<string, string>
  now?: () => number
  siteTimezone?: SiteTimezone
  /** Connect here instead of the test server (a proxy that can cut the connection). */
  port?: number
  /** For AUTH_MODE=wordpress: the verdict cache's clock, WordPress's time-out. */
  access?: AccessOptions
}

/** A logger whose JSON lines are kept, parsed, for tests to read. */
export function collectLogs(level: Parameters<typeof createLogger>[0]): { logs: Record<string, unknown>[]; log: ReturnType<typeof createLogger> } {
  const logs: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line))
      callback()
    },
  })
  return { logs, log: createLogger(level, sink) }
}

export function createTestApp(database: TestDatabase, options: TestAppOptions = {}): TestApp {
  const server = testServer()
  const config = loadConfig({
    DATABASE_URL: `mysql://${server.readerUser}:${server.readerPassword}@${server.host}:${options.port ?? server.port}/${database.name}`,
    TABLE_PREFIX: database.prefix,
    LOG_LEVEL: 'debug',
    // A run of the integration tests with the fast paths off: ROWS_AS_BYTES=false SQL_SHAPE_CACHE=false npm test -- FILE.
    ...(process.env.ROWS_AS_BYTES === undefined ? {} : { ROWS_AS_BYTES: process.env.ROWS_AS_BYTES }),
    ...(process.env.SQL_SHAPE_CACHE === undefined ? {} : { SQL_SHAPE_CACHE: process.env.SQL_SHAPE_CACHE }),
    ...options.env,
  })
  const { logs, log } = collectLogs(config.logLevel)
  const handle = createDb(dbSettings(config))
  const access = createAccess(config, log, options.access)
  const app = createApp({ db: handle.db, pool: handle.pool, config, log, now: options.now, siteTimezone: options.siteTimezone, access })
  return { app, handle, config, logs, access, close: () => handle.close() }
}
