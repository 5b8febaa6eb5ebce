// Which body a request gets (API.md, "Parameters", `format`): `format=` wins;
// without it the Accept header chooses, quality values included, through
// Express's req.accepts() (the `accepts` package), never a regular expression.
import type { Request } from 'express'

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
  if (formatGiven(req)) return formatParam
  if (!req.get('accept')) return offered[0]!
  const chosen = req.accepts(offered.map((format) => MEDIA_TYPES[format]))
  return offered.find((format) => MEDIA_TYPES[format] === chosen) ?? offered[0]!
}

function formatGiven(req: Request): boolean {
  return Object.keys(req.query).some((key) => key === 'format' || key.startsWith('format['))
}
