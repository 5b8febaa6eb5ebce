// WordPress's paging headers: a Link header with rel="prev" and rel="next",
// each the request's own URL with another page, keeping the other parameters
// in their order and meaning.
//
// The client's query is repeated pair by pair, but never a character a URL may
// not hold raw: `<`, `>` or `"` would end the link early and let a crafted
// query add a link of its own, and a comma or a semicolon splits the header in
// the Link parsers clients use (node-wpapi's `li` splits on every comma, so
// `status=pending,booked` broke its `_paging.next`). Those are percent-encoded,
// as WordPress encodes every parameter it writes into a link; the query parser
// reads them back as the same values.
import type { Request } from 'express'
import { decodedPairName, parameterName } from './params.ts'
import { publicBaseUrl } from './public-url.ts'

/** The request's URL with `page` set; `page` keeps its place, or is added at the end. */
function urlOfPage(req: Request, page: number): string {
  const [path, query = ''] = req.originalUrl.split('?', 2) as [string, string?]
  const pairs = query.split('&').filter((pair) => pair !== '')
  const at = pairs.findIndex(isPagePair)
  const kept = pairs.filter((pair) => !isPagePair(pair) && !isAccessTokenPair(pair)).map(safeInLink)
  kept.splice(at < 0 ? kept.length : at, 0, `page=${page}`)
  return `${publicBaseUrl(req)}${safeInLink(path)}?${kept.join('&')}`
}

/**
 * Whether a pair of the query is the page, however its name is written:
 * `page`, `%70age`, `page[]` all reach the parameter `page` (collectQuery), and a
 * link that kept one beside the new `page=` would give `page` twice: a 400.
 */
function isPagePair(pair: string): boolean {
  return parameterName(decodedPairName(pair)) === 'page'
}

/**
 * Whether a pair is `access_token` (a CSV export's token in token mode,
 * server/access.ts): the service never writes a credential into an answer, so a
 * link leaves it out, and a client that pages so adds its token again.
 */
function isAccessTokenPair(pair: string): boolean {
  return parameterName(decodedPairName(pair)) === 'access_token'
}

/**
 * Characters kept as they are in a link's URL: RFC 3986's unreserved ones,
 * `%` of a valid escape, and the delimiters a query or path needs and no Link
 * parser reads (`/ ? : @ ! $ ' ( ) * + = &`). `+` stays, since it means a space
 * to the query parser and `%2B` would not.
 */
const KEPT_IN_LINK = /^[A-Za-z0-9\-._~/?:@!$'()*+=&]$/

/** `text` (a raw part of the request's URL, one character per byte) with every other byte percent-encoded. */
function safeInLink(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (KEPT_IN_LINK.test(c) || (c === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3)))) {
      out += c
    } else {
      const code = c.charCodeAt(0)
      // Node gives the request line's bytes as characters up to 0xff; anything above is encoded as UTF-8.
      out += code <= 0xff ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : encodeURIComponent(c)
    }
  }
  return out
}

export function pagingLinks(req: Request, page: number, totalPages: number): string | undefined {
  const links: string[] = []
  if (page > 1 && totalPages > 0) links.push(`<${urlOfPage(req, Math.min(page - 1, totalPages))}>; rel="prev"`)
  if (page < totalPages) links.push(`<${urlOfPage(req, page + 1)}>; rel="next"`)
  return links.length > 0 ? links.join(', ') : undefined
}
