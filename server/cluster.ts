// WORKERS > 1 (node:cluster): the primary forks one worker per core, each a
// whole service (server/main.ts) sharing the port. The primary serves nothing:
// it restarts a worker that dies (within a budget, so a crash loop ends),
// gathers /metrics from every worker for the worker that was asked, and on
// SIGTERM stops all workers gracefully and exits once they have.
import { spawnSync } from 'node:child_process'
import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry, type Registry } from 'prom-client'
import type { Logger } from 'pino'
import type { FairQueueOptions } from '../db/fair-queue.ts'
import { servePermits } from './stream-permits.ts'
import { parentLink, sendToPrimary, sendToWorker } from './ipc.ts'

const METRICS_ASKED = 'booking-calendar-api:metrics-asked'
const METRICS_ANSWERED = 'booking-calendar-api:metrics-answered'

/** More restarts than this within RESTART_WINDOW_MS means the workers cannot run: the primary gives up. */
export const RESTART_LIMIT = 5
export const RESTART_WINDOW_MS = 60_000

/** The restarts still inside the window once one more happens at `now`, and whether that one is allowed. */
export function restartAllowed(previous: readonly number[], now: number, limit = RESTART_LIMIT, windowMs = RESTART_WINDOW_MS): { allowed: boolean; recent: number[] } {
  const recent = [...previous.filter((at) => at > now - windowMs), now]
  return { allowed: recent.length <= limit, recent }
}

interface MetricsMessage { type: string; id: number; text?: string; error?: string }

/** node:cluster's own messages between primary and worker (lib/internal/cluster, Node 20). */
interface ClusterMessage { cmd?: string; act?: string; seq?: number; ack?: number }

/**
 * node:cluster's round-robin primary accepts each connection and hands it to a
 * worker, closing its own copy only when the worker says it took it. A worker
 * that dies in between (kill -9, the OOM killer) never says so, and the client
 * waited on an open connection that no one would answer until its own
 * timeout. Here the primary notes each connection it hands `worker`, forgets it
 * when the worker answers, and closes what is left when the worker exits: the
 * client sees the connection close, as for every request of a dead worker.
 */
function closeHandoffsOfDeadWorker(worker: Worker): void {
  const handedOff = new Map<number, { close(): void }>()
  const child = worker.process as unknown as {
    send(message: unknown, handle?: unknown, ...rest: unknown[]): boolean
    on(event: 'internalMessage', listener: (message: ClusterMessage) => void): void
  }
  const send = child.send.bind(child)
  child.send = (message: unknown, handle?: unknown, ...rest: unknown[]) => {
    const sent = message as ClusterMessage | undefined
    if (sent?.cmd === 'NODE_CLUSTER' && sent.act === 'newconn' && sent.seq !== undefined && handle) handedOff.set(sent.seq, handle as { close(): void })
    return send(message, handle, ...rest)
  }
  child.on('internalMessage', (message) => {
    if (message?.cmd === 'NODE_CLUSTER' && message.ack !== undefined) handedOff.delete(message.ack)
  })
  worker.once('exit', () => {
    for (const handle of handedOff.values()) handle.close()
    handedOff.clear()
  })
}

/** The workers' node flags: the primary's own (a preloaded module, a profiler), then WORKER_V8_FLAGS, which win over them. */
export function workerExecArgv(primaryExecArgv: readonly string[], v8Flags: readonly string[]): string[] {
  return [...primaryExecArgv, ...v8Flags]
}

/**
 * Node's first complaint about WORKER_V8_FLAGS (`node: bad option: --no-such-flag`),
 * asked of a node started with them alone; undefined when it takes them. Else
 * each worker would die at start, six times, and the primary exit with Node's
 * own lines instead of one that names the variable.
 */
export function refusedV8Flags(flags: readonly string[]): string | undefined {
  if (flags.length === 0) return undefined
  const run = spawnSync(process.execPath, [...flags, '-e', ''], { encoding: 'utf8', timeout: 10_000, env: {} })
  if (run.status === 0) return undefined
  return run.stderr.split('\n').find((line) => line.trim() !== '')?.trim() ?? 'it did not start'
}

export interface PrimaryOptions {
  workers: number
  graceMs: number
  log: Logger
  v8Flags: readonly string[]
  /** DB_STREAM_CONNECTIONS' line, held here for every worker (server/stream-permits.ts). */
  permits: FairQueueOptions
  /** Each worker as it is forked, for whatever else the primary shares with it (auth verdicts). */
  onFork?: (worker: Worker) => void
}

