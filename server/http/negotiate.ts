// Which body a request gets (API.md, "Parameters", `format`): `format=` wins;
// without it the Accept header chooses, quality values included, through
// Express's req.accepts() (the `accepts` package), never a regular expression.
import type { Request, Response } from 'express'

export type BodyFormat = 'json' | 'csv' | 'ics'

export const MEDIA_TYPES: Record<BodyFormat, string> = {
  json: 'application/json',
  csv: 'text/csv',
  ics: 'text/calendar',
}

/**
 * `formatParam` is the route's parsed `format` (its default when absent).
 * When the query has no `format`, the most preferred of `offered` by Accept;
 * JSON when none of them is acceptable, as WordPress answers JSON whatever
 * Accept says. `offered` starts with json, so `*` and a missing Accept give JSON.
 */
export function negotiateFormat<F extends BodyFormat>(req: Request, formatParam: F, offered: readonly F[]): F {
  return acceptedFormat(req, offered) ?? formatParam
}

/** What Accept chooses of `offered` (negotiateFormat), or undefined when the query has a `format`, which wins. */
export function acceptedFormat<F extends BodyFormat>(req: Request, offered: readonly F[]): F | undefined {
  if (formatGiven(req)) return undefined
  if (!req.get('accept')) return offered[0]!
  const chosen = req.accepts(offered.map((format) => MEDIA_TYPES[format]))
  return offered.find((format) => MEDIA_TYPES[format] === chosen) ?? offered[0]!
}

function formatGiven(req: Request): boolean {
  return Object.keys(req.query).some((key) => key === 'format' || key.startsWith('format['))
}

/**
 * Adds `field` to the response's Vary header, unless it is there already or
 * the header is `*`: what Express's res.vary does through the `vary` package,
 * which parses the header into a list on every call (two calls a request, a
 * few µs of a small answer: docs/performance.md).
 */
export function addVary(res: Response, field: string): void {
  const current = res.getHeader('Vary')
  if (current === undefined || current === '') {
    res.setHeader('Vary', field)
    return
  }
  const text = Array.isArray(current) ? current.join(', ') : String(current)
  const names = text.split(',').map((name) => name.trim().toLowerCase())
  if (names.includes('*') || names.includes(field.toLowerCase())) return
  res.setHeader('Vary', `${text}, ${field}`)
}
