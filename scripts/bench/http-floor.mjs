// The bench's HTTP floor: node:http under node:cluster with WORKERS workers,
// answering every request with the same fixed body (BENCH_BODY_FILE) and no
// database. What no Node service on this machine can beat for that answer.
import cluster from 'node:cluster'
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'

const workers = Number(process.env.WORKERS ?? 1)
if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork()
  process.on('SIGTERM', () => process.exit(0))
} else {
  const body = readFileSync(process.env.BENCH_BODY_FILE)
  createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': body.length })
    res.end(body)
  }).listen(Number(process.env.PORT), '127.0.0.1')
}
