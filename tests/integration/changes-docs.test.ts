// docs/changes.md, "A delta, step by step", run: the sync its first section
// shows, the writes of its `<!-- changes-example: writes -->` block, then the
// delta, each page compared with the block after `<!-- changes-example:
// delta-page-N -->` as tests/integration/doc-examples.test.ts compares the
// answers of curl examples (tests/support/doc-examples.ts).
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { demoDataSql, DEMO_SITE } from '../../db/demo-data.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import request from '../support/request.ts'
import { answerDifferences } from '../support/doc-examples.ts'
import { applyPage, CHANGES_URL, expectSameBookings, followChanges, slotsNow, type Booking, type ChangesPage } from '../support/changes.ts'

const PAGE = readFileSync(new URL('../../docs/changes.md', import.meta.url), 'utf8')

/** The code block after `<!-- changes-example: name -->`. */
function block(name: string): string {
  const match = new RegExp(`<!-- changes-example: ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(PAGE)
  if (!match) throw new Error(`docs/changes.md has no code block after <!-- changes-example: ${name} -->`)
  return match[1]!
}

describe('docs/changes.md: the delta it shows, run against the demo\'s data', function () {
  this.timeout(120_000)
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('changes_docs', DEMO_SITE.prefix)
    for (const statement of demoDataSql(DEMO_SITE)) await db.admin.query(statement)
    t = createTestApp(db, { env: {} })
  })
  after(async () => {
    await t?.close()
    await db?.drop()
  })

  it('the sync, the writes shown, then the delta\'s pages as the page shows them; the copy equals slots/', async () => {
    // The filters of the page's first request.
    const query = /changes\?(service=haircut&start=[\d-]+&end=[\d-]+&per_page=2)'/.exec(PAGE)?.[1]
    expect(query, 'the sync request of "A sync, step by step"').to.be.a('string')
    const copy = new Map<number, Booking>()
    const { token, pages } = await followChanges(t.app, copy, undefined, { query: query! })
    expect(pages).to.have.length(2)

    const writes = block('writes').split(';').map((statement) => statement.trim()).filter(Boolean)
    expect(writes).to.have.length(2)
    for (const statement of writes) await db.admin.query(statement)

    let since = token
    for (const [index, name] of ['delta-page-1', 'delta-page-2'].entries()) {
      const res = await request(t.app).get(`${CHANGES_URL}?${query!}&since=${since}`)
      expect(res.status, JSON.stringify(res.body)).to.equal(200)
      const differences = answerDifferences(block(name), res.text)
      expect(differences, `page ${index + 1} of the delta; the service answered:\n${res.text}`).to.deep.equal([])
      applyPage(copy, res.body as ChangesPage)
      since = (res.body as ChangesPage).next
    }
    expectSameBookings(copy, await slotsNow(t.app, query))
    expect(copy.has(6516), 'the deleted booking left the copy').to.equal(false)
  })
})
