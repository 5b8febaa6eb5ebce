// A private MariaDB server for tests, the demo and the benchmark: the mariadbd on
// PATH (Homebrew's, say) or Debian's mariadb-server, installed when missing (root on
// Debian or Ubuntu), run from a temporary data directory
// on a free loopback port, and removed again by stop().
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { createServer } from 'node:net'
import mysql from 'mysql2/promise'
import { aptInstall } from './apt.ts'

export interface MariaDbServer {
  host: string
  port: number
  /** Unix socket of the server; root may log in through it without a password. */
  socketPath: string
  dataDir: string
  /** Runs SQL as root over the socket; for setting up databases and accounts. */
  adminQuery(sql: string): Promise<unknown>
  /**
   * Starts mariadbd again on the same data directory, port and options, after
   * it was killed (kill -9: a crash) or stopped; waits until it accepts connections.
   */
  restart(): Promise<void>
  stop(): Promise<void>
}

const say = (line: string) => process.stderr.write(`[mariadb] ${line}\n`)

/** Where Debian and most Unixes keep server binaries, also when PATH lacks them (sbin, for a user who is not root). */
const SERVER_FOLDERS = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin']

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** The executable `name`: the first on PATH (a Homebrew MariaDB, say), else in SERVER_FOLDERS; undefined when none. */
export function findBinary(name: string, path = process.env.PATH ?? ''): string | undefined {
  const folders = [...path.split(delimiter).filter((dir) => dir !== ''), ...SERVER_FOLDERS]
  return folders.map((dir) => join(dir, name)).find(isExecutableFile)
}

/** Installs Debian's mariadb-server when mariadbd is missing (CI machines have only Node); elsewhere says what to install. */
export function ensureMariaDbInstalled(): void {
  if (findBinary('mariadbd')) return
  if (!findBinary('apt-get')) {
    throw new Error('mariadbd is missing: install MariaDB (macOS: brew install mariadb) so that mariadbd is on PATH, or use the compose stack (docker compose up --build)')
  }
  aptInstall(['mariadb-server'], 'mariadbd')
  if (!findBinary('mariadbd')) throw new Error('mariadb-server was installed but mariadbd is still missing')
}

export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface MariaDbOptions {
  port?: number
  bufferPoolMb?: number
  /** Loopback addresses to listen on, comma-separated (MariaDB 10.11 takes a list); 127.0.0.1 by default. */
  bindAddress?: string
  /**
   * More mariadbd options, after the defaults (so they win): TLS files,
   * require_secure_transport, a binary log and server id for replication.
   * A `--log-bin` drops the default `--skip-log-bin`.
   */
  serverOptions?: readonly string[]
}

