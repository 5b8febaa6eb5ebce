// The sentence API.md's changes/ turns on: replaying the feed from any token
// gives exactly what slots/ answers. A property test (fast-check): random
// writes while a sync pages and between syncs, under random filters and page
// sizes; after the writes stop, one more delta, and the client's copy must equal
// slots/. The digest source here; changes-log.test.ts runs the same property
// on the log source.
import fc from 'fast-check'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { HAIRCUT, loadSite, STRIZHKA } from '../fixtures/site.ts'
import { replayProperty } from '../support/changes-property.ts'

describe('GET changes/ replayed equals slots/ (digest source, property)', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('changes_replay')
    await loadSite(db)
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('random writes during paging and between syncs, random filters: the copy equals slots/', async () => {
    await fc.assert(replayProperty({ app: () => t.app, target: () => ({ admin: db.admin, table: `\`${db.prefix}booking_calendar_bookings\`` }), services: [HAIRCUT, STRIZHKA] }), { numRuns: 25 })
  })
})
