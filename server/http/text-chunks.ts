// Answers built whole in memory (summary/ as JSON or CSV, disabled-time/ as
// JSON or a feed) written as UTF-8 chunks, piece by piece, for sendAsMade
// (stream-body.ts) to send: a small one at once with its Content-Length, a long
// one chunk by chunk as the client reads.
//
// Written as one string (res.json), a two-year summary/ by day, service and
// status (47 MB of JSON at a million bookings) held its worker's event loop for
// 1.1 to 2.2 s: JSON.stringify's string, then its UTF-8 bytes, which took
// several times as long when one character of it (a Cyrillic slug) was outside
// Latin-1. Other requests on that worker waited as long, and the worker's RSS
// reached 606 MB (docs/performance.md). Now each chunk of about 64 KiB
// is made in its own turn of the event loop.
import { setImmediate as nextTurn } from 'node:timers/promises'
import { Utf8Chunks } from './stream-body.ts'

/** U+FEFF, written as EF BB BF in UTF-8: what `bom=1` puts before a CSV's header row (API.md, "Spreadsheets and BI tools"). */
export const BYTE_ORDER_MARK = '\uFEFF'

/**
 * `object` as JSON.stringify writes it, the list at `listKey` written item by
 * item, each as `mapItem` makes it. The other members are written as they are
 * (none of them long); one whose value JSON leaves out (undefined) is left out.
 */
export async function* jsonListChunks<I>(object: object, listKey: string, mapItem: (item: I) => unknown): AsyncGenerator<Buffer> {
  const body = new Utf8Chunks()
  let separator = '{'
  for (const [key, value] of Object.entries(object)) {
    if (key !== listKey) {
      const json = JSON.stringify(value)
      if (json === undefined) continue
      body.write(`${separator}${JSON.stringify(key)}:${json}`)
      separator = ','
      continue
    }
    body.write(`${separator}${JSON.stringify(key)}:[`)
    separator = ','
    // An array by index; any other iterable (items made as they are written) by its iterator.
    // As JSON.stringify writes an item it cannot write (undefined) in a list: null.
    const items = value as readonly I[] | Iterable<I>
    if (Array.isArray(items)) {
      for (let i = 0; i < items.length; i++) {
        body.write(`${i === 0 ? '' : ','}${JSON.stringify(mapItem(items[i] as I)) ?? 'null'}`)
        if (body.hasFull) yield* filledThenNextTurn(body)
      }
    } else {
      let first = true
      for (const item of items) {
        body.write(`${first ? '' : ','}${JSON.stringify(mapItem(item)) ?? 'null'}`)
        first = false
        if (body.hasFull) yield* filledThenNextTurn(body)
      }
    }
    body.write(']')
  }
  body.write(separator === '{' ? '{}' : '}')
  yield* body.end()
}

/** Lines of text (each with its own line end) as UTF-8 chunks. */
export async function* lineChunks(lines: Iterable<string>): AsyncGenerator<Buffer> {
  const body = new Utf8Chunks()
  for (const line of lines) {
    body.write(line)
    if (body.hasFull) yield* filledThenNextTurn(body)
  }
  yield* body.end()
}

/**
 * The chunks filled so far, then a turn of the event loop before the next is
 * made. A socket that takes each chunk at once (a client on the same host
 * reading as fast as it can) never asks the writer to wait for 'drain', so
 * without this turn the whole answer was made and written in one go.
 */
async function* filledThenNextTurn(body: Utf8Chunks): AsyncGenerator<Buffer> {
  yield* body.full()
  await nextTurn()
}
