// A cluster whose first worker asks the primary for every worker's metrics
// and exits at once, before the answer can reach it: the primary's answer
// then goes to a worker that is gone. Run as its own process by
// tests/integration/cluster-ipc.test.ts (runPrimary forks this same file as its workers).
// BC_ASKED_MARKER names a file the first worker creates, so the workers
// started after it only wait.
import cluster from 'node:cluster'
import { openSync } from 'node:fs'
import { pino } from 'pino'
import { runPrimary } from '../../server/cluster.ts'

const log = pino({ base: null })
if (cluster.isPrimary) {
  runPrimary({ workers: 1, graceMs: 2_000, log, v8Flags: [], permits: { permits: 1, maxWaiting: 10, timeoutMs: 1_000 } })
} else {
  let first = true
  try {
    openSync(process.env.BC_ASKED_MARKER!, 'wx')
  } catch {
    first = false
  }
  if (first) {
    process.send!({ type: 'booking-calendar-api:metrics-asked', id: 1 }, undefined, {}, () => process.exit(0))
  } else {
    log.info('worker waiting')
    setInterval(() => {}, 60_000)
    process.on('SIGTERM', () => process.exit(0))
  }
}
