// A TCP proxy in front of the test MariaDB that a test can cut and restore,
// to see the service while its real database cannot be reached; and, with
// options, one that behaves as database proxies do (ProxySQL, routers): it
// names its own version and thread id in the handshake, and keeps the
// server's connection when its client leaves, as a pooling proxy does.
import { createServer, connect, type Server, type Socket } from 'node:net'

export interface TcpProxy {
  port: number
  /** Refuses new connections and cuts the open ones, as a stopped database does. */
  cut(): Promise<void>
  restore(): Promise<void>
  close(): Promise<void>
  /**
   * From now on, drops what the service sends that holds `text` (a statement,
   * `COMMIT` say), so the database never sees it and never answers, as a
   * database that hangs at that moment; undefined forwards everything again.
   */
  withhold(text: string | undefined): void
}

export interface TcpProxyOptions {
  /** The server version the handshake names instead of the server's own (ProxySQL's default is '5.5.30'). */
  handshakeVersion?: string
  /** The thread id the handshake names instead of the server's (a proxy's own session id). */
  handshakeThreadId?: number
  /** Keeps the server's connection open when the client's closes (a pooling proxy): what runs on it runs on. */
  keepServerConnections?: boolean
}

/**
 * The server's first packet (the handshake, protocol 10) with another version
 * and thread id: a 3-byte length and a sequence number, then the protocol
 * byte, the version ending in NUL, and the thread id in 4 bytes.
 */
export function rewriteHandshake(packet: Buffer, options: TcpProxyOptions): Buffer {
  const payload = packet.subarray(4)
  if (payload[0] !== 10) return packet
  const versionEnd = payload.indexOf(0, 1)
  const version = options.handshakeVersion !== undefined ? Buffer.from(options.handshakeVersion, 'latin1') : payload.subarray(1, versionEnd)
  const threadId = Buffer.from(payload.subarray(versionEnd + 1, versionEnd + 5))
  if (options.handshakeThreadId !== undefined) threadId.writeUInt32LE(options.handshakeThreadId)
  const rewritten = Buffer.concat([payload.subarray(0, 1), version, Buffer.from([0]), threadId, payload.subarray(versionEnd + 5)])
  const header = Buffer.alloc(4)
  header.writeUIntLE(rewritten.length, 0, 3)
  header[3] = packet[3]!
  return Buffer.concat([header, rewritten])
}

export async function startTcpProxy(targetHost: string, targetPort: number, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  let withheld: string | undefined
  const rewrites = options.handshakeVersion !== undefined || options.handshakeThreadId !== undefined
  const listen = () => new Promise<void>((resolve, reject) => {
    server = createServer((client) => {
      const upstream = connect(targetPort, targetHost)
      sockets.add(client).add(upstream)
      const dropClient = () => { client.destroy(); sockets.delete(client) }
      const dropUpstream = () => { upstream.destroy(); sockets.delete(upstream) }
      const drop = () => { dropClient(); dropUpstream() }
      // A pooling proxy: the client's end is not the server connection's.
      client.on('error', options.keepServerConnections ? dropClient : drop).on('close', options.keepServerConnections ? dropClient : drop)
      upstream.on('error', drop).on('close', drop)
      let pending: Buffer | undefined = rewrites ? Buffer.alloc(0) : undefined
      upstream.on('data', (chunk: Buffer) => {
        let out = chunk
        if (pending) {
          // The handshake is the server's first packet: held until whole, then rewritten.
          pending = Buffer.concat([pending, chunk])
          if (pending.length < 4 || pending.length < 4 + pending.readUIntLE(0, 3)) return
          const length = 4 + pending.readUIntLE(0, 3)
          out = Buffer.concat([rewriteHandshake(pending.subarray(0, length), options), pending.subarray(length)])
          pending = undefined
        }
        if (!client.destroyed) client.write(out)
      })
      client.on('data', (chunk: Buffer) => {
        if (withheld === undefined || !chunk.includes(withheld)) upstream.write(chunk)
      })
    })
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      const address = server!.address()
      if (typeof address === 'object' && address) port = address.port
      resolve()
    })
  })
  const stop = () => new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy()
    sockets.clear()
    if (!server) return resolve()
    server.close(() => resolve())
    server = undefined
  })
  await listen()
  return { get port() { return port }, cut: stop, restore: listen, close: stop, withhold: (text) => { withheld = text } }
}
