// changes/'s source as main.ts starts it (server/change-source.ts): the
// requirements checked with the service's own account, and the one log reader
// of the instance (db/binlog-change-log.ts) started only when they hold.
// Loaded by the process that reads the log: the primary under WORKERS > 1, or
// the one process.
import { hostname } from 'node:os'
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import { startChangesFeed, type ChangesFeed } from './change-source.ts'
import { settledTarget, type MysqlTarget } from '../db/connection-options.ts'

/**
 * BINLOG_SERVER_ID when set; else one derived from the host name and port,
 * so two instances on two hosts (or containers) differ without a setting. In
 * 1,000,000 to 2^31: clear of the small ids replicas are usually given.
 */
export function defaultBinlogServerId(host: string, port: number): number {
  const hash = createHash('sha256').update(`${host}:${port}`).digest().readUInt32BE(0)
  return 1_000_000 + (hash % 2_146_483_647)
}

export async function startConfiguredChangesFeed(config: Config, log: Logger): Promise<ChangesFeed> {
  const [{ checkBinlogRequirements }, { startBinlogChangeLog }] = await Promise.all([import('../db/binlog-requirements.ts'), import('../db/binlog-change-log.ts')])
  // Under DB_SSL_MODE=PREFERRED, TLS when the server offers it, as the service's pools connect (db/connection-options.ts).
  let target: MysqlTarget | undefined
  const serverId = config.binlogServerId || defaultBinlogServerId(hostname(), config.port)
  return startChangesFeed({
    setting: config.changesSource,
    log,
    checkRequirements: async () => {
      target = await settledTarget(config.database)
      return await checkBinlogRequirements(target)
    },
    startLog: () => {
      log.info({ binlogServerId: serverId }, `reading the database's binary log as replica ${serverId}`)
      return startBinlogChangeLog({ target: target!, serverId, prefix: config.tablePrefix, log })
    },
  })
}
