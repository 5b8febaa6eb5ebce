// The 304 of slots/ and of its calendar feed (API.md, "Conditional requests"):
// apart from both routes, which each use it.
import type { Request, Response } from 'express'
import { currentSlotsTagParts, type SlotsQuery } from '../domain/slots.ts'
import { ifNoneMatchOf, sendNotModifiedIfHeld } from '../http/conditional.ts'
import { weakTag } from '../http/entity-tag.ts'
import type { Deps } from '../deps.ts'

/**
 * For a request with If-None-Match: the tag of the answer as the database has
 * it now, one statement on the short pool, before any row is read or any
 * stream permit waited for; a 304 when the client holds it. Says whether it answered.
 */
export async function answeredNotModified(deps: Deps, req: Request, res: Response, params: SlotsQuery, exposeCustomer: boolean, context: unknown[]): Promise<boolean> {
  const condition = ifNoneMatchOf(req)
  if (!condition) return false
  const parts = await currentSlotsTagParts(deps.db, deps.pool, params, exposeCustomer, deps.config.etagMaxRows)
  return parts !== undefined && sendNotModifiedIfHeld(req, res, weakTag([...context, 'digest', ...parts]), condition)
}
