// SERVICE_NICENESS as the test runner can check it (server/niceness.ts):
// whether a process of this runner may lower its niceness again, and a
// command under which one may not, even as root.
import { spawnSync } from 'node:child_process'
import type { NicenessPlan } from '../../server/niceness.ts'

const niceness = new URL('../../server/niceness.ts', import.meta.url).pathname

/** prlimit(1) and setpriv(1) (util-linux): RLIMIT_NICE 0 and no CAP_SYS_NICE for what runs under it. */
export const NO_LOWERING = ['prlimit', '--nice=0:0', '--', 'setpriv', '--bounding-set=-sys_nice', '--inh-caps=-sys_nice', '--']

/** A script's JSON on stdout, run by node in a process of its own under `under` (a command that execs it). */
export function runNodeScript(script: string, under: string[] = []): unknown {
  const [command, ...args] = [...under, process.execPath, '--import', 'tsx', '--input-type=module', '-e', script]
  const run = spawnSync(command, args, { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${command} exited with ${run.status}: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

/** planNiceness(wanted) in a process of its own, with the niceness of every thread after it. */
export function planIn(wanted: number, under: string[] = []): { plan: NicenessPlan; threads: number[] } {
  return runNodeScript(`import { readdirSync } from 'node:fs'; import { getPriority } from 'node:os'; import { planNiceness } from ${JSON.stringify(niceness)};
    const plan = planNiceness(${wanted}); const threads = [...new Set(readdirSync('/proc/self/task').map((t) => getPriority(Number(t))))]
    process.stdout.write(JSON.stringify({ plan, threads }))`, under) as { plan: NicenessPlan; threads: number[] }
}

/** Whether a process of this runner, raised to 10, may come back down (root with CAP_SYS_NICE may). */
export function runnerMayLowerNiceness(): boolean {
  return planIn(10).plan.kind === 'while-reporting'
}

/** Whether NO_LOWERING runs here (setpriv needs CAP_SETPCAP to drop a capability). */
export function noLoweringRuns(): boolean {
  return spawnSync(NO_LOWERING[0]!, [...NO_LOWERING.slice(1), 'true']).status === 0
}
