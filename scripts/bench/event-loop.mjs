// Preloaded into the service under benchmark (node --import), so into its
// primary and every cluster worker: measures the event loop's delay with
// perf_hooks and writes it on exit to BENCH_EVENT_LOOP_DIR/eld-<pid>.json.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import cluster from 'node:cluster'

const histogram = monitorEventLoopDelay({ resolution: 10 })
histogram.enable()
// The benchmark sends SIGUSR2 once the service is ready: start-up (loading modules) is not a stall of serving.
process.on('SIGUSR2', () => histogram.reset())
process.on('exit', () => {
  if (!process.env.BENCH_EVENT_LOOP_DIR) return
  writeFileSync(join(process.env.BENCH_EVENT_LOOP_DIR, `eld-${process.pid}.json`), JSON.stringify({
    worker: cluster.isWorker ? cluster.worker.id : 0,
    maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, meanMs: histogram.mean / 1e6,
  }))
})
