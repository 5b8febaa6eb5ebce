// The bench's HTTP floors: node:http under node:cluster with WORKERS workers,
// answering every request with the same fixed body (BENCH_BODY_FILE) and no
// database. What no Node service on this machine can beat for that answer.
// FLOOR_KIND=express: the same through Express 5 (one route, the service's
// path), what no service built on Express can beat.
import cluster from 'node:cluster'
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import express from 'express'

const workers = Number(process.env.WORKERS ?? 1)
if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork()
  process.on('SIGTERM', () => process.exit(0))
} else {
  const body = readFileSync(process.env.BENCH_BODY_FILE)
  const answer = (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length })
    res.end(body)
  }
  if (process.env.FLOOR_KIND === 'express') {
    const app = express()
    app.get(process.env.BENCH_PATH, answer)
    app.listen(Number(process.env.PORT), '127.0.0.1')
  } else {
    createServer(answer).listen(Number(process.env.PORT), '127.0.0.1')
  }
}
