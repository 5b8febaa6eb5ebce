// Issue 12: where the event loop's stalls and the memory come from, phase by
// phase. Reads the traces event-loop.mjs writes (stalls, garbage collections,
// memory samples of every service process) and the phases the benchmark
// marked, and, when the service ran under `node --cpu-prof`, the functions
// that were on the CPU during each long stall.
import { readFileSync, readdirSync, existsSync } from 'node:fs'
import { join } from 'node:path'

export interface Phase { name: string; from: number; to: number }

/** Marks phases by wall clock: `await phases.run('name', async () => ...)`. */
export class PhaseClock {
  readonly phases: Phase[] = []
  async run<T>(name: string, work: () => Promise<T>): Promise<T> {
    const from = Date.now()
    try {
      return await work()
    } finally {
      this.phases.push({ name, from, to: Date.now() })
    }
  }
}

interface Trace {
  pid: number
  worker: number
  /**
   * Each stall: its length, the CPU the process used in it (every thread), and
   * (traces since schedstat was read) its main thread's time on a core and in
   * the kernel's run queue waiting for one, over the stall and one period.
   */
  stalls: Array<{ at: number; ms: number; cpuMs: number; monotonicUs: number; mainRunMs?: number; queuedMs?: number; majorFaults?: number }>
  collections: Array<{ at: number; ms: number; kind: string; monotonicUs: number }>
  memory: Array<{ at: number; rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number }>
}

export function readTraces(dir: string): Trace[] {
  return readdirSync(dir).filter((file) => /^trace-\d+\.json$/.test(file))
    .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Trace)
    .sort((a, b) => a.worker - b.worker)
}

const longestStall = (stalls: Trace['stalls']) => {
  const top = stalls.reduce((a, b) => (b.ms > a.ms ? b : a))
  return `${top.ms.toFixed(1)} (${top.cpuMs.toFixed(0)}; ${top.queuedMs?.toFixed(0) ?? '?'})`
}
/**
 * A stall less the time its main thread waited for a core: what the process
 * itself (its work, its collector, a blocking call) kept the event loop from
 * running. The rest was the kernel giving both cores to others.
 */
export const stallLessWaitForCore = (stall: Trace['stalls'][number]) => Math.max(0, stall.ms - (stall.queuedMs ?? 0))
const longestLessWaitForCore = (stalls: Trace['stalls']) => Math.max(...stalls.map(stallLessWaitForCore)).toFixed(1)
/** A stall in which the process hardly ran was the machine's (it waited for a core); one in which it ran was its own work or its GC. */
const ownStall = (stalls: Trace['stalls']) => {
  const own = stalls.filter((stall) => stall.cpuMs >= stall.ms / 2)
  return own.length === 0 ? '' : Math.max(...own.map((stall) => stall.ms)).toFixed(1)
}
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
const inPhase = (phase: Phase, at: number) => at >= phase.from && at <= phase.to

/** A stall ends at `at`; it belongs to the phase it ended in, or to "between phases". */
function phaseOf(phases: Phase[], at: number): string {
  return phases.find((phase) => inPhase(phase, at))?.name ?? 'between phases'
}

