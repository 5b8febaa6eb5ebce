// GET docs (API.md, "GET docs"): the API reference for people, Swagger UI
// rendered from openapi.json. Its script and style come from the npm package
// swagger-ui-dist, served here (a sidecar may have no way out to a CDN), under
// a CSP that allows only this service (docs/decisions/0018-docs-with-swagger-ui.md).
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Router, type Request, type RequestHandler } from 'express'
import { methodNotAllowed } from '../errors.ts'

/**
 * Scripts, styles, fetches and fonts from this service only; images from it and
 * `data:` (swagger-ui.css draws its icons as data: SVGs; an image runs nothing).
 * No inline script or style, no eval, no frames, no forms elsewhere.
 */
export const DOCS_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'",
  "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ')

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

/**
 * Swagger UI's start-up, served as a file: an inline script would need
 * 'unsafe-inline'. No validator badge (it would call validator.swagger.io), no
 * top bar (it would let the page load any other document).
 * The page is for people (API.md, "GET docs"): it reads openapi.json itself and
 * shows one entry per route and method a person calls. HEAD, OPTIONS and the
 * trailing-slash twins (path items that are a $ref to the route) stay in the
 * document, for tools, and are left off the page, as is the root index outside the
 * namespace (a path item with servers of its own); the groups are the document's tags.
 */
const START_SCRIPT = `'use strict'
function forPeople(document) {
  var paths = {}
  Object.keys(document.paths || {}).forEach(function (path) {
    var item = document.paths[path]
    var twin = path.length > 1 && path.charAt(path.length - 1) === '/' && Object.prototype.hasOwnProperty.call(document.paths, path.slice(0, -1))
    // The root index (/wp-json/, a server of its own) is WordPress's, outside the namespace the page is about.
    if (item.$ref || twin || item.servers) return
    var kept = {}
    Object.keys(item).forEach(function (key) {
      if (key !== 'head' && key !== 'options') kept[key] = item[key]
    })
    paths[path] = kept
  })
  return Object.assign({}, document, { paths: paths })
}
function showProblem(root, text) {
  var p = document.createElement('p')
  p.className = 'docs-problem'
  p.textContent = text
  root.appendChild(p)
}
window.addEventListener('DOMContentLoaded', function () {
  var root = document.getElementById('swagger-ui')
  var address = root.getAttribute('data-openapi')
  fetch(address, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
    .then(function (answer) {
      if (!answer.ok) throw new Error(address + ' answered ' + answer.status)
      return answer.json()
    })
    .then(function (openApi) {
      window.ui = SwaggerUIBundle({
        spec: forPeople(openApi),
        domNode: root,
        deepLinking: true,
        validatorUrl: null,
        docExpansion: 'list',
        tryItOutEnabled: false,
        presets: [SwaggerUIBundle.presets.apis],
        layout: 'BaseLayout'
      })
    })
    .catch(function (error) { showProblem(root, 'The reference could not be read: ' + error.message) })
})
`

/** The files the page loads, by the name it asks for them under `docs/`. */
const ASSETS: Record<string, { file: string; type: string } | { text: string; type: string }> = {
  'swagger-ui.css': { file: join(swaggerUiDir, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(swaggerUiDir, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'start.js': { text: START_SCRIPT, type: 'text/javascript; charset=utf-8' },
}

/**
 * Where the page finds its files and the document, relative to the page's own
 * address, so that the same page works under every prefix, with or without a
 * trailing slash, and behind a proxy that adds a path: `?rest_route=` pages
 * keep that form (a proxy may route only it to this service).
 */
export function docsLinks(req: Request): { asset: (name: string) => string; openApi: string } {
  const original = req.originalUrl
  const queryAt = original.indexOf('?')
  const path = queryAt < 0 ? original : original.slice(0, queryAt)
  // restRouteForm (app.ts) moved rest_route into the path: the original URL still has it.
  if ((path === '/' || path === '/index.php') && new URLSearchParams(original.slice(queryAt + 1)).has('rest_route')) {
    const route = (req.path.endsWith('/') ? req.path.slice(0, -1) : req.path)
    const base = route.slice(0, -'/docs'.length)
    return { asset: (name) => `?rest_route=${route}/${name}`, openApi: `?rest_route=${base}/openapi.json` }
  }
  return path.endsWith('/')
    ? { asset: (name) => name, openApi: '../openapi.json' }
    : { asset: (name) => `docs/${name}`, openApi: 'openapi.json' }
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')

export function docsPage(req: Request): string {
  const links = docsLinks(req)
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>booking-calendar-api: API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeAttribute(links.asset('swagger-ui.css'))}">
</head>
<body>
<noscript>This page needs JavaScript. The same reference as a document: <a href="${escapeAttribute(links.openApi)}">openapi.json</a>.</noscript>
<div id="swagger-ui" data-openapi="${escapeAttribute(links.openApi)}"></div>
<script src="${escapeAttribute(links.asset('swagger-ui-bundle.js'))}"></script>
<script src="${escapeAttribute(links.asset('start.js'))}"></script>
</body>
</html>
`
}

export const docsHandler = (): RequestHandler => (req, res) => {
  res.setHeader('Content-Security-Policy', DOCS_CSP)
  res.type('html').send(docsPage(req))
}

/**
 * The page's files under `docs/` of each prefix, guarded like the page (they are
 * behind the prefix's guard). GET and HEAD, OPTIONS 204, any other method 405;
 * a name not listed goes on to the router's 404.
 */
export function docsAssets(allow: string): Router {
  const router = Router()
  router.route('/docs/:name')
    .all((req, res, next) => {
      if (!Object.hasOwn(ASSETS, req.params.name)) return next('route')
      res.locals.route = 'docs'
      next()
    })
    .get((req, res, next) => {
      const asset = ASSETS[req.params.name]!
      // Revalidated on each load (Last-Modified and ETag), not fetched again whole.
      res.setHeader('Cache-Control', 'private, no-cache')
      if ('text' in asset) {
        res.setHeader('Content-Type', asset.type)
        res.send(asset.text)
        return
      }
      res.sendFile(asset.file, { headers: { 'Content-Type': asset.type }, lastModified: true, etag: true }, (error) => {
        if (error) next(error)
      })
    })
    .options((_req, res) => { res.setHeader('Allow', allow).status(204).end() })
    .all(() => {
      throw methodNotAllowed(allow)
    })
  return router
}
