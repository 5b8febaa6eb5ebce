// Which source changes/ reads (API.md, "GET changes/", Sources), chosen once
// at start and always named: in the start-up log, /readyz's body and /metrics.
// CHANGES_SOURCE=auto takes the database's log when every requirement holds
// (db/binlog-requirements.ts), else digests per period, with the first
// requirement that failed logged. =log insists: until the log can be read,
// changes/ answers 503 and the requirements are checked again every minute.
import type { Logger } from 'pino'
import type { ChangeLog, ChangeLogState } from '../db/change-log.ts'
import type { ChangesSource } from './domain/changes.ts'
import { RestError } from './errors.ts'

export interface ChangesStatus {
  /** 'waiting': CHANGES_SOURCE=log and a requirement does not hold yet; 'deciding': the start-up checks still run. */
  source: 'log' | 'digest' | 'waiting' | 'deciding'
  /** Why not the log: the first requirement that failed, or the setting. */
  reason?: string
  /** The log reader's state, in the log source. */
  reader?: ChangeLogState
}

export interface ChangesFeed {
  /** The source in use; waits for the start-up decision. 503 while CHANGES_SOURCE=log cannot read the log. */
  source(): Promise<ChangesSource>
  status(): ChangesStatus
  stop(): Promise<void>
}

export type RequirementsCheck = () => Promise<{ ok: true } | { ok: false; missing: string }>

export interface ChangesFeedOptions {
  setting: 'auto' | 'log' | 'digest'
  log: Logger
  checkRequirements: RequirementsCheck
  startLog: () => ChangeLog
  /** How often CHANGES_SOURCE=log checks again while a requirement fails. */
  recheckMs?: number
}

/** The digest source alone, for a reason (tests, and processes that never read the log). */
export function digestFeed(reason: string): ChangesFeed {
  const source: ChangesSource = { kind: 'digest' }
  return { source: async () => source, status: () => ({ source: 'digest', reason }), stop: async () => {} }
}

/** The log source over a reader already running (tests; a cluster worker's channel to its primary's reader). */
export function logFeed(changeLog: ChangeLog): ChangesFeed {
  const source: ChangesSource = { kind: 'log', log: changeLog }
  return { source: async () => source, status: () => ({ source: 'log', reader: changeLog.state() }), stop: () => changeLog.stop() }
}

export function startChangesFeed(options: ChangesFeedOptions): ChangesFeed {
  const { setting, log } = options
  if (setting === 'digest') {
    log.info({ changesSource: 'digest' }, 'changes/ reads digests per period (CHANGES_SOURCE=digest)')
    return digestFeed('CHANGES_SOURCE=digest')
  }
  let status: ChangesStatus = { source: 'deciding' }
  let changeLog: ChangeLog | undefined
  let stopped = false
  let recheck: NodeJS.Timeout | undefined
  const decide = async (): Promise<ChangesSource | undefined> => {
    let verdict: Awaited<ReturnType<RequirementsCheck>>
    try {
      verdict = await options.checkRequirements()
    } catch (error) {
      verdict = { ok: false, missing: `the requirements could not be checked (${error instanceof Error ? error.message : String(error)})` }
    }
    if (stopped) return undefined
    if (verdict.ok) {
      changeLog = options.startLog()
      status = { source: 'log' }
      log.info({ changesSource: 'log' }, 'changes/ reads the database\'s binary log')
      return { kind: 'log', log: changeLog }
    }
    if (setting === 'auto') {
      status = { source: 'digest', reason: verdict.missing }
      // info, not warn: digests are a source of their own, the only one shared hosting allows (docs/changes.md).
      log.info({ changesSource: 'digest', reason: verdict.missing }, `changes/ reads digests per period, not the database's log: ${verdict.missing}`)
      return { kind: 'digest' }
    }
    status = { source: 'waiting', reason: verdict.missing }
    log.error({ changesSource: 'log', reason: verdict.missing }, `CHANGES_SOURCE=log, but the database's log cannot be read: ${verdict.missing}; changes/ answers 503 until it can`)
    return undefined
  }
  let decided = decide()
  const scheduleRecheck = () => {
    recheck = setTimeout(() => {
      decided = decide()
      void decided.then((source) => { if (source === undefined && !stopped) scheduleRecheck() })
    }, options.recheckMs ?? 60_000)
    recheck.unref()
  }
  void decided.then((source) => { if (source === undefined && !stopped) scheduleRecheck() })
  return {
    async source() {
      const source = await decided
      if (source !== undefined) return source
      throw new RestError(503, 'rest_database_unavailable', 'changes/ reads the database\'s log (CHANGES_SOURCE=log), which cannot be read now; the cause is in the service\'s log.', { retryAfterSeconds: 60 })
    },
    status: () => (status.source === 'log' && changeLog ? { ...status, reader: changeLog.state() } : status),
    async stop() {
      stopped = true
      clearTimeout(recheck)
      await decided.catch(() => undefined)
      await changeLog?.stop()
    },
  }
}
