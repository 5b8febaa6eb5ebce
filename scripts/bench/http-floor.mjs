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
// FLOOR_KIND=http+export: an export's floor over HTTP. node:http that, for each
// request, runs the export's own statements as the service does (in one
// transaction, its count (BENCH_COUNT_SQL), then its rows (BENCH_SQL)), takes
// each row packet, decodes nothing, and writes BENCH_ROW_BYTES bytes for it (as
// many as the service writes a row, on average) into 64 KiB chunks sent as they
// fill, the connection paused while the socket is behind: the least work any
// Node service streaming that export to its client does, so what none can beat.
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
  if (process.env.FLOOR_KIND === 'http+export') {
    const { createPool } = await import('mysql2')
    const { takeRowPackets } = await import('../../dist/db/row-packets.js')
    const pool = createPool({ ...JSON.parse(process.env.BENCH_DB), connectionLimit: 2, charset: 'UTF8MB4_UNICODE_520_CI' })
    createServer((req, res) => (req.url === '/ready' ? res.end() : exportOnce(pool, takeRowPackets, res))).listen(Number(process.env.PORT), '127.0.0.1')
  } else if (process.env.FLOOR_KIND === 'http+sql' || process.env.FLOOR_KIND === 'express+sql') {
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

/** http+export: one export, streamed (see the top of this file). */
function exportOnce(pool, takeRowPackets, res) {
  const CHUNK = 64 * 1024
  const rowBytes = Number(process.env.BENCH_ROW_BYTES)
  // What each row's bytes are copied from: any bytes will do, the client only counts them.
  const text = Buffer.alloc(rowBytes, 0x61)
  const fail = () => {
    res.destroy()
  }
  pool.getConnection((error, connection) => {
    if (error) return fail()
    const run = (sql, values = []) => new Promise((done, failed) => connection.query(sql, values, (e, rows) => (e ? failed(e) : done(rows))))
    // Chunks go back to a free list once the socket has written them, as the service's do.
    const free = []
    let chunk = Buffer.allocUnsafe(CHUNK)
    let used = 0
    const send = () => {
      const sent = used === CHUNK ? chunk : chunk.subarray(0, used)
      const whole = chunk
      const flowing = res.write(sent, () => free.push(whole))
      chunk = free.pop() ?? Buffer.allocUnsafe(CHUNK)
      used = 0
      return flowing
    }
    const rows = () => new Promise((done, failed) => {
      const sent = connection.query({ sql: process.env.BENCH_SQL, values: JSON.parse(process.env.BENCH_SQL_VALUES) })
      let paused = false
      takeRowPackets(sent, {
        accepts: () => true,
        row: () => {
          if (used + rowBytes > CHUNK && !send() && !paused) {
            paused = true
            connection.pause()
            res.once('drain', () => { paused = false; connection.resume() })
          }
          text.copy(chunk, used)
          used += rowBytes
        },
      })
      sent.on('error', failed)
      sent.on('end', done)
    })
    run('START TRANSACTION')
      .then(() => run(process.env.BENCH_COUNT_SQL, JSON.parse(process.env.BENCH_COUNT_VALUES)))
      .then((counted) => {
        res.writeHead(200, { 'Content-Type': 'text/csv; charset=utf-8', 'X-WP-Total': String(Object.values(counted[0])[0]) })
        return rows()
      })
      .then(() => run('COMMIT'))
      .then(() => {
        if (used > 0) send()
        res.end()
        connection.release()
      }, () => {
        connection.destroy()
        fail()
      })
  })
}
