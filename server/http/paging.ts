// WordPress's paging headers: a Link header with rel="prev" and rel="next",
// each the request's own URL with another page, keeping the other parameters
// exactly as the client wrote them.
import type { Request } from 'express'
import { publicBaseUrl } from './public-url.ts'

/** The request's URL with `page` set; `page` keeps its place, or is added at the end. */
function urlOfPage(req: Request, page: number): string {
  const [path, query = ''] = req.originalUrl.split('?', 2) as [string, string?]
  const pairs = query.split('&').filter((pair) => pair !== '')
  const isPage = (pair: string) => pair.split('=')[0] === 'page'
  const at = pairs.findIndex(isPage)
  const kept = pairs.filter((pair) => !isPage(pair))
  kept.splice(at < 0 ? kept.length : at, 0, `page=${page}`)
  return `${publicBaseUrl(req)}${path}?${kept.join('&')}`
}

export function pagingLinks(req: Request, page: number, totalPages: number): string | undefined {
  const links: string[] = []
  if (page > 1 && totalPages > 0) links.push(`<${urlOfPage(req, Math.min(page - 1, totalPages))}>; rel="prev"`)
  if (page < totalPages) links.push(`<${urlOfPage(req, page + 1)}>; rel="next"`)
  return links.length > 0 ? links.join(', ') : undefined
}
