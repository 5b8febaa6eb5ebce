// A TCP proxy in front of the test MariaDB that a test can cut and restore,
// to see the service while its real database cannot be reached.
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

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  let withheld: string | undefined
  const listen = () => new Promise<void>((resolve, reject) => {
    server = createServer((client) => {
      const upstream = connect(targetPort, targetHost)
      sockets.add(client).add(upstream)
      const drop = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream) }
      client.on('error', drop).on('close', drop)
      upstream.on('error', drop).on('close', drop)
      upstream.pipe(client)
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
