// Where the database is and how the link to it is secured, as mysql2 takes it:
// a TCP host and port or a Unix socket, and TLS as MySQL's own clients' --ssl-mode
// says (API.md, "The database"; docs/managed-databases.md).
import { connect, isIP, type Socket } from 'node:net'
import type { Pool } from 'mysql2'
import { createConnection as createPromiseConnection } from 'mysql2/promise'

/** MySQL's --ssl-mode values, from none to the strictest. */
export const SSL_MODES = ['DISABLED', 'PREFERRED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'] as const
export type SslMode = typeof SSL_MODES[number]

/** TLS to the database: the mode, and the files' contents (PEM), read at start. */
export interface TlsSettings {
  mode: SslMode
  /** The CA certificates the server's chain must end in (ssl-ca); Node's own store of public roots when unset. */
  ca?: string
  /** A client certificate and its key (ssl-cert, ssl-key), for an account that requires one (REQUIRE X509). */
  cert?: string
  key?: string
}

/** Where the database is and who connects: DATABASE_URL or the WORDPRESS_DB_* names. */
export interface DatabaseSettings {
  host: string
  port: number
  /** A Unix socket path; host and port are then not used. */
  socketPath?: string
  user: string
  password: string
  database: string
  /** Unset: PREFERRED, as the mysql client. */
  tls?: TlsSettings
}

/** mysql2's `ssl` option: what tls.connect is given, and whether the host name is checked. */
export interface MysqlSsl {
  ca?: string
  cert?: string
  key?: string
  rejectUnauthorized: boolean
  verifyIdentity: boolean
}

/** The connection options mysql2 takes for `settings` (host or socket, account, TLS). */
export interface MysqlTarget {
  host?: string
  port?: number
  socketPath?: string
  user: string
  password: string
  database: string
  ssl?: MysqlSsl
  /** The TCP connection, made by us (identityChecked) when mysql2's own would skip the host check. */
  stream?: () => Socket
}

/**
 * The mode in effect: PREFERRED over a Unix socket is no TLS, as for the mysql
 * client (the socket never leaves the machine); any stricter mode is asked for there too.
 */
export function effectiveSslMode(settings: Pick<DatabaseSettings, 'socketPath' | 'tls'>): SslMode {
  const mode = settings.tls?.mode ?? 'PREFERRED'
  return mode === 'PREFERRED' && settings.socketPath !== undefined ? 'DISABLED' : mode
}

/**
 * mysql2's `ssl` for a mode. PREFERRED and REQUIRED check no certificate (any
 * server's, a self-signed one included): they protect against a reader of the
 * wire, not against a server in the middle. VERIFY_CA checks the chain against
 * `ca` (or Node's public roots), not the host name; VERIFY_IDENTITY checks both.
 */
export function mysqlSsl(tls: TlsSettings | undefined, mode: SslMode): MysqlSsl | undefined {
  if (mode === 'DISABLED') return undefined
  const files = { ...(tls?.ca !== undefined && { ca: tls.ca }), ...(tls?.cert !== undefined && { cert: tls.cert }), ...(tls?.key !== undefined && { key: tls.key }) }
  const verify = mode === 'VERIFY_CA' || mode === 'VERIFY_IDENTITY'
  return { ...files, rejectUnauthorized: verify, verifyIdentity: mode === 'VERIFY_IDENTITY' }
}

/** The mysql2 options that reach the database of `settings`; one connection, a pool, or a KILL's own connection take them alike. */
export function mysqlTarget(settings: DatabaseSettings): MysqlTarget {
  const where = settings.socketPath !== undefined ? { socketPath: settings.socketPath } : { host: settings.host, port: settings.port }
  const mode = effectiveSslMode(settings)
  const ssl = mysqlSsl(settings.tls, mode)
  const stream = mode === 'VERIFY_IDENTITY' && settings.socketPath === undefined && isIP(settings.host) !== 0 ? identityChecked(settings.host, settings.port) : undefined
  return { ...where, user: settings.user, password: settings.password, database: settings.database, ...(ssl && { ssl }), ...(stream && { stream }) }
}

