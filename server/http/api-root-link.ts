// WordPress's discovery (API.md, "WordPress's discovery"): every answer under
// the prefixes, errors too, carries `Link: <{public address}/wp-json/>;
// rel="https://api.w.org/"`, as WordPress's do, so that a client that discovers
// a site (node-wpapi's WPAPI.discover) finds the sidecar on its own host name.
import type { RequestHandler, Response } from 'express'
import { PREFIXES } from './api-paths.ts'
import { publicBaseUrl } from './public-url.ts'

/** The link relation WordPress names its REST API's root with. */
export const API_ROOT_REL = 'https://api.w.org/'

/** The root index's own addresses (routes/root-index.ts): `/wp-json`, `/wp-json/`, and `/`, the sidecar's home, where discovery looks first. */
export const ROOT_INDEX_PATHS = ['/wp-json', '/wp-json/', '/']

/** Under a prefix or at the root index: as the router matches paths, in any letter case. */
const DISCOVERABLE = new RegExp(`^(?:(?:${PREFIXES.join('|')})(?:/.*)?|/wp-json/?|/)$`, 'i')

/**
 * Sets the api.w.org Link on every answer under the prefixes and of the root
 * index, before any route or refusal is written. Runs after the rest_route
 * form is read, so `/?rest_route=/booking-calendar/v1/...` gets it too.
 */
export const apiRootLink: RequestHandler = (req, res, next) => {
  if (DISCOVERABLE.test(req.path)) res.setHeader('Link', `<${publicBaseUrl(req)}/wp-json/>; rel="${API_ROOT_REL}"`)
  next()
}

/** A Link header's api.w.org link (it comes first: apiRootLink) and the answer's own links after it; either undefined when absent. */
export function splitRootLink(link: string): [root: string | undefined, own: string | undefined] {
  const root = /^<[^>]*>; rel="https:\/\/api\.w\.org\/"/.exec(link)?.[0]
  if (root === undefined) return [undefined, link]
  const own = link.slice(root.length).replace(/^, /, '')
  return [root, own === '' ? undefined : own]
}

/**
 * Adds a link to the answer's Link header, after the api.w.org one, as
 * WordPress sends its paging links after it (one header, links separated by
 * commas, RFC 8288).
 */
export function addLink(res: Response, link: string): void {
  const current = res.getHeader('Link')
  res.setHeader('Link', current === undefined || current === '' ? link : `${String(current)}, ${link}`)
}
