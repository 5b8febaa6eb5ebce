// Requests Node's HTTP parser refuses before Express sees them:
// answered in WordPress's error shape with an X-Request-Id, not Node's bare 400.
import { expect } from 'chai'
import { connect } from 'node:net'
import type { Server } from 'node:http'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { configureServer } from '../../server/http/server-setup.ts'
import { createAppServer } from '../../server/http/app-server.ts'
import { createLogger } from '../../server/log.ts'
import { loadSite } from '../fixtures/site.ts'
import { pagingLinksOf } from '../support/request.ts'

/** Sends raw bytes and returns everything the server answers before it closes. */
/** Configures `server` as main.ts does and waits until it listens: its port. */
async function listening(server: Server): Promise<number> {
  configureServer(server, createLogger('silent'))
  await new Promise((resolve) => server.once('listening', resolve))
  return (server.address() as { port: number }).port
}

async function closed(server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
}

function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('no answer within 5 s')) }, 5_000)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', () => { /* a reset still ends the exchange */ })
    socket.on('close', () => { clearTimeout(timer); resolve(Buffer.concat(chunks).toString('utf8')) })
    socket.write(bytes)
  })
}

function parse(raw: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, body] = [raw.slice(0, raw.indexOf('\r\n\r\n')), raw.slice(raw.indexOf('\r\n\r\n') + 4)]
  const [statusLine, ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) }
}

/**
 * Sends `first`, then `trickle` every 300 ms (a slowloris: each byte well
 * within any idle timeout), and returns what the server answers and when it closed.
 */
function slowExchange(port: number, first: string, trickle?: string): Promise<{ raw: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const drip = trickle === undefined ? undefined : setInterval(() => socket.write(trickle), 300)
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('no answer within 6 s')) }, 6_000)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', () => { /* a reset still ends the exchange */ })
    socket.on('close', () => {
      clearTimeout(timer)
      clearInterval(drip)
      resolve({ raw: Buffer.concat(chunks).toString('utf8'), closedAfterMs: Date.now() - started })
    })
    if (first !== '') socket.write(first)
  })
}

