// WordPress's paging headers: a Link header with rel="prev" and rel="next",
// each the request's own URL with another page, keeping the other parameters.
import type { Request } from 'express'

export function pagingLinks(req: Request, page: number, totalPages: number): string | undefined {
  const links: string[] = []
  const at = (target: number) => {
    const url = new URL(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`)
    url.searchParams.set('page', String(target))
    return url.toString()
  }
  if (page > 1 && totalPages > 0) links.push(`<${at(Math.min(page - 1, totalPages))}>; rel="prev"`)
  if (page < totalPages) links.push(`<${at(page + 1)}>; rel="next"`)
  return links.length > 0 ? links.join(', ') : undefined
}
