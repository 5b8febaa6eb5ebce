// Settings of the HTTP server itself (main.ts calls configureServer once):
// requests that Node's parser refuses before Express sees them are answered in
// WordPress's error shape too, with an X-Request-Id, instead of Node's bare 400.
import { randomUUID } from 'node:crypto'
import { maxHeaderSize, type Server } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from 'pino'
import { methodNotAllowed, type RestErrorCode } from '../errors.ts'
import { SECURITY_HEADERS } from './security-headers.ts'
import { ALLOW } from './api-paths.ts'

/** What a refusal says: its status, reason phrase, code and sentence. */
interface Refusal { status: number; reason: string; code: RestErrorCode; message: string }

/**
 * Why Node's parser refused a request: it did not arrive whole within the
 * server's headersTimeout (408), headers over its limit (431), or a
 * request line over it (414: the URL is what to shorten), else not valid
 * HTTP/1.1 (400). `rawPacket` is the bytes the parser was reading: the URL is
 * to blame when they have no line end yet (a long URL arriving in parts), or
 * when they start with a request line of half the limit or more (one packet).
 */
export function refusalFor(parserCode: string | undefined, rawPacket: Buffer | undefined, headersTimeoutMs: number): Refusal {
  if (parserCode === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408, reason: 'Request Timeout', code: 'rest_request_timeout',
      message: `The request did not arrive whole within ${headersTimeoutMs / 1000} second${headersTimeoutMs === 1000 ? '' : 's'}. Send the request line and all headers at once.`,
    }
  }
  if (parserCode === 'HPE_HEADER_OVERFLOW') {
    if (rawPacket && isRequestLineTooLong(rawPacket)) {
      return { status: 414, reason: 'URI Too Long', code: 'rest_uri_too_long', message: 'The URL is too long. Keep the request line under 16 KB; ask for a shorter list of values, or page through the answer.' }
    }
    return { status: 431, reason: 'Request Header Fields Too Large', code: 'rest_headers_too_large', message: 'The request headers are too large. Send at most 16 KB of headers.' }
  }
  return {
    status: 400, reason: 'Bad Request', code: 'rest_bad_request',
    message: 'The request is not valid HTTP/1.1: percent-encode spaces and non-ASCII characters in the URL, use GET, HEAD or OPTIONS, and send each header as one "Name: value" line, with Content-Length or Transfer-Encoding, not both.',
  }
}

/** Whether the request line alone takes half of Node's limit on a request's head, or more: then the URL is what to shorten. */
function isRequestLineTooLong(packet: Buffer): boolean {
  const lineEnd = packet.indexOf('\r\n')
  if (lineEnd < 0) return true
  return /^[A-Z]+ /.test(packet.toString('latin1', 0, 16)) && lineEnd * 2 >= maxHeaderSize
}

/** The raw answer to a request Node's HTTP parser refused, or to a method it hands us a bare socket for (CONNECT). */
export function parserRefusal(refusal: Refusal, requestId: string, allow?: string): string {
  const { status, reason, code, message } = refusal
  const body = JSON.stringify({ code, message, data: { status } })
  return [
    `HTTP/1.1 ${status} ${reason}`,
    ...(allow ? [`Allow: ${allow}`] : []),
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...SECURITY_HEADERS.map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '', body,
  ].join('\r\n')
}

export function configureServer(server: Server, log: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    // A socket error (the client reset it), or an answer already under way: nothing can be said any more.
    if (error.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
      socket.destroy()
      return
    }
    const requestId = randomUUID()
    const refusal = refusalFor(error.code, error.rawPacket, server.headersTimeout)
    // The path and headers are not logged: they are what the client sent.
    log.info({ requestId, code: error.code, status: refusal.status }, 'request refused by the HTTP parser')
    socket.end(parserRefusal(refusal, requestId))
  })
  // CONNECT comes as a bare socket, which Node closes without a word unless someone answers: 405, as any other method we do not serve.
  server.on('connect', (_req: unknown, socket: Socket) => {
    const { status, code, message } = methodNotAllowed(ALLOW)
    socket.on('error', () => socket.destroy())
    socket.end(parserRefusal({ status, reason: 'Method Not Allowed', code, message }, randomUUID(), ALLOW))
  })
  // A request without Host goes on to the app, which refuses it in WordPress's shape (app.ts), not with Node's empty 400.
  ;(server as Server & { requireHostHeader?: boolean }).requireHostHeader = false
}