/**
 * The TCP connection for VERIFY_IDENTITY to an IP address. mysql2 gives TLS no
 * server name for an address, and Node then checks the certificate against
 * "localhost" (its fall-back when the socket has no `_host`, which node:net
 * leaves unset for an address): a certificate for localhost would pass for
 * 10.0.0.5, and one naming 10.0.0.5 fail. With the address as the socket's
 * `_host`, Node checks that address, before any credential is sent.
 */
function identityChecked(address: string, port: number): () => Socket {
  return () => {
    const socket = connect(port, address)
    ;(socket as unknown as { _host: string })._host = address
    // What mysql2 does for the sockets it makes itself (db/connect.ts asks for keep-alive).
    socket.setNoDelay(true)
    socket.once('connect', () => socket.setKeepAlive(true, 0))
    return socket
  }
}

/** mysql2's code for a server that offers no TLS to a client that asked for it. */
const NO_TLS_OFFERED = 'HANDSHAKE_NO_SSL_SUPPORT'

/**
 * OpenSSL's words when client and server share no TLS version: a server that
 * offers only TLS 1.0 or 1.1, which Node (at least 1.2) refuses.
 */
const NO_COMMON_TLS_VERSION = /protocol version|unsupported protocol|no protocols available|wrong version number/i

/** The TLS handshake failed because the server offers only TLS versions older than Node takes. */
export function isOldTlsOnly(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  return code === 'HANDSHAKE_SSL_ERROR' && typeof message === 'string' && NO_COMMON_TLS_VERSION.test(message)
}

/**
 * Under PREFERRED, TLS cannot be had: the server offers none, or only TLS
 * 1.0 or 1.1. The mysql client then goes on in plain text, as the service does.
 */
function tlsCannotBeHad(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === NO_TLS_OFFERED || isOldTlsOnly(error)
}

/**
 * PREFERRED as mysql2 can do it. mysql2 has no "TLS if offered": a client that
 * asks for TLS fails the handshake with HANDSHAKE_NO_SSL_SUPPORT when the server
 * offers none, and with HANDSHAKE_SSL_ERROR when it offers only TLS 1.0 or 1.1
 * (tlsCannotBeHad). So the pool asks for TLS; the first connection that fails so is
 * made again without, and from then on the pool's connections (and `target`,
 * which the KILL connection reads) go without TLS for the life of the process.
 * A server that gains TLS later is read in plain text until the service restarts.
 */
export function fallBackToPlainWhenNoTls(pool: Pool, target: { ssl?: MysqlSsl }): void {
  const connectionConfig = (pool as unknown as { config: { connectionConfig: { ssl: unknown } } }).config.connectionConfig
  const getConnection = pool.getConnection.bind(pool)
  pool.getConnection = ((callback: Parameters<Pool['getConnection']>[0]) => {
    // Asked while TLS was still on: several connections may be under way at once
    // (a request beside the index watch), and each that was refused tries again
    // in plain text, not only the first to learn that the server has no TLS.
    const askedWithTls = Boolean(connectionConfig.ssl)
    getConnection((error, connection) => {
      if (tlsCannotBeHad(error) && askedWithTls) {
        connectionConfig.ssl = false
        delete target.ssl
        getConnection(callback)
        return
      }
      callback(error, connection)
    })
  }) as Pool['getConnection']
}

/**
 * The target for a one-off tool's connections (npm run indexes, the seed):
 * under PREFERRED, one probe, and without TLS when the server offers none, as
 * the service's pools do (fallBackToPlainWhenNoTls).
 */
export async function settledTarget(settings: DatabaseSettings): Promise<MysqlTarget> {
  const target = mysqlTarget(settings)
  if (effectiveSslMode(settings) !== 'PREFERRED' || target.ssl === undefined) return target
  try {
    const probe = await createPromiseConnection({ ...target, connectTimeout: 5_000 })
    await probe.end()
  } catch (error) {
    if (!tlsCannotBeHad(error)) throw error
    delete target.ssl
  }
  return target
}