export async function startMariaDb(options: MariaDbOptions = {}): Promise<MariaDbServer> {
  ensureMariaDbInstalled()
  const mariadbd = findBinary('mariadbd')!
  const installDb = findBinary('mariadb-install-db') ?? findBinary('mysql_install_db')
  if (!installDb) throw new Error('mariadb-install-db is missing')

  const dataDir = mkdtempSync(join(tmpdir(), 'bc-mariadb-'))
  const socketPath = join(dataDir, 'mariadb.sock')
  const runAsRoot = process.getuid?.() === 0 ? ['--user=root'] : []
  // Its own temporary files' directory, not the shared /tmp: a bootstrap once failed there,
  // unable to remove its '/tmp/#sql-temptable-…' while other servers started beside it.
  const tmpDir = join(dataDir, 'tmp')
  mkdirSync(tmpDir)
  const init = spawnSync(installDb, [
    '--no-defaults', `--datadir=${join(dataDir, 'data')}`, '--auth-root-authentication-method=socket',
    '--skip-test-db', `--tmpdir=${tmpDir}`, ...runAsRoot,
  ], { encoding: 'utf8' })
  if (init.status !== 0) {
    rmSync(dataDir, { recursive: true, force: true })
    throw new Error(`mariadb-install-db failed: ${init.stderr || init.stdout}`)
  }

  const port = options.port ?? await findFreePort()
  const extra = options.serverOptions ?? []
  const args = [
    '--no-defaults', `--datadir=${join(dataDir, 'data')}`, `--socket=${socketPath}`,
    `--port=${port}`, `--bind-address=${options.bindAddress ?? '127.0.0.1'}`, `--pid-file=${join(dataDir, 'mariadbd.pid')}`, `--tmpdir=${tmpDir}`,
    `--log-error=${join(dataDir, 'error.log')}`, ...(extra.some((option) => option.startsWith('--log-bin')) ? [] : ['--skip-log-bin']), '--skip-name-resolve',
    `--innodb-buffer-pool-size=${options.bufferPoolMb ?? 256}M`, '--innodb-log-file-size=256M',
    '--innodb-flush-log-at-trx-commit=0', '--max-connections=500',
    '--character-set-server=utf8mb4', '--collation-server=utf8mb4_unicode_520_ci',
    ...runAsRoot, ...extra,
  ]
  let child: ChildProcess
  let exited = false
  let exitedPromise: Promise<void>
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true })

  /** Spawns mariadbd and waits until it accepts connections; on failure, kills it and throws the error log's end. */
  const launch = async () => {
    child = spawn(mariadbd, args, { stdio: 'ignore' })
    exited = false
    const launched = child
    exitedPromise = new Promise<void>((resolve) => launched.once('exit', () => { if (child === launched) exited = true; resolve() }))
    const deadline = Date.now() + 60_000
    for (;;) {
      if (exited) {
        const log = existsSync(join(dataDir, 'error.log')) ? readFileSync(join(dataDir, 'error.log'), 'utf8') : ''
        throw new Error(`mariadbd exited during start-up:\n${log.slice(-2000)}`)
      }
      try {
        const conn = await mysql.createConnection({ socketPath, user: 'root' })
        await conn.end()
        return
      } catch {
        if (Date.now() > deadline) {
          child.kill('SIGKILL')
          throw new Error('mariadbd did not accept connections within 60 s')
        }
        await sleep(100)
      }
    }
  }
  try {
    await launch()
  } catch (error) {
    cleanup()
    throw error
  }

  const restart = async () => {
    if (!exited) {
      child.kill('SIGKILL')
      await exitedPromise
    }
    await launch()
  }

  let stopped: Promise<void> | undefined
  const stop = () => {
    stopped ??= (async () => {
      if (!exited) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
        await exitedPromise
        clearTimeout(timer)
      }
      cleanup()
    })()
    return stopped
  }

  const adminQuery = async (statement: string) => {
    const conn = await mysql.createConnection({ socketPath, user: 'root', multipleStatements: true })
    try {
      const [result] = await conn.query(statement)
      return result
    } finally {
      await conn.end()
    }
  }

  return { host: '127.0.0.1', port, socketPath, dataDir, adminQuery, restart, stop }
}

/** Stops the server on Ctrl-C, SIGTERM and normal exit, so nothing is left running. */
export function stopOnExit(server: MariaDbServer, beforeStop?: () => Promise<void> | void): void {
  let stopping = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    say(`${signal}: stopping`)
    void (async () => {
      try { await beforeStop?.() } catch { /* stopping anyway */ }
      await server.stop()
      process.exit(signal === 'SIGINT' ? 130 : 143)
    })()
  }
  // `on`, not `once`: Ctrl-C reaches every process of the group, and tsx passes it
  // on to this one as well. A second SIGINT without a listener would end the
  // process at once, before the data directory is removed.
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  process.on('SIGHUP', onSignal)
  // A script that fails (a thrown error, a rejected top-level await) must not
  // leave its server running either: the bench once left a million-row mariadbd behind.
  const onFailure = (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
    if (stopping) return
    stopping = true
    void (async () => {
      try { await beforeStop?.() } catch { /* stopping anyway */ }
      await server.stop()
      process.exit(1)
    })()
  }
  process.on('uncaughtException', onFailure)
  process.on('unhandledRejection', onFailure)
}
