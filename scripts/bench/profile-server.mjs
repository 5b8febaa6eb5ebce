// The service under profile-export.ts: the built app (dist/)
// as main.ts builds and serves it (createAppServer, not app.listen, whose
// requests V8 keeps alive through every scavenge: docs/performance.md),
// but listening on 127.0.0.1 only, and stopped by SIGTERM at
// once (so that node --cpu-prof writes its profile on the way out).
import { loadConfig } from '../../dist/server/config.js'
import { createDb } from '../../dist/db/connect.js'
import { createApp } from '../../dist/server/app.js'
import { createLogger } from '../../dist/server/log.js'
import { createAppServer } from '../../dist/server/tools.js'

const config = loadConfig()
const log = createLogger(config.logLevel)
const handle = createDb({ ...config.database, tablePrefix: config.tablePrefix, poolSize: config.dbPoolSize, queryTimeoutMs: config.queryTimeoutMs })
const server = createAppServer(createApp({ db: handle.db, pool: handle.pool, config, log }), { headersTimeoutMs: config.headersTimeoutMs }).listen(config.port, '127.0.0.1')
process.once('SIGTERM', () => {
  server.closeAllConnections()
  server.close()
  void handle.close().finally(() => process.exit(0))
})