export function runPrimary(options: PrimaryOptions): void {
  const { log, graceMs } = options
  const permits = servePermits(options.permits)
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, options.v8Flags) })
  const aggregator = new AggregatorRegistry()
  let stopping = false
  let exitCode = 0
  let restarts: number[] = []
  // Our own count: cluster.workers may still list a worker after its 'exit' event.
  const running = new Set<Worker>()

  const fork = () => {
    const worker = cluster.fork()
    running.add(worker)
    closeHandoffsOfDeadWorker(worker)
    // A send that fails (prom-client's own, to a worker dying as it gathers metrics) emits 'error' here: unheard, it would end the primary.
    worker.on('error', (error: Error) => log.warn({ workerId: worker.id, err: { message: error.message } }, 'a message to a worker was lost: it is gone'))
    permits.attach(worker)
    options.onFork?.(worker)
    log.info({ workerId: worker.id, pid: worker.process.pid }, 'worker started')
  }
  const liveWorkers = () => [...running]

  const stop = (reason: Record<string, unknown>, code: number) => {
    if (stopping) return
    stopping = true
    exitCode = code
    log.info({ ...reason, graceMs, workers: liveWorkers().length }, 'primary: stopping every worker gracefully')
    for (const worker of liveWorkers()) worker.process.kill('SIGTERM')
    // Each worker ends itself within its grace period; should one hang, it is killed and the primary still exits.
    setTimeout(() => {
      for (const worker of liveWorkers()) worker.process.kill('SIGKILL')
      log.error('primary: workers still running past SHUTDOWN_GRACE_MS; killed them')
      process.exit(exitCode)
    }, graceMs + 10_000).unref()
    if (liveWorkers().length === 0) process.exit(exitCode)
  }

  cluster.on('exit', (worker, code, signal) => {
    running.delete(worker)
    if (stopping) {
      // A worker still starting when our SIGTERM came ends by the signal itself: that is a clean stop too.
      if (code !== 0 && signal !== 'SIGTERM') exitCode = 1
      if (liveWorkers().length === 0) {
        log.info({ exitCode }, 'primary: all workers stopped')
        process.exit(exitCode)
      }
      return
    }
    const budget = restartAllowed(restarts, Date.now())
    restarts = budget.recent
    if (!budget.allowed) {
      log.fatal({ workerId: worker.id, pid: worker.process.pid, code, signal, restarts: RESTART_LIMIT, withinMs: RESTART_WINDOW_MS }, 'workers keep dying: giving up')
      stop({ reason: 'restart loop' }, 1)
      return
    }
    // A worker stopped cleanly (a SIGTERM to it alone) is no crash, though it counts in the budget above.
    if (code === 0) log.warn({ workerId: worker.id, pid: worker.process.pid, code, signal }, 'a worker stopped: starting another')
    else log.error({ workerId: worker.id, pid: worker.process.pid, code, signal }, 'a worker died: starting another')
    fork()
  })

  cluster.on('message', (worker, message: MetricsMessage) => {
    if (message?.type !== METRICS_ASKED) return
    // The asking worker may die while the others are asked (up to prom-client's 5 s): then the answer goes nowhere.
    aggregator.clusterMetrics().then(
      (text) => sendToWorker(worker, { type: METRICS_ANSWERED, id: message.id, text }),
      (error: Error) => sendToWorker(worker, { type: METRICS_ANSWERED, id: message.id, error: error.message }),
    )
  })

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) log.info({ signal }, 'already stopping: the workers still have SHUTDOWN_GRACE_MS')
      else stop({ signal }, 0)
    })
  }
  for (let i = 0; i < options.workers; i++) fork()
}

/** In a worker: answer the primary's requests for this worker's metrics (prom-client's cluster protocol). */
export function shareMetricsWithPrimary(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry])
  // Constructing one adds prom-client's listener for the primary's requests, and nothing else.
  new AggregatorRegistry()
}

let asked = 0

/** In a worker: every worker's metrics, summed by the primary. Bounded: prom-client gives up after 5 s. */
export function askPrimaryForMetrics(timeoutMs = 7_000): Promise<string> {
  const id = ++asked
  return new Promise((resolve, reject) => {
    const onMessage = (message: MetricsMessage) => {
      if (message?.type !== METRICS_ANSWERED || message.id !== id) return
      settle()
      if (message.error !== undefined) reject(new Error(message.error))
      else resolve(message.text ?? '')
    }
    const timer = setTimeout(() => { settle(); reject(new Error('the primary did not answer')) }, timeoutMs)
    const settle = () => { clearTimeout(timer); process.off('message', onMessage) }
    process.on('message', onMessage)
    sendToPrimary(parentLink, { type: METRICS_ASKED, id }, () => { settle(); reject(new Error('the primary is gone')) })
  })
}
