// The demo's log: the same pino logger as the service's, written for a person
// reading a terminal (pino-pretty) instead of as JSON lines for a collector.
import type { Logger } from 'pino'
import { PinoPretty } from 'pino-pretty'
import { createLogger } from '../server/log.ts'

/** A request reads as one line: `GET /wp-json/… 200 in 12.3 ms, 40 rows [request id]`. */
export function demoMessage(line: Record<string, unknown>): string {
  // A log line's fields are text and numbers (server/http/request-log.ts).
  const field = (value: unknown, absent = '') => (value === null || value === undefined ? absent : `${value as string | number}`)
  if (line.msg !== 'request') return field(line.msg)
  return `${field(line.method)} ${field(line.path)} ${field(line.status, '(client left before the answer)')} in ${field(line.durationMs)} ms, ${field(line.rowsSent)} rows [${field(line.requestId)}]`
}

export function createDemoLogger(level: string, destination: NodeJS.WritableStream = process.stdout): Logger {
  return createLogger(level, demoPrettyStream(destination))
}

/** Turns the service's JSON lines (from the process or from its workers' stdout) into the demo's readable lines. */
export function demoPrettyStream(destination: NodeJS.WritableStream = process.stdout): PinoPretty.PrettyStream {
  return PinoPretty({
    destination,
    colorize: destination === process.stdout && process.stdout.isTTY,
    translateTime: 'SYS:HH:MM:ss',
    // The request line already says everything these fields hold.
    ignore: 'pid,hostname,service,worker,requestId,method,path,route,status,durationMs,rowsSent,completed',
    messageFormat: (log) => `${demoMessage(log)}${typeof log.worker === 'number' && log.worker > 0 ? ` (worker ${log.worker})` : ''}`,
    sync: true,
  })
}
