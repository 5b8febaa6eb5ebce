// Preloaded into the service under benchmark (node --import): measures the
// event loop's delay with perf_hooks and writes it to BENCH_EVENT_LOOP_FILE on exit.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { writeFileSync } from 'node:fs'

const histogram = monitorEventLoopDelay({ resolution: 10 })
histogram.enable()
// The benchmark sends SIGUSR2 once the service is ready: start-up (loading modules) is not a stall of serving.
process.on('SIGUSR2', () => histogram.reset())
process.on('exit', () => {
  if (!process.env.BENCH_EVENT_LOOP_FILE) return
  writeFileSync(process.env.BENCH_EVENT_LOOP_FILE, JSON.stringify({
    maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, meanMs: histogram.mean / 1e6,
  }))
})
