// SERVICE_NICENESS: the service steps back for the site it runs beside
// (decision 0032). On a machine where reports, MariaDB and WordPress share the
// cores, the kernel then gives the site's PHP and the database's threads the
// CPU first, and the service's processes what is left; with cores to spare it
// changes nothing.
//
// Where a process may lower its niceness again (CAP_SYS_NICE, or an
// RLIMIT_NICE that allows it: planNiceness tries), each serving process steps
// back only while it makes or sends a report (ReportNiceness), so that small
// requests keep the speed they had beside a load of their own. Elsewhere the
// primary (or the one process of WORKERS=1) takes it for good, before it
// forks: workers, and every thread they start, inherit it.
import { readdirSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

export type NicenessTaken =
  | { kind: 'taken'; before: number; now: number }
  | { kind: 'kept'; now: number }
  | { kind: 'refused'; now: number; reason: string }

/**
 * Raises this process's niceness to `wanted`, never lowers it: an operator who
 * started the service nicer still (`nice -n 15`) keeps that. Raising needs no
 * privilege; a refusal (a sandbox that forbids it) is returned, not thrown.
 */
export function takeNiceness(wanted: number): NicenessTaken {
  const before = getPriority()
  if (before >= wanted) return { kind: 'kept', now: before }
  const refused = setEveryThread(wanted, 'raise only')
  if (refused !== undefined) return { kind: 'refused', now: getPriority(), reason: refused }
  return { kind: 'taken', before, now: getPriority() }
}

/** What SERVICE_NICENESS comes to in a process (planNiceness). */
export type NicenessPlan = NicenessTaken | { kind: 'while-reporting'; base: number; reporting: number }

/**
 * SERVICE_NICENESS for this process: raised on every thread, then set back to
 * what it was started at if the kernel allows that (CAP_SYS_NICE, or a soft
 * RLIMIT_NICE that reaches it). Then it is taken only while reports run
 * (ReportNiceness). Where lowering is refused, the raise stays: taken for good.
 * Trying is the one sure test: a capability held in a user namespace, seccomp
 * or a security module can refuse what /proc/self/status would allow.
 */
export function planNiceness(wanted: number): NicenessPlan {
  const taken = takeNiceness(wanted)
  if (taken.kind !== 'taken') return taken
  if (setEveryThread(taken.before) === undefined) return { kind: 'while-reporting', base: taken.before, reporting: wanted }
  // Refused: a thread lowered before the refusal goes back up with the others.
  takeNiceness(wanted)
  return { kind: 'taken', before: taken.before, now: getPriority() }
}

/**
 * A serving process's niceness while reports run: `base` (what it was started
 * at) with no report, `reporting` (SERVICE_NICENESS) from the moment a report
 * has its stream permit until the last one it runs is sent or cut. A report is
 * an answer wider than 'short' (answerSize, server/domain/slots.ts); its
 * request's end of this is in http/admission.ts.
 */
export class ReportNiceness {
  readonly base: number
  readonly reporting: number
  readonly #onStuck: (reason: string) => void
  #reports = 0
  #stuck = false

  /** `onStuck`: lowering was refused after all (a sandbox the check cannot see); the process stays at `reporting`. */
  constructor(base: number, reporting: number, onStuck: (reason: string) => void) {
    this.base = base
    this.reporting = reporting
    this.#onStuck = onStuck
  }

  /** Reports running in this process now. */
  get reports(): number {
    return this.#reports
  }

  /** A report starts; the function returned ends it (once, whatever calls it after). */
  startReport(): () => void {
    if (this.#reports++ === 0 && !this.#stuck) setEveryThread(this.reporting)
    let ended = false
    return () => {
      if (ended) return
      ended = true
      if (--this.#reports > 0 || this.#stuck) return
      const refused = setEveryThread(this.base)
      if (refused !== undefined) {
        this.#stuck = true
        this.#onStuck(refused)
      }
    }
  }
}

/**
 * Sets every thread of this process to `niceness` ('raise only': those below
 * it): undefined, or why the main thread's was refused. Linux gives each thread
 * its own niceness, and setpriority(2) on the process changes the calling
 * thread's only: V8's and libuv's threads are set one by one.
 */
function setEveryThread(niceness: number, which: 'all' | 'raise only' = 'all'): string | undefined {
  for (const thread of threadsOfThisProcess()) {
    try {
      if (which === 'all' || getPriority(thread) < niceness) setPriority(thread, niceness)
    } catch {
      // A thread that ended meanwhile; a refusal shows on the main thread's own call below.
    }
  }
  try {
    setPriority(niceness)
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** The ids of this process's threads (Linux's /proc); none where there is no /proc. */
function threadsOfThisProcess(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number).filter((id) => Number.isInteger(id) && id > 0)
  } catch {
    return []
  }
}
