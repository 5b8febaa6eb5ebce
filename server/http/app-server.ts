// The HTTP server of the Express app, whose requests and responses are made
// with Express's prototypes from the start.
//
// Express 5 gives every request and response its own prototypes as it comes
// in (`Object.setPrototypeOf(req, app.request)` in app.handle). V8 then gives
// the object a map of its own, in the old generation, which keeps what it
// points to alive through every scavenge until a mark-compact: a one-route
// Express app under one client at a time kept 22 to 43% of its young
// generation through each scavenge and ran a mark-compact every 100 ms, where
// node:http kept nothing and ran none (docs/performance.md). A request made as an instance of a class whose
// prototype already is app.request makes that call change nothing.
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http'
import type { Express } from 'express'

/**
 * An HTTP server for `app`: app.listen's, but its requests and responses are
 * instances of classes whose prototypes are the app's request and response
 * prototypes, which the app's own are set to (with the same `app` property).
 *
 * A request must arrive whole within `headersTimeoutMs` (HEADERS_TIMEOUT_MS) of
 * its first byte (a silent new connection: of its opening; Node counts the two
 * apart, so a connection silent and then slow is held up to twice as long):
 * the service takes no request bodies, so the head is the whole request. Node
 * looks for late ones every 30 s by default, which with its 60 s limit held a
 * connection that sent nothing for 60 to 90 s; here it looks every second at most.
 */
export function createAppServer(app: Express, { headersTimeoutMs, reusePrototypes = true }: { headersTimeoutMs: number; reusePrototypes?: boolean }): Server {
  // HTTP_PROTOTYPE_REUSE=false: node:http's own classes, which Express then re-prototypes per request.
  class AppRequest extends IncomingMessage {}
  class AppResponse extends ServerResponse {}
  if (reusePrototypes) {
    adoptPrototype(app, AppRequest.prototype, 'request')
    adoptPrototype(app, AppResponse.prototype, 'response')
  }
  return createServer({
    ...(reusePrototypes ? { IncomingMessage: AppRequest, ServerResponse: AppResponse } : {}),
    headersTimeout: headersTimeoutMs, requestTimeout: headersTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.ceil(headersTimeoutMs / 10)),
  }, app)
}

/**
 * Makes `prototype` stand for app[kind]: it inherits what app[kind] inherits
 * (Express's request or response methods) and has app[kind]'s own `app`.
 */
function adoptPrototype(app: Express, prototype: object, kind: 'request' | 'response'): void {
  const expressPrototype = app[kind] as object
  Object.setPrototypeOf(prototype, Object.getPrototypeOf(expressPrototype) as object | null)
  Object.defineProperty(prototype, 'app', { configurable: true, enumerable: true, writable: true, value: app })
  Object.defineProperty(app, kind, { configurable: true, enumerable: true, writable: true, value: prototype })
}
