// API.md, `service`: a service ID or slug, resolved to the bc_service post.
import type { Db } from '../../db/connect.ts'
import { findServiceById, findServiceBySlug, type ServiceRow } from '../../db/services.ts'
import { RestError } from '../errors.ts'
import { storedSlugForms } from './slugs.ts'

/** The look-ups resolveService makes: db/services.ts, or rows in memory in unit tests. */
export interface ServiceLookups {
  findServiceById: (db: Db, id: number) => Promise<ServiceRow | undefined>
  findServiceBySlug: (db: Db, storedForms: string[]) => Promise<ServiceRow | undefined>
}

export const serviceLookups: ServiceLookups = { findServiceById, findServiceBySlug }

/**
 * All digits: the bc_service post with that ID (trashed ones too), else the
 * service with that slug. Otherwise the slug, as given or percent-encoded the
 * way WordPress stores it; drafts and private services count, trashed ones do not.
 */
export async function resolveService(db: Db, value: string, lookups: ServiceLookups = serviceLookups): Promise<ServiceRow> {
  if (/^\d+$/.test(value)) {
    const id = Number(value)
    const byId = Number.isSafeInteger(id) ? await lookups.findServiceById(db, id) : undefined
    if (byId) return byId
  }
  const bySlug = await lookups.findServiceBySlug(db, storedSlugForms(value))
  if (bySlug) return bySlug
  throw new RestError(404, 'rest_service_not_found', `No service matches "${value.slice(0, 200)}": give a service ID or slug.`)
}
