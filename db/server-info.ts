// Which server the service reads (db/server-dialect.ts): asked, never guessed.
// The handshake's version is the proxy's when there is one (ProxySQL says
// 5.5.30 whatever is behind it), so the pools ask SELECT VERSION() once, on
// their first connection before anything is set on it, and set every session
// up from that answer (db/bounded-pool.ts).
import { parseServerVersion, SERVER_VERSION_QUERY, statementTimeLimit, type DatabaseServer, type StatementTimeLimit } from './server-dialect.ts'

export interface DatabaseServerFound extends DatabaseServer {
  /** VERSION() as the server gave it ('10.11.6-MariaDB-0+deb12u1'): for the one log line when no version can be read from it. */
  text: string
  /** @@version_comment: the build ('MySQL Community Server - GPL', 'mariadb.org binary distribution', 'Debian 12'). */
  comment: string
  /** How QUERY_TIMEOUT_MS is kept on it. */
  timeLimit: StatementTimeLimit
}

/** What SERVER_VERSION_QUERY answered, read. */
export function serverFound(version: string, comment: string | null | undefined): DatabaseServerFound {
  const server = parseServerVersion(version)
  return { ...server, text: version, comment: comment ?? '', timeLimit: statementTimeLimit(server) }
}

/** A connection that runs one statement with a callback, as mysql2's does. */
export interface AskingConnection {
  query(sql: string, callback: (error: Error | null, rows: unknown) => void): unknown
}

/**
 * The server, read once for every pool of a database handle. The first
 * connection made asks it; any made meanwhile wait for that answer. A failed
 * read (the connection lost, no answer in time) is forgotten, so the next
 * connection asks again.
 */
export class ServerReading {
  #found: DatabaseServerFound | undefined
  #reading: Promise<DatabaseServerFound> | undefined
  readonly #timeoutMs: number
  readonly #onFound: (found: DatabaseServerFound) => void

  /** `onFound`: once, with the server read (the log line of a version that could not be read, db/connect.ts). */
  constructor(options: { timeoutMs: number; onFound?: (found: DatabaseServerFound) => void }) {
    this.#timeoutMs = options.timeoutMs
    this.#onFound = options.onFound ?? (() => {})
  }

  /** The server, once read; undefined before. */
  get found(): DatabaseServerFound | undefined {
    return this.#found
  }

  /** The server: known already, or asked on `connection`, which must have nothing set on it yet. */
  serverFor(connection: AskingConnection): Promise<DatabaseServerFound> {
    if (this.#found) return Promise.resolve(this.#found)
    this.#reading ??= this.#ask(connection).finally(() => { this.#reading = undefined })
    return this.#reading
  }

  #ask(connection: AskingConnection): Promise<DatabaseServerFound> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(Object.assign(new Error(`The database did not say its version within ${this.#timeoutMs} ms.`), { code: 'BC_DB_UNAVAILABLE' })), this.#timeoutMs)
      connection.query(SERVER_VERSION_QUERY, (error, rows) => {
        clearTimeout(timer)
        if (error) return reject(error)
        const row = (rows as Array<{ version?: unknown; comment?: unknown }>)[0]
        const found = serverFound(typeof row?.version === 'string' ? row.version : '', typeof row?.comment === 'string' ? row.comment : null)
        this.#found = found
        this.#onFound(found)
        resolve(found)
      })
    })
  }
}
