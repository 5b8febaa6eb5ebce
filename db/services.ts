// Every query on {prefix}posts: services are posts of the type bc_service.
import type { CompiledQuery } from 'kysely'
import type { Db } from './connect.ts'
import { compiledShapesOf } from './compiled-shapes.ts'

export interface ServiceRow {
  ID: number
  post_name: string
  post_status: string
}

/** The bc_service post with this ID, in any status, the trash included (API.md, `service`). */
export async function findServiceById(db: Db, id: number): Promise<ServiceRow | undefined> {
  // Asked on nearly every report: compiled once (db/compiled-shapes.ts).
  const query = compiledShapesOf(db).compile('service by id', [id], ([idSlot]) => db
    .selectFrom('posts')
    .select(['posts.ID', 'posts.post_name', 'posts.post_status'])
    .where('posts.ID', '=', idSlot as number)
    .where('posts.post_type', '=', 'bc_service')
    .compile())
  const { rows } = await db.executeQuery(query)
  return rows[0]
}

/**
 * The bc_service post whose stored post_name is one of the given forms, not
 * in the trash. The column's _ci collation ignores letter case. Published
 * services win over drafts when two share a slug; then the lowest ID.
 */
export async function findServiceBySlug(db: Db, storedForms: string[]): Promise<ServiceRow | undefined> {
  return await db
    .selectFrom('posts')
    .select(['posts.ID', 'posts.post_name', 'posts.post_status'])
    .where('posts.post_type', '=', 'bc_service')
    .where('posts.post_name', 'in', storedForms)
    .where('posts.post_status', '<>', 'trash')
    .orderBy((eb) => eb.case().when('posts.post_status', '=', 'publish').then(0).else(1).end())
    .orderBy('posts.ID')
    .executeTakeFirst()
}

/** Every bc_service post (a site has 10 to 500), for naming the services of disabled-time rules. */
export async function findAllServices(db: Db): Promise<ServiceRow[]> {
  return (await db.executeQuery(compileAllServicesQuery(db))).rows
}

/** findAllServices' query; asked by every disabled-time/ and summary/ answer, so compiled once (db/compiled-shapes.ts). */
function compileAllServicesQuery(db: Db): CompiledQuery<ServiceRow> {
  return compiledShapesOf(db).compile('all services', [], () => db
    .selectFrom('posts')
    .select(['posts.ID', 'posts.post_name', 'posts.post_status'])
    .where('posts.post_type', '=', 'bc_service')
    .compile())
}

/** compileAllServicesQuery, for server/tools.ts (the bench) and the tests of compiled shapes. */
export const statementsForTools = { compileAllServicesQuery }
