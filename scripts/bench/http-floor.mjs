// The bench's HTTP floors: node:http under node:cluster with WORKERS workers,
// answering every request with the same fixed body (BENCH_BODY_FILE) and no
// database. What no Node service on this machine can beat for that answer.
// FLOOR_KIND=express: the same through Express 5 (one route, the service's
// path), served as the service serves its app (createAppServer, whose requests
// are Express's from the start: app.listen's own server cost up to several
// times node:http's on a machine slow at garbage collection, which the service
// does not pay; scripts/bench/README.md, thirteenth pass), what no service
// built on Express can beat.
// FLOOR_KIND=http+sql: node:http that, for each request, first runs the
// service's statement (BENCH_SQL, BENCH_SQL_VALUES) through mysql2 on a pool
// like the service's, taking each row packet and dropping it (nothing decoded,
// dist/db/row-packets.js), then sends the same fixed body: the least work any
// Node service answering from this database does, so what none can beat.
// FLOOR_KIND=express+sql: the same through Express 5 (one route, the service's
// path, served as the service serves it): what no service on Express answering
// from this database can beat.
import cluster from 'node:cluster'
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import express from 'express'

const workers = Number(process.env.WORKERS ?? 1)
if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork()
  process.on('SIGTERM', () => process.exit(0))
} else {
  // Alone, it exits on SIGTERM as the primary does (so that node --cpu-prof writes its profile).
  if (!cluster.isWorker) process.on('SIGTERM', () => process.exit(0))
  const body = readFileSync(process.env.BENCH_BODY_FILE)
  const answer = (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length })
    res.end(body)
  }
  if (process.env.FLOOR_KIND === 'http+sql' || process.env.FLOOR_KIND === 'express+sql') {
    const { createPool } = await import('mysql2')
    const { takeRowPackets } = await import('../../dist/db/row-packets.js')
    const pool = createPool({ ...JSON.parse(process.env.BENCH_DB), connectionLimit: 10, charset: 'UTF8MB4_UNICODE_520_CI' })
    const values = JSON.parse(process.env.BENCH_SQL_VALUES)
    const dropRows = { accepts: () => true, row: () => {} }
    const withStatement = (req, res) => {
      const sent = pool.query(process.env.BENCH_SQL, values, (error) => {
        if (error) {
          res.writeHead(500)
          res.end()
        } else {
          answer(req, res)
        }
      })
      takeRowPackets(sent, dropRows)
    }
    if (process.env.FLOOR_KIND === 'http+sql') {
      createServer(withStatement).listen(Number(process.env.PORT), '127.0.0.1')
    } else {
      const { createAppServer } = await import('../../dist/server/http/app-server.js')
      const app = express()
      app.get(process.env.BENCH_PATH, withStatement)
      createAppServer(app, { headersTimeoutMs: 10_000 }).listen(Number(process.env.PORT), '127.0.0.1')
    }
  } else if (process.env.FLOOR_KIND === 'express') {
    const { createAppServer } = await import('../../dist/server/http/app-server.js')
    const app = express()
    app.get(process.env.BENCH_PATH, answer)
    createAppServer(app, { headersTimeoutMs: 10_000 }).listen(Number(process.env.PORT), '127.0.0.1')
  } else {
    createServer(answer).listen(Number(process.env.PORT), '127.0.0.1')
  }
}
