// The pool keeps its connections under a steady load: a new connection costs
// both sides a handshake and MariaDB a new thread with cold caches, and
// mysql2 closed every idle connection above `maxIdle` each second, busy pool
// or not (found by the bench: git log -S maxIdle).
// The pool is larger than the load, as in the bench (ten connections, five
// clients per worker): it never has all its connections free while loaded.
import { expect } from 'chai'
import type { Server } from 'node:http'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { HAIRCUT, loadSite } from '../fixtures/site.ts'

const SLOTS = `/wp-json/booking-calendar/v1/slots?service=${HAIRCUT}&start=2026-03-01&end=2026-03-31`
const CLIENTS = 10
const POOL_SIZE = 12

describe('the database pool under a steady load', () => {
  let db: TestDatabase
  let t: TestApp
  let server: Server
  let base: string

  before(async () => {
    db = await createTestDatabase('pool_churn')
    await loadSite(db)
    t = createTestApp(db, { env: { DB_POOL_SIZE: String(POOL_SIZE), LOG_LEVEL: 'warn' } })
    server = t.app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await t.close()
    await db.drop()
  })

  /** The ids of the reader's connections to this test's database, open now. */
  async function readerConnectionIds(): Promise<number[]> {
    const [rows] = await db.admin.query('SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ?', [db.name]) as unknown as [{ id: number }[]]
    return rows.map((row) => Number(row.id))
  }

  /** CLIENTS clients, each asking again as soon as it has its answer, for `ms`; every answer must be a 200. */
  async function load(ms: number): Promise<number> {
    const until = Date.now() + ms
    let answers = 0
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        const res = await fetch(`${base}${SLOTS}`)
        expect(res.status).to.equal(200)
        await res.arrayBuffer()
        answers++
      }
    }))
    return answers
  }

  it('closes none of its connections, across several of mysql2\'s idle checks (one a second)', async function () {
    this.timeout(20_000)
    await load(500)
    expect(await readerConnectionIds()).to.have.length.of.at.least(5)
    const seen = new Set<number>()
    let loading = true
    const watch = (async () => {
      while (loading) {
        for (const id of await readerConnectionIds()) seen.add(id)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    const answers = await load(3_500)
    loading = false
    await watch
    // Polled once more right away: none has been idle for a minute, and with at most CLIENTS
    // connections made, never more than maxIdle are free.
    const open = new Set(await readerConnectionIds())
    const closed = [...seen].filter((id) => !open.has(id))
    expect(answers).to.be.greaterThan(100)
    expect(closed, `connections closed during the load (${answers} answers)`).to.deep.equal([])
  })
})
