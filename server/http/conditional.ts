// Conditional answers (API.md, "Conditional requests"): the headers every
// tagged answer carries, and the 304 for a client that holds it already.
import type { Request, Response } from 'express'
import { addVary } from './negotiate.ts'
import { noneMatchHits, parseIfNoneMatch, type IfNoneMatch } from './entity-tag.ts'

/** A client may keep the answer, but must ask again before it uses it; no shared cache may keep it (it may hold customer data). */
export const CACHE_CONTROL = 'private, no-cache'

/** The request's If-None-Match, when it names anything. */
export function ifNoneMatchOf(req: Request): IfNoneMatch | undefined {
  return parseIfNoneMatch(req.headers['if-none-match'])
}

/** The ETag and Cache-Control of a tagged answer (a 200, its HEAD, or a 304). */
export function setTagHeaders(res: Response, tag: string): void {
  res.setHeader('ETag', tag)
  res.setHeader('Cache-Control', CACHE_CONTROL)
}

/**
 * Answers 304 when the request's If-None-Match names `tag` (or is `*`), with
 * the ETag, Cache-Control and Vary a 200 would carry and no body; says whether it did.
 */
export function sendNotModifiedIfHeld(req: Request, res: Response, tag: string, condition = ifNoneMatchOf(req)): boolean {
  if (!noneMatchHits(condition, tag)) return false
  // Every tagged route chooses its format by Accept too (http/negotiate.ts); Origin is added by the CORS middleware.
  addVary(res, 'Accept')
  setTagHeaders(res, tag)
  res.status(304).end()
  return true
}
