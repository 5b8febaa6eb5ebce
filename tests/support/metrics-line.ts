// What the fault and load tests read of a service from outside: a line of
// GET /metrics, and a wait for a condition, bounded.
import { get as httpGet } from 'node:http'

/** A line of GET /metrics, over a connection of its own (a kept-alive one may be closed by the server meanwhile); undefined when the line is not there (a counter's labels appear with its first count). */
export async function metricLine(port: number, line: string): Promise<number | undefined> {
  const text = await new Promise<string>((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      const pieces: Buffer[] = []
      res.on('data', (piece: Buffer) => pieces.push(piece))
      res.on('end', () => resolve(Buffer.concat(pieces).toString('utf8')))
      res.on('error', reject)
    }).on('error', reject)
  })
  const found = text.split('\n').find((l) => l.startsWith(`${line} `))
  return found === undefined ? undefined : Number(found.slice(line.length + 1))
}

/** Waits until `condition` holds, looking every `everyMs`; throws naming `what` after `ms`. */
export async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string, everyMs = 20): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
