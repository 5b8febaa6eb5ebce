// What a handler notes on a response for the request log and the metrics to
// read after it is sent: the route that answered and the rows it sent.
import type { Response } from 'express'

/** The name of the route that answered, for labels; never the raw path (one series per URL would grow without end). */
export function routeOf(res: Response): string {
  return typeof res.locals.route === 'string' ? res.locals.route : 'no_route'
}

/**
 * The status the client was sent, or null when it hung up before the headers
 * went out: res.statusCode is then the 200 nobody received.
 */
export function statusSent(res: Response): number | null {
  return res.headersSent ? res.statusCode : null
}

/** How many bookings or disabled times a handler sent (logged and counted after the response). */
export function addRowsSent(res: Response, rows: number): void {
  res.locals.rowsSent = (typeof res.locals.rowsSent === 'number' ? res.locals.rowsSent : 0) + rows
}

/** Passes batches through, adding each one's size to the rows sent as it goes out. */
export async function* countRowsSent<T>(res: Response, batches: AsyncIterable<T[]>): AsyncGenerator<T[]> {
  for await (const batch of batches) {
    addRowsSent(res, batch.length)
    yield batch
  }
}
