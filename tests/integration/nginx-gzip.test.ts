// Compression through the compose stack's nginx (docker/nginx/templates), run
// here with Debian's nginx in front of the service (API.md, "Spreadsheets and BI
// tools"): JSON, CSV and iCalendar gzipped for a client that asks, the weak ETag
// through as it is and a 304 for it, and a large export streamed whole while the
// nginx worker's memory stays flat.
import { expect } from 'chai'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { gunzipSync, createGunzip } from 'node:zlib'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { nginxWorkerPids, residentKib, startNginx, type NginxProxy } from '../support/nginx.ts'
import { demoDataSql } from '../../db/demo-data.ts'

const BOOKINGS = 30_000
const PREFIX = '/wp-json/booking-calendar/v1'

/** An answer's text without iCalendar's DTSTAMP lines, which name the second it was written. */
const withoutStamps = (body: Buffer) => body.toString('utf8').replace(/^DTSTAMP:.*\r\n/gm, '')

interface RawAnswer { status: number; headers: IncomingHttpHeaders; body: Buffer }

/** One GET, the body as the bytes that came over the wire (node:http does not decompress). */
function get(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 60 s`)))
    req.on('error', reject)
    req.end()
  })
}

describe('nginx in front (docker/nginx/templates): compression', function () {
  this.timeout(180_000)
  let db: TestDatabase
  let t: TestApp
  let api: Server
  let direct: string
  let proxy: NginxProxy

  before(async () => {
    db = await createTestDatabase('nginx_gzip')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
    t = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin' } })
    api = t.app.listen(0, '127.0.0.1')
    await new Promise((resolve) => api.once('listening', resolve))
    direct = `http://127.0.0.1:${(api.address() as AddressInfo).port}`
    // No WordPress here: nothing of these tests goes to it.
    proxy = await startNginx({ api: direct.slice('http://'.length), wordpress: '127.0.0.1:9' })
  })
  after(async () => {
    await proxy?.stop()
    api?.closeAllConnections()
    await new Promise((resolve) => api?.close(resolve))
    await t?.close()
    await db?.drop()
  })

  const ANSWERS = [
    { path: `${PREFIX}/slots?flat&start=2026-01-01&end=2026-01-31`, type: 'application/json; charset=utf-8' },
    { path: `${PREFIX}/slots?format=csv&start=2026-01-01&end=2026-01-31`, type: 'text/csv; charset=utf-8' },
    { path: `${PREFIX}/slots?format=ics&start=2026-01-01&end=2026-01-31`, type: 'text/calendar; charset=utf-8' },
    { path: `${PREFIX}/summary?start=2026-01-01&end=2026-12-31&group_by=month,service`, type: 'application/json; charset=utf-8' },
    { path: `${PREFIX}/disabled-time?format=ics&start=2026-01-01&end=2026-03-31`, type: 'text/calendar; charset=utf-8' },
  ]

  it('gzips JSON, CSV and iCalendar for a client that asks, the same bytes as the service\'s; as they are for one that does not', async () => {
    for (const { path, type } of ANSWERS) {
      const original = await get(direct + path)
      expect(original.status, path).to.equal(200)
      expect(original.headers['content-type'], path).to.equal(type)
      expect(original.body.length, path).to.be.above(1024)
      // The service's bytes for the proxy's address (a feed's UIDs name the host the client used).
      const plain = await get(proxy.url + path)
      expect(plain.headers['content-encoding'], path).to.equal(undefined)
      if (!type.startsWith('text/calendar')) expect(plain.body.equals(original.body), path).to.equal(true)
      const gzipped = await get(proxy.url + path, { 'Accept-Encoding': 'gzip, deflate, br' })
      expect(gzipped.status, path).to.equal(200)
      expect(gzipped.headers['content-encoding'], path).to.equal('gzip')
      expect(gzipped.headers['content-type'], path).to.equal(type)
      expect(gzipped.headers.vary, path).to.include('Accept-Encoding')
      expect(gzipped.body.length, path).to.be.below(original.body.length / 3)
      expect(withoutStamps(gunzipSync(gzipped.body)), path).to.equal(withoutStamps(plain.body))
    }
  })

  it('gzips for a request that came through another proxy too (gzip_proxied any), and leaves a short answer as it is', async () => {
    const path = ANSWERS[0]!.path
    const viaProxy = await get(proxy.url + path, { 'Accept-Encoding': 'gzip', Via: '1.1 cdn.example' })
    expect(viaProxy.headers['content-encoding']).to.equal('gzip')
    const short = await get(`${proxy.url}${PREFIX}/slots?per_page=1&_fields=id`, { 'Accept-Encoding': 'gzip' })
    expect(short.status).to.equal(200)
    expect(Number(short.headers['content-length'])).to.be.below(1024)
    expect(short.headers['content-encoding']).to.equal(undefined)
  })

  it('passes the weak ETag as it is, and If-None-Match with it through nginx gets the service\'s 304', async () => {
    for (const { path } of ANSWERS) {
      const original = await get(direct + path)
      const tag = original.headers.etag!
      expect(tag, path).to.match(/^W\/"/)
      const gzipped = await get(proxy.url + path, { 'Accept-Encoding': 'gzip' })
      expect(gzipped.headers['content-encoding'], path).to.equal('gzip')
      expect(gzipped.headers.etag, path).to.equal(tag)
      const again = await get(proxy.url + path, { 'Accept-Encoding': 'gzip', 'If-None-Match': gzipped.headers.etag! })
      expect(again.status, path).to.equal(304)
      expect(again.body.length, path).to.equal(0)
      expect(again.headers.etag, path).to.equal(tag)
      const stale = await get(proxy.url + path, { 'Accept-Encoding': 'gzip', 'If-None-Match': 'W/"not-this-one"' })
      expect(stale.status, path).to.equal(200)
    }
  })

  it('streams a large export gzipped: the first bytes come before the service is done, all of it arrives, nginx\'s memory stays flat', async () => {
    const [worker, ...others] = nginxWorkerPids(proxy.pid)
    expect(worker, 'an nginx worker').to.be.a('number')
    expect(others).to.deep.equal([])
    const before = residentKib(worker!)
    let peak = before
    const sampler = setInterval(() => { peak = Math.max(peak, residentKib(worker!)) }, 10)
    const requestId = `gzip-export-${Date.now()}`
    const finishedLogged = () => t.logs.some((line) => line.msg === 'request' && line.requestId === requestId)
    try {
      const result = await new Promise<{ headers: IncomingHttpHeaders; wire: number; text: string; doneAtFirstByte: boolean }>((resolve, reject) => {
        const req = httpRequest(`${proxy.url}${PREFIX}/slots?flat`, { headers: { 'Accept-Encoding': 'gzip', 'X-Request-Id': requestId }, timeout: 120_000 }, (res) => {
          let wire = 0
          let doneAtFirstByte: boolean | undefined
          const texts: Buffer[] = []
          const gunzip = createGunzip()
          res.on('data', (chunk: Buffer) => {
            wire += chunk.length
            if (doneAtFirstByte === undefined) {
              doneAtFirstByte = finishedLogged()
              // A slow reader for a while: nginx must wait for it, not hold the answer.
              res.pause()
              setTimeout(() => res.resume(), 1_000)
            }
          })
          res.pipe(gunzip)
          gunzip.on('data', (chunk: Buffer) => texts.push(chunk))
          gunzip.on('end', () => resolve({ headers: res.headers, wire, text: Buffer.concat(texts).toString('utf8'), doneAtFirstByte: doneAtFirstByte! }))
          gunzip.on('error', reject)
        })
        req.on('timeout', () => req.destroy(new Error('the export did not arrive within 120 s')))
        req.on('error', reject)
        req.end()
      })
      expect(result.headers['content-encoding']).to.equal('gzip')
      expect(result.doneAtFirstByte, 'the service had finished before the first byte came through nginx').to.equal(false)
      const body = JSON.parse(result.text) as { booked_slots: { id: number }[]; total: number }
      expect(body.booked_slots).to.have.length(Number(result.headers['x-wp-total']))
      expect(body.booked_slots.length).to.be.above(BOOKINGS - 1_000)
      expect(new Set(body.booked_slots.map((booking) => booking.id)).size).to.equal(body.booked_slots.length)
      expect(result.text.length).to.be.above(6 * 1024 * 1024)
      // The whole answer is over 6 MB, its gzip about a tenth; the worker grows by far less than either.
      process.stdout.write(`      nginx worker RSS ${before} KiB before, ${peak} KiB at most; ${result.text.length} bytes, ${result.wire} on the wire\n`)
      expect(peak - before, `nginx worker RSS ${before} KiB, peak ${peak} KiB`).to.be.below(4 * 1024)
    } finally {
      clearInterval(sampler)
    }
  })
})