describe('requests the HTTP parser refuses', () => {
  let db: TestDatabase
  let t: TestApp
  let server: Server
  let port: number

  before(async () => {
    db = await createTestDatabase('parser')
    await loadSite(db)
    t = createTestApp(db, { env: { SITE_TIMEZONE: 'UTC' } })
    server = t.app.listen(0, '127.0.0.1')
    port = await listening(server)
  })
  after(async () => {
    await closed(server)
    await t.close()
    await db.drop()
  })

  const badRequest = {
    code: 'rest_bad_request',
    message: 'The request is not valid HTTP/1.1: percent-encode spaces and non-ASCII characters in the URL, use GET, HEAD or OPTIONS, and send each header as one "Name: value" line, with Content-Length or Transfer-Encoding, not both.',
    data: { status: 400 },
  }

  for (const [name, bytes] of [
    ['a raw space in the URL', 'GET /wp-json/booking-calendar/v1/slots?status=a b HTTP/1.1\r\nHost: test\r\n\r\n'],
    ['raw non-ASCII in the URL', 'GET /wp-json/booking-calendar/v1/slots?service=стрижка HTTP/1.1\r\nHost: test\r\n\r\n'],
    ['an unknown method', 'BREW /wp-json/booking-calendar/v1/slots HTTP/1.1\r\nHost: test\r\n\r\n'],
    ['a header line without a colon', 'GET /wp-json/booking-calendar/v1/slots HTTP/1.1\r\nHost: test\r\nNoColonHere\r\n\r\n'],
    ['Content-Length beside Transfer-Encoding', 'GET /wp-json/booking-calendar/v1/slots HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n'],
  ] as const) {
    it(`${name}: 400 in WordPress's shape, with X-Request-Id`, async () => {
      const answer = parse(await rawExchange(port, bytes))
      expect(answer.status).to.equal(400)
      // As every other answer: charset spelt utf-8, and the same security headers.
      expect(answer.headers['content-type']).to.equal('application/json; charset=utf-8')
      expect(answer.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/)
      expect(answer.headers['content-security-policy']).to.equal("default-src 'none'; frame-ancestors 'none'")
      expect(answer.headers['x-frame-options']).to.equal('DENY')
      expect(answer.headers['referrer-policy']).to.equal('no-referrer')
      expect(answer.headers['cache-control']).to.equal('no-store')
      expect(answer.body).to.deep.equal(badRequest)
    })
  }

  it('a URL over 16 KB: 414 in WordPress\'s shape, saying the URL is what to shorten', async () => {
    const answer = parse(await rawExchange(port, `GET /wp-json/booking-calendar/v1/slots?service=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: test\r\n\r\n`))
    expect(answer.status).to.equal(414)
    expect(answer.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/)
    expect(answer.body).to.have.property('code', 'rest_uri_too_long')
  })

  it('a URL of 20 KB arriving in one packet with its headers is 414 too; 20 KB of headers is 431', async () => {
    const longUrl = parse(await rawExchange(port, `GET /wp-json/booking-calendar/v1/slots?service=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: test\r\n\r\n`))
    expect([longUrl.status, (longUrl.body as { code: string }).code]).to.deep.equal([414, 'rest_uri_too_long'])
    const longHeaders = parse(await rawExchange(port, `GET /wp-json/booking-calendar/v1/slots?service=${'a'.repeat(2_000)} HTTP/1.1\r\nHost: test\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`))
    expect([longHeaders.status, (longHeaders.body as { code: string }).code]).to.deep.equal([431, 'rest_headers_too_large'])
  })

  it('a request target in absolute form is read as its path, its host as the Host: its user name and password reach neither a Link nor the log', async () => {
    const raw = await rawExchange(port, `GET http://someone:pw-in-url@shop.example/wp-json/booking-calendar/v1/slots?per_page=1&flat HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`)
    const answer = parse(raw)
    expect(answer.status).to.equal(200)
    expect(pagingLinksOf(answer.headers.link)).to.equal('<http://shop.example/wp-json/booking-calendar/v1/slots?per_page=1&flat&page=2>; rel="next"')
    const line = t.logs.filter((entry) => entry.msg === 'request').at(-1)!
    expect(line).to.include({ path: '/wp-json/booking-calendar/v1/slots', status: 200 })
    expect(JSON.stringify(t.logs)).to.not.include('pw-in-url')
    const other = parse(await rawExchange(port, `GET ftp://shop.example/wp-json/booking-calendar/v1/slots HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n`))
    expect((other.body as { code: string }).code).to.equal('rest_no_route')
  })

  it('a target Express\'s router cannot parse (http://[::1/…) or not a path at all (OPTIONS *): 404 in WordPress\'s shape, with the request id, the security headers and a log line, not Express\'s HTML', async () => {
    for (const [target, method, id] of [['http://[::1/wp-json/booking-calendar/v1/slots', 'GET', 'audit-abs-1'], ['*', 'OPTIONS', 'audit-star-1']] as const) {
      const answer = parse(await rawExchange(port, `${method} ${target} HTTP/1.1\r\nHost: test\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n`))
      expect(answer.status, target).to.equal(404)
      expect(answer.headers['x-request-id'], target).to.equal(id)
      expect(answer.headers['content-security-policy'], target).to.equal("default-src 'none'; frame-ancestors 'none'")
      expect(answer.headers['x-content-type-options'], target).to.equal('nosniff')
      expect(answer.body, target).to.deep.equal({ code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } })
      expect(t.logs.find((line) => line.msg === 'request' && line.requestId === id), target).to.include({ status: 404, route: 'no_route' })
    }
  })

  it('no Host header: 400 in WordPress\'s shape, with the security headers, where Node sent an empty 400', async () => {
    const answer = parse(await rawExchange(port, 'GET /wp-json/booking-calendar/v1/slots HTTP/1.1\r\nConnection: close\r\n\r\n'))
    expect(answer.status).to.equal(400)
    expect(answer.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/)
    expect(answer.headers['content-security-policy']).to.equal("default-src 'none'; frame-ancestors 'none'")
    expect(answer.body).to.deep.equal({ code: 'rest_bad_request', message: 'The request has no Host header, which HTTP/1.1 requires: send the host name of the site.', data: { status: 400 } })
  })

  it('CONNECT: 405 with Allow in WordPress\'s shape, where Node closed the connection without a word', async () => {
    const answer = parse(await rawExchange(port, 'CONNECT test:443 HTTP/1.1\r\nHost: test:443\r\n\r\n'))
    expect(answer.status).to.equal(405)
    expect(answer.headers.allow).to.equal('GET, HEAD, OPTIONS')
    expect(answer.body).to.deep.equal({ code: 'rest_no_route', message: 'Method not allowed: this API only reads. Use GET.', data: { status: 405 } })
  })

  it('headers over 16 KB: 431 in WordPress\'s shape, with X-Request-Id', async () => {
    const answer = parse(await rawExchange(port, `GET / HTTP/1.1\r\nHost: test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
    expect(answer.status).to.equal(431)
    expect(answer.headers['content-type']).to.equal('application/json; charset=utf-8')
    expect(answer.headers['content-security-policy']).to.equal("default-src 'none'; frame-ancestors 'none'")
    expect(answer.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/)
    expect(answer.body).to.deep.equal({
      code: 'rest_headers_too_large', message: 'The request headers are too large. Send at most 16 KB of headers.', data: { status: 431 },
    })
  })

  describe('a request that does not arrive whole within HEADERS_TIMEOUT_MS', () => {
    // The same app, served as main.ts serves it, with HEADERS_TIMEOUT_MS=1500.
    let timed: Server
    let timedPort: number

    before(async () => {
      timed = createAppServer(t.app, { headersTimeoutMs: 1_500 }).listen(0, '127.0.0.1')
      timedPort = await listening(timed)
    })
    after(async () => {
      await closed(timed)
    })

    for (const [name, first, trickle] of [
      ['a connection that sends nothing', '', undefined],
      ['half a request line', 'GET /wp-json/booking-cal', undefined],
      ['a head whose headers trickle in, one every 300 ms, and never end', 'GET /wp-json/booking-calendar/v1/slots HTTP/1.1\r\nHost: test\r\n', 'X-Slow: a\r\n'],
    ] as const) {
      it(`${name}: 408 in WordPress's shape within a second of the limit, and the connection closes`, async () => {
        const { raw, closedAfterMs } = await slowExchange(timedPort, first, trickle)
        expect(closedAfterMs, 'closed after').to.be.within(1_400, 2_500)
        const answer = parse(raw)
        expect(answer.status).to.equal(408)
        expect(answer.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/)
        expect(answer.headers['content-security-policy']).to.equal("default-src 'none'; frame-ancestors 'none'")
        expect(answer.body).to.deep.equal({
          code: 'rest_request_timeout', message: 'The request did not arrive whole within 1.5 seconds. Send the request line and all headers at once.', data: { status: 408 },
        })
      })
    }

    it('a connection silent for most of the limit, then half a request line: 408 within twice the limit and a second', async () => {
      const started = Date.now()
      const socket = connect(timedPort, '127.0.0.1')
      const raw = await new Promise<string>((resolve) => {
        let text = ''
        socket.on('data', (chunk: Buffer) => { text += chunk.toString('utf8') })
        socket.on('close', () => resolve(text))
        setTimeout(() => socket.write('GET /wp-json/booking'), 1_200)
      })
      expect(raw.split('\r\n')[0]).to.equal('HTTP/1.1 408 Request Timeout')
      expect(Date.now() - started, 'closed after').to.be.within(1_400, 2 * 1_500 + 1_000)
    })

    it('on a kept-alive connection, the limit counts from the next request\'s first byte, not from the previous answer', async () => {
      const { raw, closedAfterMs } = await new Promise<{ raw: string; closedAfterMs: number }>((resolve) => {
        const socket = connect(timedPort, '127.0.0.1', () => socket.write('GET /wp-json/booking-calendar/v1/ HTTP/1.1\r\nHost: test\r\n\r\n'))
        let raw = ''
        let halfSentAt = 0
        socket.on('data', (chunk: Buffer) => {
          raw += chunk.toString('utf8')
          // 1 s idle after the first answer (under Node's 5 s keep-alive), then half a request line.
          if (halfSentAt === 0) setTimeout(() => { halfSentAt = Date.now(); socket.write('GET /wp-json/booking') }, 1_000)
          halfSentAt ||= -1
        })
        socket.on('close', () => resolve({ raw, closedAfterMs: Date.now() - halfSentAt }))
      })
      expect(raw.match(/HTTP\/1\.1 \d{3}/g)).to.deep.equal(['HTTP/1.1 200', 'HTTP/1.1 408'])
      expect(closedAfterMs, 'closed after the half line by').to.be.within(1_400, 2_500)
    })

    it('a request that arrives in time is answered as usual', async () => {
      const answer = parse(await rawExchange(timedPort, 'GET /wp-json/booking-calendar/v1/slots?per_page=1 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n'))
      expect(answer.status).to.equal(200)
    })
  })
})
