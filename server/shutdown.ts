// Graceful stop on SIGTERM (and Ctrl-C): stop accepting, let the requests in
// flight finish within SHUTDOWN_GRACE_MS, then cut what is left, close the
// pool, and let the process exit 0. A streamed million-row answer in flight
// ends whole when it fits in the grace period.
import type { Server } from 'node:http'
import type { Logger } from 'pino'

export async function shutDownGracefully(server: Server, options: { graceMs: number; log: Logger; closeDb: () => Promise<void> }): Promise<void> {
  const { graceMs, log } = options
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  // Keep-alive connections between requests hold the server open: close each as soon as it is idle.
  server.closeIdleConnections()
  const idleSweep = setInterval(() => server.closeIdleConnections(), 100)
  let graceTimer: NodeJS.Timeout | undefined
  const graceOver = new Promise<'grace over'>((resolve) => { graceTimer = setTimeout(() => resolve('grace over'), graceMs) })
  const outcome = await Promise.race([closed.then(() => 'finished' as const), graceOver])
  clearInterval(idleSweep)
  clearTimeout(graceTimer)
  if (outcome === 'grace over') {
    log.warn({ graceMs }, 'requests still in flight when SHUTDOWN_GRACE_MS ran out: cutting them')
    server.closeAllConnections()
    await closed
  }
  await options.closeDb()
  log.info('stopped')
}
