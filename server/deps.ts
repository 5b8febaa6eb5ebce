// What every route handler is given: the database, configuration, logger,
// clock and site time zone. Apart from app.ts so that routes/ need not import
// the app that imports them.
import type { Request } from 'express'
import type { Logger } from 'pino'
import type { Db, DbPools } from '../db/connect.ts'
import type { Config } from './config.ts'
import type { SiteTimezone } from './site-timezone.ts'
import type { SiteIndex } from './site-index.ts'
import type { RuleProblemLog } from './domain/disabled-time.ts'
import type { AnswerHolding } from './http/held-answer.ts'
import type { ReportNiceness } from './niceness.ts'
import type { ChangesFeed } from './change-source.ts'

export interface Deps {
  db: Db
  /** The pools under `db`: the bookings answer reads its cursor directly (db/snapshot.ts). */
  pool: DbPools
  config: Config
  log: Logger
  siteTimezone: SiteTimezone
  /** What the root index shows of the site, kept for a minute (site-index.ts). */
  siteIndex: SiteIndex
  /** The clock; tests set it, so no test depends on the real date. */
  now: () => number
  /** Whether bookings of this request carry `customer` (API.md, "Access"). */
  exposeCustomer: (req: Request) => boolean
  /** What streamed answers hold for clients that have not read them (HOLD_*), so their stream permits go when the rows are out. */
  holding: AnswerHolding
  /** Broken disabled-time rules already logged. */
  ruleProblems: RuleProblemLog
  /** SERVICE_NICENESS taken while reports run, where the process may lower it again; else undefined (server/niceness.ts). */
  reportNiceness?: ReportNiceness
  /** Where changes/ reads what changed: the database's log or digests per period (server/change-source.ts). */
  changes: ChangesFeed
}
