// A child of young-survival.ts: one route answering "ok", served as SERVER_KIND says:
// `express` (http.createServer(app), as app.listen does: Express 5 as it is), `app-server` (the service's
// createAppServer, server/http/app-server.ts), or `http` (node:http alone).
import { createServer } from 'node:http'
import express from 'express'
import { createAppServer } from '../../dist/server/http/app-server.js'

const kind = process.env.SERVER_KIND
const answer = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 2 })
  res.end('ok')
}
const app = express()
app.get('/ok', answer)
// app.listen is http.createServer(app), then listen.
const server = kind === 'http' ? createServer(answer) : kind === 'app-server' ? createAppServer(app, { headersTimeoutMs: 10_000 }) : createServer(app)
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
