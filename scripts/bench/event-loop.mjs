// Preloaded into the service under benchmark (node --import), so into its
// primary and every cluster worker: measures the event loop's delay with
// perf_hooks and writes it on exit to BENCH_EVENT_LOOP_DIR/eld-<pid>.json.
//
// To say WHERE a stall or the memory comes from, it also writes
// BENCH_EVENT_LOOP_DIR/trace-<pid>.json: every stall over STALL_MS (when it
// ended, how long), every garbage collection over GC_MS (its kind: a
// mark-compact pause or a scavenge is the collector's, not our code's), and
// the process's memory every MEMORY_EVERY_MS. Times are both wall clock (to
// match the benchmark's phases) and the monotonic microseconds of
// `node --cpu-prof` profiles (to find the functions that ran during a stall).
import { monitorEventLoopDelay, PerformanceObserver, performance, constants } from 'node:perf_hooks'
import { openSync, readSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import cluster from 'node:cluster'

const STALL_MS = 20
const GC_MS = 5
const MEMORY_EVERY_MS = 250
const TICK_MS = 5

const histogram = monitorEventLoopDelay({ resolution: 10 })
histogram.enable()

const stalls = []
const collections = []
const memory = []
const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
}
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n)
// performance.now() and the profiles' timestamps share one monotonic clock; this is where it stood at timeOrigin.
const originUs = () => monotonicUs() - performance.now() * 1000
// The main thread's time on a core and waiting in the kernel's run queue for
// one, ns (Linux schedstat's first two fields). A stall is the thread running
// (its own work, a collection), waiting for a core (the machine was busy), or
// asleep (a blocking call, a page fault read from disk): schedstat tells which.
// Opened once, from the main thread, and read again from its start (1.4 µs a tick).
const schedstat = (() => { try { return openSync('/proc/thread-self/schedstat', 'r') } catch { return undefined } })()
const schedstatBytes = Buffer.alloc(128)
const mainThreadNs = () => {
  if (schedstat === undefined) return { runNs: NaN, queuedNs: NaN }
  const [run, queued] = schedstatBytes.latin1Slice(0, readSync(schedstat, schedstatBytes, 0, schedstatBytes.length, 0)).split(' ')
  return { runNs: Number(run), queuedNs: Number(queued) }
}

if (process.env.BENCH_EVENT_LOOP_DIR) {
  let last = performance.now()
  let lastCpu = process.cpuUsage()
  let lastThread = mainThreadNs()
  let lastUsage = process.resourceUsage()
  setInterval(() => {
    const now = performance.now()
    const late = now - last - TICK_MS
    const cpu = process.cpuUsage()
    const thread = mainThreadNs()
    const usage = process.resourceUsage()
    if (late > STALL_MS) {
      // CPU time of the process (every thread) over the stall: far below the
      // stall's length, the process was waiting for a core (a busy machine), not working.
      const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000
      stalls.push({
        at: Date.now(), ms: Math.round(late * 10) / 10, cpuMs: Math.round(cpuMs * 10) / 10, monotonicUs: Math.round(originUs() + now * 1000),
        // The main thread alone, over the same ticks (the stall and one period): on a core, and waiting for one.
        mainRunMs: Math.round((thread.runNs - lastThread.runNs) / 1e5) / 10,
        queuedMs: Math.round((thread.queuedNs - lastThread.queuedNs) / 1e5) / 10,
        majorFaults: usage.majorPageFault - lastUsage.majorPageFault,
      })
    }
    last = now
    lastCpu = cpu
    lastThread = thread
    lastUsage = usage
  }, TICK_MS).unref()
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration < GC_MS) continue
      collections.push({
        at: Math.round(performance.timeOrigin + entry.startTime), ms: Math.round(entry.duration * 10) / 10,
        kind: GC_KINDS[entry.detail?.kind] ?? String(entry.detail?.kind), monotonicUs: Math.round(originUs() + entry.startTime * 1000),
      })
    }
  }).observe({ entryTypes: ['gc'] })
  setInterval(() => {
    const m = process.memoryUsage()
    memory.push({ at: Date.now(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers })
  }, MEMORY_EVERY_MS).unref()
}

// With node --expose-gc, SIGHUP records the memory before and after a full
// collection: what is live then, against garbage not yet collected.
const afterFullGc = []
if (process.env.BENCH_EVENT_LOOP_DIR && typeof globalThis.gc === 'function') {
  process.on('SIGHUP', () => {
    const before = process.memoryUsage()
    globalThis.gc()
    const after = process.memoryUsage()
    afterFullGc.push({ at: Date.now(), before, after })
  })
}

// The benchmark sends SIGUSR2 once the service is ready: start-up (loading modules) is not a stall of serving.
process.on('SIGUSR2', () => {
  histogram.reset()
  stalls.length = 0
  collections.length = 0
})
process.on('exit', () => {
  if (!process.env.BENCH_EVENT_LOOP_DIR) return
  const worker = cluster.isWorker ? cluster.worker.id : 0
  writeFileSync(join(process.env.BENCH_EVENT_LOOP_DIR, `eld-${process.pid}.json`), JSON.stringify({
    worker, maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, meanMs: histogram.mean / 1e6,
  }))
  writeFileSync(join(process.env.BENCH_EVENT_LOOP_DIR, `trace-${process.pid}.json`), JSON.stringify({
    pid: process.pid, worker, stalls, collections, memory, afterFullGc,
  }))
})
