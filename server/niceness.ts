// SERVICE_NICENESS: the service steps back for the site it runs beside
// (decision 0032). On a machine where reports, MariaDB and WordPress share the
// cores, the kernel then gives the site's PHP and the database's threads the
// CPU first, and the service's processes what is left; with cores to spare it
// changes nothing. Taken once by the primary (or the one process of
// WORKERS=1) before it forks: workers, and every thread they start, inherit it.
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
  try {
    // Linux gives each thread its own niceness, and setpriority(2) on the process changes the calling
    // thread's only: V8's and libuv's threads, started before this, are raised one by one.
    for (const thread of threadsOfThisProcess()) {
      try {
        if (getPriority(thread) < wanted) setPriority(thread, wanted)
      } catch {
        // A thread that ended meanwhile; a refusal shows on the main thread's own call below.
      }
    }
    setPriority(wanted)
  } catch (error) {
    return { kind: 'refused', now: getPriority(), reason: error instanceof Error ? error.message : String(error) }
  }
  return { kind: 'taken', before, now: getPriority() }
}

/** The ids of this process's threads (Linux's /proc); none where there is no /proc. */
function threadsOfThisProcess(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number).filter((id) => Number.isInteger(id) && id > 0)
  } catch {
    return []
  }
}
