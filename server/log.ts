// Structured JSON logs (pino). Credentials and customer data are never logged:
// requests are logged by method, path, status and timing only.
import cluster from 'node:cluster'
import { pino, type DestinationStream, type Logger } from 'pino'

/** Which process wrote a line: a cluster worker's id (1, 2, …; a restarted worker gets the next), 0 for the primary or the one process of WORKERS=1. */
export function workerId(): number {
  return cluster.isWorker ? cluster.worker!.id : 0
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
    base: { service: 'booking-calendar-api', worker: workerId() },
    // An Error gets pino's type, message and stack. The fields of an expected
    // error (errors.ts: message, code, errno) go as they are: pino's serializer
    // made them "type":"Object" with an empty "stack".
    serializers: { err: (value: unknown) => (value instanceof Error ? pino.stdSerializers.err(value) : value) },
    // Defence in depth: should anything pass a header object or a database URL, these never reach the log.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'password', '*.password', 'databaseUrl'],
      censor: '[redacted]',
    },
  }, destination)
}