/** One table: per phase and process, the longest stall, stalls over 20 ms, the longest GC pause, and peak memory. */
export function phaseTable(traces: Trace[], phases: Phase[]): string[] {
  const lines = [
    '| phase | process | stalls > 20 ms | longest stall ms (process CPU in it; main thread waiting for a core) | longest in which it used the CPU half the time or more, ms | longest less the wait for a core, ms | GC pauses > 5 ms (longest, kind) | peak RSS MB | peak heap used / total MB | peak external MB |',
    '|---|---|---:|---:|---:|---:|---|---:|---:|---:|',
  ]
  const all = [...phases, { name: 'between phases', from: NaN, to: NaN }]
  for (const phase of all) {
    for (const trace of traces) {
      const within = <T extends { at: number }>(items: T[]) => (phase.name === 'between phases'
        ? items.filter((item) => phaseOf(phases, item.at) === 'between phases')
        : items.filter((item) => inPhase(phase, item.at)))
      const stalls = within(trace.stalls)
      const collections = within(trace.collections)
      const memory = within(trace.memory)
      if (phase.name === 'between phases' && stalls.length === 0 && collections.length === 0) continue
      const longestGc = collections.reduce((top, c) => (c.ms > (top?.ms ?? 0) ? c : top), undefined as Trace['collections'][number] | undefined)
      const max = (pick: (m: Trace['memory'][number]) => number) => (memory.length === 0 ? NaN : Math.max(...memory.map(pick)))
      lines.push(`| ${phase.name} | ${trace.worker === 0 ? 'primary' : `worker ${trace.worker}`} | ${stalls.length} | ${stalls.length === 0 ? '' : longestStall(stalls)} | ${ownStall(stalls)} | ${stalls.length === 0 ? '' : longestLessWaitForCore(stalls)} | ` +
        `${collections.length === 0 ? '' : `${collections.length} (${longestGc!.ms.toFixed(1)} ${longestGc!.kind})`} | ` +
        `${memory.length === 0 ? '' : mb(max((m) => m.rss))} | ${memory.length === 0 ? '' : `${mb(max((m) => m.heapUsed))} / ${mb(max((m) => m.heapTotal))}`} | ${memory.length === 0 ? '' : mb(max((m) => m.external))} |`)
    }
  }
  return lines
}

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] }

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame
  const where = url ? `${url.replace(/^.*\/(node_modules|dist|scripts)\//, '$1/').replace(/^file:\/\//, '')}:${lineNumber + 1}` : ''
  return `${functionName || '(anonymous)'} ${where}`.trim()
}

/**
 * The longest stalls of each process with what ran during them: the functions
 * with the most self time, and the innermost of our own (dist/) frames, from
 * the process's .cpuprofile (its file name holds the pid).
 */
export function stallCulprits(traces: Trace[], phases: Phase[], profileDir: string, perProcess = 6): string[] {
  const lines: string[] = []
  const files = existsSync(profileDir) ? readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')) : []
  for (const trace of traces) {
    const file = files.find((f) => f.split('.').includes(String(trace.pid)))
    // The process's own stalls (it ran for half of it or more) first, longest first; then the machine's.
    const own = (stall: Trace['stalls'][number]) => stall.cpuMs >= stall.ms / 2
    const longest = [...trace.stalls].sort((a, b) => Number(own(b)) - Number(own(a)) || b.ms - a.ms).slice(0, perProcess)
    if (longest.length === 0) continue
    const profile = file ? JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile : undefined
    const byId = new Map(profile?.nodes.map((n) => [n.id, n]))
    const parent = new Map<number, number>()
    for (const node of profile?.nodes ?? []) for (const child of node.children ?? []) parent.set(child, node.id)
    const times: number[] = []
    if (profile) {
      let t = profile.startTime
      for (const delta of profile.timeDeltas) times.push((t += delta))
    }
    lines.push(`- ${trace.worker === 0 ? 'primary' : `worker ${trace.worker}`} (pid ${trace.pid}):`)
    for (const stall of longest) {
      const gc = trace.collections.filter((c) => c.monotonicUs <= stall.monotonicUs && c.monotonicUs + c.ms * 1000 >= stall.monotonicUs - stall.ms * 1000)
      const gcText = gc.length === 0 ? 'no GC pause > 5 ms in it' : `GC in it: ${gc.map((c) => `${c.kind} ${c.ms} ms`).join(', ')}`
      let culprits = ''
      if (profile) {
        const self = new Map<string, number>()
        const ours = new Map<string, number>()
        let total = 0
        for (let i = 0; i < times.length; i++) {
          if (times[i]! < stall.monotonicUs - stall.ms * 1000 || times[i]! > stall.monotonicUs) continue
          const delta = profile.timeDeltas[i + 1] ?? 0
          total += delta
          const node = byId.get(profile.samples[i]!)!
          self.set(frameName(node), (self.get(frameName(node)) ?? 0) + delta)
          for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
            const frame = byId.get(id)!
            if (frame.callFrame.url.includes('/dist/')) {
              ours.set(frameName(frame), (ours.get(frameName(frame)) ?? 0) + delta)
              break
            }
          }
        }
        const top = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([name, us]) => `${name} ${(us / 1000).toFixed(1)}`).join('; ')
        culprits = total === 0 ? '; no profile samples' : `; self ms: ${top(self)}; innermost of ours: ${top(ours) || 'none'}`
      }
      lines.push(`  - ${stall.ms} ms (process CPU in it ${stall.cpuMs} ms) in ${phaseOf(phases, stall.at)}, ${gcText}${culprits}`)
    }
  }
  return lines
}
