// The routes of the namespace, and the namespace index built from the same
// schemas the routes validate with, so the two cannot disagree (API.md, "Where it answers").
import { Router, type Express, type RequestHandler } from 'express'
import type { z } from 'zod'
import { describeParams } from '../http/params.ts'
import { methodNotAllowed, noRoute } from '../errors.ts'
import { slotsHandler, slotsParams } from './slots.ts'
import { disabledTimeHandler, disabledTimeParams } from './disabled-time.ts'
import { summaryHandler, summaryParams } from './summary.ts'
import { availabilityHandler, availabilityParams } from './availability.ts'
import { changesHandler, changesParams } from './changes.ts'
import { docsAssets, docsHandler } from './docs.ts'
import type { Deps } from '../deps.ts'
import { logAnswers } from '../http/log-answers.ts'
import { ALLOW, NAMESPACE, PREFIXES } from '../http/api-paths.ts'

export { ALLOW, NAMESPACE, PREFIXES }

interface RouteDef {
  path: string
  /** The route's name in logs and metrics. */
  name: string
  /** Its answers are tagged (API.md, "Conditional requests"): the log source may revalidate and share them (http/log-answers.ts). */
  tagged?: boolean
  params: z.ZodObject | undefined
  handler: (deps: Deps) => RequestHandler
}

export const ROUTES: RouteDef[] = [
  { path: '/', name: 'index', params: undefined, handler: () => (_req, res) => { res.json(namespaceIndex()) } },
  { path: '/slots', name: 'slots', params: slotsParams, handler: slotsHandler, tagged: true },
  { path: '/disabled-time', name: 'disabled-time', params: disabledTimeParams, handler: disabledTimeHandler, tagged: true },
  { path: '/summary', name: 'summary', params: summaryParams, handler: summaryHandler, tagged: true },
  { path: '/availability', name: 'availability', params: availabilityParams, handler: availabilityHandler, tagged: true },
  { path: '/changes', name: 'changes', params: changesParams, handler: changesHandler },
  { path: '/docs', name: 'docs', params: undefined, handler: docsHandler },
]

/** The shape WordPress gives `GET /wp-json/{namespace}`, with every parameter of each route in `args`. */
export function namespaceIndex() {
  const routes: Record<string, unknown> = {}
  for (const route of ROUTES) {
    const name = `/${NAMESPACE}${route.path === '/' ? '' : route.path}`
    const args: Record<string, unknown> = {}
    if (route.params) {
      for (const [param, { caseInsensitive: _ignored, ...meta }] of Object.entries(describeParams(route.params))) args[param] = { ...meta, required: false }
    }
    routes[name] = { namespace: NAMESPACE, methods: ['GET'], endpoints: [{ methods: ['GET'], args }] }
  }
  return { namespace: NAMESPACE, routes }
}

/**
 * The namespace under each prefix, every request behind `guard`. GET and HEAD
 * of each route are also the app's own routes at their whole address, ahead of
 * the prefixes' router, with the same guard and handler: a router mounted at a
 * prefix costs each request its own pass over the router's stack, with the
 * prefix cut off the URL and put back (docs/performance.md).
 * Everything else (OPTIONS, other methods, unknown paths) goes on to the
 * router, which answers as before.
 */
export function mountApi(app: Express, deps: Deps, guard: RequestHandler): void {
  const byLog = logAnswers(deps)
  // A tagged route's handler behind the log's revalidation and shared reads, which pass on whatever they do not answer.
  const handlers = new Map(ROUTES.map((route): [RouteDef, RequestHandler] => {
    const handler = route.handler(deps)
    if (!route.tagged) return [route, handler]
    const answerByLog = byLog.handler(route.name)
    return [route, async (req, res, next) => {
      let passed = false
      await answerByLog(req, res, () => { passed = true })
      if (passed) await handler(req, res, next)
    }]
  }))
  for (const prefix of PREFIXES) {
    for (const route of ROUTES) {
      const handler = handlers.get(route)!
      // Named before the guard: a refusal (401, 403, 503) is counted and logged under its route too.
      app.get(prefix + route.path, (req, res, next) => {
        res.locals.route = route.name
        return guard(req, res, next)
      }, handler)
    }
  }
  const router = apiRouter(handlers)
  for (const prefix of PREFIXES) app.use(prefix, guard, router)
}

/** The routes under one prefix, each with its handler of `handlers`; a path that is none of them is 404. */
function apiRouter(handlers: Map<RouteDef, RequestHandler>): Router {
  const router = Router()
  for (const route of ROUTES) {
    router.route(route.path)
      .all((_req, res, next) => {
        res.locals.route = route.name
        next()
      })
      .get(handlers.get(route)!)
      .options((_req, res) => { res.setHeader('Allow', ALLOW).status(204).end() })
      .all(() => {
        throw methodNotAllowed(ALLOW)
      })
  }
  // The docs page's script and style files (docs/swagger-ui.css, ...), behind the same guard.
  router.use(docsAssets(ALLOW))
  router.use(() => { throw noRoute() })
  return router
}
