// The service listening on loopback, as the fault, load and shutdown tests
// reach it: in this process (createApp, served as main.ts serves it), or as
// its own process (server/main.ts, WORKERS and signals included).
import { startConfiguredChangesFeed } from '../../server/change-log-start.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import type { Server } from 'node:http'
import { createApp } from '../../server/app.ts'
import { dbSettings, loadConfig } from '../../server/config.ts'
import { createDb, type DbHandle } from '../../db/connect.ts'
import { configureServer } from '../../server/http/server-setup.ts'
import { findFreePort } from '../../scripts/mariadb.ts'
import { collectLogs } from './app.ts'
import { testServer, type TestDatabase } from './database.ts'

/** Where a service reads: a test database on the shared test server, or a private MariaDB's URL and prefix. */
export type ServiceDatabase = TestDatabase | { databaseUrl: string; prefix: string }

function databaseUrlOf(db: ServiceDatabase): string {
  if ('databaseUrl' in db) return db.databaseUrl
  const server = testServer()
  return `mysql://${server.readerUser}:${server.readerPassword}@${server.host}:${server.port}/${db.name}`
}

export interface ListeningService {
  port: number
  handle: DbHandle
  /** Every JSON log line written so far. */
  logs: Record<string, unknown>[]
  close(): Promise<void>
}

/** The service in this process over `db`, on a free loopback port; SITE_TIMEZONE UTC unless `env` says otherwise. */
export async function startListeningService(db: ServiceDatabase, env: Record<string, string> = {}): Promise<ListeningService> {
  const config = loadConfig({ DATABASE_URL: databaseUrlOf(db), TABLE_PREFIX: db.prefix, SITE_TIMEZONE: 'UTC', LOG_LEVEL: 'info', ...env })
  const { logs, log } = collectLogs(config.logLevel)
  const handle = createDb(dbSettings(config))
  // CHANGES_SOURCE given: changes/'s source chosen as main.ts chooses it (server/change-log-start.ts); else digests.
  const changes = env.CHANGES_SOURCE === undefined ? undefined : await startConfiguredChangesFeed(config, log)
  // Decided before the first request, as a service that has been up for a moment has.
  await changes?.source()
  const app = createApp({ db: handle.db, pool: handle.pool, config, log, changes })
  const server: Server = app.listen(0, '127.0.0.1')
  configureServer(server, log)
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as { port: number }
  return {
    port, handle, logs,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await changes?.stop()
      await handle.close()
    },
  }
}

export interface ServiceProcess {
  child: ChildProcess
  port: number
  /** Every JSON line the process wrote to stdout so far. */
  logs: Record<string, unknown>[]
  exited: Promise<number | null>
}

/**
 * server/main.ts as its own process over `db`, once each of its WORKERS (1
 * unless `env` says otherwise) has logged "listening"; SITE_TIMEZONE UTC unless `env` says otherwise.
 */
/** `under`: a command the service runs under, which execs it (setpriv(1)): the child's pid stays the service's. */
export async function spawnService(db: ServiceDatabase, env: Record<string, string> = {}, under: string[] = []): Promise<ServiceProcess> {
  const port = await findFreePort()
  const [command, ...args] = [...under, process.execPath, '--import', 'tsx', 'server/main.ts']
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH, PORT: String(port), DATABASE_URL: databaseUrlOf(db), TABLE_PREFIX: db.prefix, SITE_TIMEZONE: 'UTC', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const logs: Record<string, unknown>[] = []
  let buffered = ''
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) if (line.trim()) logs.push(JSON.parse(line))
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  // A loaded machine compiles the TypeScript of every worker at once: a minute, not the usual seconds.
  const deadline = Date.now() + 60_000
  const workers = Number(env.WORKERS ?? 1)
  while (logs.filter((line) => line.msg === 'listening').length < workers) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before listening`)
    if (Date.now() > deadline) {
      // Not left running: the caller has no handle to stop it with (an orphan once outlived the tests by hours).
      child.kill('SIGTERM')
      throw new Error('the service did not listen within 60 s')
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { child, port, logs, exited }
}
