// Settings of the HTTP server itself (main.ts calls configureServer once):
// requests that Node's parser refuses before Express sees them are answered in
// WordPress's error shape too, with an X-Request-Id, instead of Node's bare 400.
import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from 'pino'
import type { RestErrorCode } from '../errors.ts'
import { SECURITY_HEADERS } from './security-headers.ts'

/** The raw answer to a request Node's HTTP parser refused (431 for headers too large, else 400). */
export function parserRefusal(parserCode: string | undefined, requestId: string): string {
  const tooLarge = parserCode === 'HPE_HEADER_OVERFLOW'
  const status = tooLarge ? 431 : 400
  const code: RestErrorCode = tooLarge ? 'rest_headers_too_large' : 'rest_bad_request'
  const message = tooLarge
    ? 'The request headers are too large. Send at most 16 KB of headers.'
    : 'The request is not valid HTTP/1.1: percent-encode spaces and non-ASCII characters in the URL, and use GET, HEAD or OPTIONS.'
  const body = JSON.stringify({ code, message, data: { status } })
  return [
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...SECURITY_HEADERS.map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '', body,
  ].join('\r\n')
}

export function configureServer(server: Server, log: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // A socket error (the client reset it), or an answer already under way: nothing can be said any more.
    if (error.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
      socket.destroy()
      return
    }
    const requestId = randomUUID()
    // The path and headers are not logged: they are what the client sent.
    log.info({ requestId, code: error.code, status: error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400 }, 'request refused by the HTTP parser')
    socket.end(parserRefusal(error.code, requestId))
  })
}
