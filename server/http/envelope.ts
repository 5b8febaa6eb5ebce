// WordPress's `_envelope` global parameter: for a client that cannot read an
// answer's status or headers (a JSONP-era browser, some no-code tools), the
// answer is sent with 200 as `{"body":…,"status":…,"headers":{…}}`, its own
// headers (X-WP-Total, Link, …) moved into `headers` (WP_REST_Server::
// envelope_response). Present with any value, or none, it applies. Only JSON
// is wrapped: a CSV or a calendar file is sent as it is, as is a HEAD answer.
//
// The body streams through unchanged between the two ends, so a large
// export stays streamed, and an answer cut mid-stream lacks the closing
// `,"status":…}` as it lacks its last chunk: it can never look complete.
import type { ServerResponse } from 'node:http'
import { splitRootLink } from './api-root-link.ts'

/** The headers WordPress's envelope carries: the answer's own, not the server's (Content-Type, Vary, …). */
const ENVELOPED_HEADERS = ['X-WP-Total', 'X-WP-TotalPages', 'Link', 'Allow', 'Retry-After'] as const

const COUNT_HEADERS = new Set<string>(['X-WP-Total', 'X-WP-TotalPages'])

const HEAD = '{"body":'

/** Whether the request's query string names `_envelope`, or `_envelope[]` (as PHP's isset($_GET['_envelope'])). */
export function asksForEnvelope(url: string): boolean {
  const query = url.indexOf('?')
  // The cheap test first: nearly every request has no `_envelope` anywhere.
  if (query < 0 || !url.includes('envelope', query)) return false
  for (const name of new URLSearchParams(url.slice(query + 1)).keys()) {
    if (name === '_envelope' || name.startsWith('_envelope[')) return true
  }
  return false
}

/** Makes `res` send its JSON answer enveloped, whichever way it is written (res.json, whole, streamed). */
export function envelopeAnswer(res: ServerResponse): void {
  // The originals, called below with .call(this): the wrappers replace them on this response.
  /* eslint-disable @typescript-eslint/unbound-method */
  const writeHead = res.writeHead
  const write = res.write
  const end = res.end
  /* eslint-enable @typescript-eslint/unbound-method */
  let wrapping = false
  let tail = ''
  let wroteBody = false

  res.writeHead = function (this: ServerResponse, statusCode: number, ...rest: unknown[]) {
    const type = String(this.getHeader('content-type') ?? '')
    if (this.req.method === 'HEAD' || !type.startsWith('application/json')) {
      return (writeHead as (...args: unknown[]) => ServerResponse).call(this, statusCode, ...rest)
    }
    wrapping = true
    const headers: Record<string, string | number> = {}
    for (const name of ENVELOPED_HEADERS) {
      const value = this.getHeader(name)
      if (value === undefined) continue
      const all = Array.isArray(value) ? value.join(', ') : String(value)
      // The api.w.org link is the server's, sent by WP_REST_Server::serve_request itself: it stays a header.
      const [rootLink, text] = name === 'Link' ? splitRootLink(all) : [undefined, all]
      if (rootLink === undefined) this.removeHeader(name)
      else this.setHeader(name, rootLink)
      if (text === undefined) continue
      // WordPress's controllers set the totals as integers, so its envelope holds numbers.
      headers[name] = COUNT_HEADERS.has(name) && /^\d+$/.test(text) ? Number(text) : text
    }
    tail = `,"status":${statusCode},"headers":${JSON.stringify(headers)}}`
    const length = this.getHeader('content-length')
    // An empty body is enveloped as null (below).
    if (length !== undefined) this.setHeader('Content-Length', Number(length) + HEAD.length + Buffer.byteLength(tail) + (Number(length) === 0 ? 4 : 0))
    writeHead.call(this, 200)
    ;(write as (...args: unknown[]) => boolean).call(this, HEAD)
    return this
  }

  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    if (chunk !== undefined && chunk !== null && (chunk as { length?: number }).length !== 0) wroteBody = true
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest)
  } as typeof res.write

  res.end = function (this: ServerResponse, ...args: unknown[]) {
    const callback = typeof args.at(-1) === 'function' ? args.pop() as () => void : undefined
    const [chunk, encoding] = args as [unknown, BufferEncoding | undefined]
    // The head is decided (and written) before anything else of the body.
    if (!this.headersSent && !this.writableEnded) this.writeHead(this.statusCode)
    if (!wrapping) return (end as (...args: unknown[]) => ServerResponse).call(this, ...args, ...(callback ? [callback] : []))
    if (chunk !== undefined && chunk !== null) this.write(chunk, encoding as BufferEncoding)
    return (end as (...args: unknown[]) => ServerResponse).call(this, (wroteBody ? '' : 'null') + tail, ...(callback ? [callback] : []))
  } as typeof res.end
}
