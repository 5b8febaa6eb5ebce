// Reading raw HTTP/1.1 answers that tests take off a socket themselves.

/**
 * The body of a chunked answer, given the bytes after its headers. Stops at the
 * last chunk, or where the bytes end or stop making sense: a cut answer gives
 * what arrived, which is how the tests see a body that is not whole.
 */
export function dechunkBody(body: Buffer): Buffer {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at)
    if (lineEnd === -1) break
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16)
    if (!(size > 0)) break
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
  return Buffer.concat(parts)
}

/** The body of a whole chunked answer, headers included in `raw`, as UTF-8 text. */
export function dechunk(raw: Buffer): string {
  return dechunkBody(raw.subarray(raw.indexOf('\r\n\r\n') + 4)).toString('utf8')
}

/** The body of a whole answer, headers included in `raw`, as UTF-8 text: chunked, or sent whole with its Content-Length (a tagged export). */
export function bodyText(raw: Buffer): string {
  const headEnd = raw.indexOf('\r\n\r\n')
  const chunked = /\r\ntransfer-encoding: chunked\r\n/i.test(raw.toString('latin1', 0, headEnd + 2))
  return chunked ? dechunk(raw) : raw.subarray(headEnd + 4).toString('utf8')
}
