// Driver errors mapped in one place (server/errors.ts), and the raw answer to
// requests Node's parser refuses (server/http/server-setup.ts). Error codes are a
// closed union (STYLE.md, "Errors"): `npm test` typechecks first, so the
// expected type error below fails the run if the union ever takes any string again.
import { expect } from 'chai'
import { maxHeaderSize } from 'node:http'
import { RestError, toRestError, WORDPRESS_AUTH_CODES } from '../../server/errors.ts'
import { DbTimeoutError, DbUnavailableError } from '../../db/bounded-pool.ts'
import { parserRefusal, refusalFor } from '../../server/http/server-setup.ts'

describe('toRestError', () => {
  const cases: [string, unknown, { status: number; code: string; retryAfterSeconds: number } | undefined][] = [
    ['our statement or row timer (BC_DB_TIMEOUT)', new DbTimeoutError('x'), { status: 504, code: 'rest_query_timeout', retryAfterSeconds: 5 }],
    ['ER_STATEMENT_TIMEOUT from the server', { errno: 1969 }, { status: 504, code: 'rest_query_timeout', retryAfterSeconds: 5 }],
    ['ER_QUERY_TIMEOUT from MySQL (max_execution_time)', { errno: 3024 }, { status: 504, code: 'rest_query_timeout', retryAfterSeconds: 5 }],
    ['ER_QUERY_INTERRUPTED (a KILL QUERY)', { errno: 1317 }, { status: 504, code: 'rest_query_timeout', retryAfterSeconds: 5 }],
    ['no free connection in time (BC_DB_UNAVAILABLE)', new DbUnavailableError('x'), { status: 503, code: 'rest_database_unavailable', retryAfterSeconds: 2 }],
    ['connect ETIMEDOUT (a hung server)', { code: 'ETIMEDOUT', fatal: true }, { status: 503, code: 'rest_database_unavailable', retryAfterSeconds: 5 }],
    ['PROTOCOL_CONNECTION_LOST (a killed server)', { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }, { status: 503, code: 'rest_database_unavailable', retryAfterSeconds: 5 }],
    ['an SQL error', { code: 'ER_BAD_FIELD_ERROR', errno: 1054 }, undefined],
    ['a client that hung up', { code: 'ERR_STREAM_PREMATURE_CLOSE' }, undefined],
  ]
  for (const [name, error, expected] of cases) {
    it(`${name}: ${expected ? `${expected.status} ${expected.code}, Retry-After ${expected.retryAfterSeconds}` : 'not a known error'}`, () => {
      const known = toRestError(error)
      expect(known && { status: known.status, code: known.code, retryAfterSeconds: known.extra.retryAfterSeconds }).to.deep.equal(expected)
    })
  }
})

describe('parserRefusal', () => {
  it('headers too large: 431 rest_headers_too_large, JSON with its length, the request id, and Connection: close', () => {
    const raw = parserRefusal(refusalFor('HPE_HEADER_OVERFLOW', Buffer.from('GET / HTTP/1.1\r\nX-Big: aaaa'), 10_000), 'id-1')
    const [head, body] = raw.split('\r\n\r\n')
    expect(head!.split('\r\n')[0]).to.equal('HTTP/1.1 431 Request Header Fields Too Large')
    expect(head).to.include('\r\nX-Request-Id: id-1\r\n').and.include('\r\nConnection: close')
    expect(head).to.include(`\r\nContent-Length: ${Buffer.byteLength(body!)}\r\n`)
    expect(JSON.parse(body!)).to.deep.equal({
      code: 'rest_headers_too_large', message: 'The request headers are too large. Send at most 16 KB of headers.', data: { status: 431 },
    })
  })

  it('a whole head in one packet: 414 when its request line is half of Node\'s limit or more, else 431', () => {
    const status = (urlBytes: number) => parserRefusal(refusalFor('HPE_HEADER_OVERFLOW',
      Buffer.from(`GET /${'a'.repeat(urlBytes)} HTTP/1.1\r\nHost: test\r\nX-Big: ${'b'.repeat(9_000)}\r\n\r\n`), 10_000), 'id').split('\r\n')[0]
    expect([status(maxHeaderSize / 2), status(maxHeaderSize / 2 - 20)]).to.deep.equal(['HTTP/1.1 414 URI Too Long', 'HTTP/1.1 431 Request Header Fields Too Large'])
  })

  it('a request line over the limit (no line end in what the parser read): 414 rest_uri_too_long, saying the URL is what to shorten', () => {
    for (const packet of [Buffer.from(`GET /wp-json/booking-calendar/v1/slots?service=${'a'.repeat(100)}`), undefined]) {
      const raw = parserRefusal(refusalFor('HPE_HEADER_OVERFLOW', packet, 10_000), 'id-3')
      expect(raw.split('\r\n')[0]).to.equal(packet ? 'HTTP/1.1 414 URI Too Long' : 'HTTP/1.1 431 Request Header Fields Too Large')
    }
    expect(JSON.parse(parserRefusal(refusalFor('HPE_HEADER_OVERFLOW', Buffer.from('GET /x'), 10_000), 'id').split('\r\n\r\n')[1]!)).to.deep.equal({
      code: 'rest_uri_too_long', message: 'The URL is too long. Keep the request line under 16 KB; ask for a shorter list of values, or page through the answer.', data: { status: 414 },
    })
  })

  it('an Allow header when given one (CONNECT\'s 405)', () => {
    const raw = parserRefusal({ status: 405, reason: 'Method Not Allowed', code: 'rest_no_route', message: 'x' }, 'id', 'GET, HEAD, OPTIONS')
    expect(raw.split('\r\n').slice(0, 2)).to.deep.equal(['HTTP/1.1 405 Method Not Allowed', 'Allow: GET, HEAD, OPTIONS'])
  })

  it('a request not whole within the server\'s headersTimeout: 408 rest_request_timeout, naming the seconds', () => {
    const raw = parserRefusal(refusalFor('ERR_HTTP_REQUEST_TIMEOUT', Buffer.from('GET /wp-json/booking-cal'), 2_500), 'id-4')
    expect(raw.split('\r\n')[0]).to.equal('HTTP/1.1 408 Request Timeout')
    expect(JSON.parse(raw.split('\r\n\r\n')[1]!)).to.deep.equal({
      code: 'rest_request_timeout', message: 'The request did not arrive whole within 2.5 seconds. Send the request line and all headers at once.', data: { status: 408 },
    })
    expect(parserRefusal(refusalFor('ERR_HTTP_REQUEST_TIMEOUT', undefined, 1_000), 'id-5')).to.include('within 1 second. Send')
  })

  for (const code of ['HPE_INVALID_METHOD', 'HPE_INVALID_CONSTANT', undefined]) {
    it(`${code ?? 'no code'}: 400 rest_bad_request`, () => {
      const raw = parserRefusal(refusalFor(code, undefined, 10_000), 'id-2')
      expect(raw.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request')
      expect(JSON.parse(raw.split('\r\n\r\n')[1]!).code).to.equal('rest_bad_request')
    })
  }
})

describe('RestError codes', () => {
  it('takes the codes WordPress spells, and a misspelt one does not compile', () => {
    expect(new RestError(400, 'rest_invalid_param', 'x').code).to.equal('rest_invalid_param')
    // @ts-expect-error: rest_invalid_parm is no code of ours.
    expect(new RestError(400, 'rest_invalid_parm', 'x').code).to.equal('rest_invalid_parm')
    expect(WORDPRESS_AUTH_CODES).to.include('incorrect_password')
  })
})
