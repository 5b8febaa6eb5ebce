// Structured JSON logs (pino). Credentials and customer data are never logged:
// requests are logged by method, path, status and timing only.
import { pino, type DestinationStream, type Logger } from 'pino'

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
    base: { service: 'booking-calendar-api' },
    // Defence in depth: should anything pass a header object or a database URL, these never reach the log.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'password', '*.password', 'databaseUrl'],
      censor: '[redacted]',
    },
  }, destination)
}
