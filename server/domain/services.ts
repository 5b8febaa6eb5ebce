// API.md, `service`: a service ID or slug, resolved to the bc_service post.
import type { Db } from '../../db/connect.ts'
import { findServiceById, findServiceBySlug, type ServiceRow } from '../../db/services.ts'
import { RestError } from '../errors.ts'
import { storedSlugForms } from './records.ts'

/**
 * All digits: the bc_service post with that ID (trashed ones too), else the
 * service with that slug. Otherwise the slug, as given or percent-encoded the
 * way WordPress stores it; drafts and private services count, trashed ones do not.
 */
export async function resolveService(db: Db, value: string): Promise<ServiceRow> {
  if (/^\d+$/.test(value)) {
    const id = Number(value)
    const byId = Number.isSafeInteger(id) ? await findServiceById(db, id) : undefined
    if (byId) return byId
  }
  const bySlug = await findServiceBySlug(db, storedSlugForms(value))
  if (bySlug) return bySlug
  throw new RestError(404, 'rest_service_not_found', `No service matches "${value.slice(0, 200)}": give a service ID or slug.`)
}
