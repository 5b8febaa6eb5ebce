// GET /wp-json/ (also /wp-json, /?rest_route=/ and the sidecar's home, /): the
// REST API's root index in WordPress's shape (WP_REST_Server::get_index; API.md,
// "WordPress's discovery"), listing this namespace and its routes, so that a
// client that discovers a site (WPAPI.discover) binds to the sidecar on its own
// host name. Open in every access mode, as WordPress's is: it names routes and
// parameters, as /openapi.json does, never data; the routes it lists are guarded.
// Of the site it shows what WordPress's own index shows anyone (name, description,
// addresses, zone), read at most once a minute (server/site-index.ts).
import type { RequestHandler } from 'express'
import { publicBaseUrl } from '../http/public-url.ts'
import { NAMESPACE, namespaceIndex } from './index.ts'
import type { Deps } from '../deps.ts'

/** WordPress's authentication entry: application passwords are authorised on the site itself (AUTH_MODE wordpress). */
function authentication(deps: Deps): Record<string, unknown> {
  const site = deps.config.wordpressUrl
  if (deps.config.authMode !== 'wordpress' || site === undefined) return {}
  return { 'application-passwords': { endpoints: { authorization: `${site.replace(/\/+$/, '')}/wp-admin/authorize-application.php` } } }
}

export const rootIndexHandler = (deps: Deps): RequestHandler => async (req, res) => {
  const options = await deps.siteIndex()
  const address = publicBaseUrl(req)
  const offset = Number(options.gmtOffset ?? 0)
  res.json({
    name: options.blogname ?? '',
    description: options.blogdescription ?? '',
    // The site's own addresses when it has them: this index speaks for the site's data.
    url: options.siteurl ?? address,
    home: options.home ?? address,
    gmt_offset: Number.isFinite(offset) ? offset : 0,
    timezone_string: options.timezoneString ?? '',
    namespaces: [NAMESPACE],
    authentication: authentication(deps),
    routes: {
      '/': { namespace: '', methods: ['GET'], endpoints: [{ methods: ['GET'], args: {} }], _links: { self: [{ href: `${address}/wp-json/` }] } },
      ...namespaceIndex().routes,
    },
  })
}
