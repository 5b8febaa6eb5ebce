// The least-privilege account of docs/own-site.md, "2. Make a read-only account":
// its statements read out of the page (the block after `<!-- recipe: account -->`)
// and run as the page has them, for a test database; the service then reads
// every route through that account, the account reads no other table, and its
// connection cap is the page's formula at the page's defaults.
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import mysql from 'mysql2/promise'
import { loadConfig } from '../../server/config.ts'
import { createTestDatabase, testServer, type TestDatabase } from '../support/database.ts'
import { startListeningService, type ListeningService } from '../support/service.ts'
import { loadSite } from '../fixtures/site.ts'

const PAGE = new URL('../../docs/own-site.md', import.meta.url)

function accountSql(): string {
  const match = /<!-- recipe: account -->\n```sql\n([\s\S]*?)\n```\n/.exec(readFileSync(PAGE, 'utf8'))
  if (!match) throw new Error('docs/own-site.md has no ```sql block after <!-- recipe: account -->')
  return match[1]!
}

describe('the read-only account of docs/own-site.md', function () {
  this.timeout(120_000)
  let db: TestDatabase
  let service: ListeningService | undefined
  const user = `booking_api_${process.pid}`
  const password = 'a long random password'

  before(async () => {
    db = await createTestDatabase('own_site_account')
    await loadSite(db)
    // The page's statements, for this database and a user of this run; the prefix is the page's wp_.
    const statements = accountSql().replaceAll('wordpress.', `\`${db.name}\`.`).replaceAll("'booking_api'", `'${user}'`)
    await db.admin.query(statements)
  })
  after(async () => {
    await service?.close()
    await db?.admin.query(`DROP USER IF EXISTS '${user}'@'%'`)
    await db?.drop()
  })

  it('grants SELECT on the plugin\'s two tables, posts and options, and nothing else: wp_users is refused', async () => {
    const server = testServer()
    const connection = await mysql.createConnection({ host: server.host, port: server.port, user, password, database: db.name })
    try {
      for (const table of ['booking_calendar_bookings', 'booking_calendar_disabled_times', 'posts', 'options']) {
        await connection.query(`SELECT COUNT(*) FROM wp_${table}`)
      }
      const [grants] = await connection.query('SHOW GRANTS')
      expect((grants as Record<string, string>[]).map((row) => Object.values(row)[0])).to.have.length(5)
      let refused: unknown
      await connection.query('SELECT user_pass FROM wp_users').catch((error: unknown) => { refused = error })
      expect((refused as { code?: string } | undefined)?.code).to.equal('ER_TABLEACCESS_DENIED_ERROR')
    } finally {
      await connection.end()
    }
  })

  it('its cap is WORKERS × (DB_POOL_SIZE + DB_STREAM_CONNECTIONS + 1) at the page\'s 4 workers and the defaults', async () => {
    const defaults = loadConfig({ DATABASE_URL: 'mysql://u:p@h/d', WORKERS: '4' })
    const formula = defaults.workers * (defaults.dbPoolSize + defaults.dbStreamConnections + 1)
    expect(accountSql()).to.include(`WITH MAX_USER_CONNECTIONS ${formula};`)
    const [rows] = await db.admin.query('SELECT max_user_connections FROM mysql.user WHERE user = ?', [user])
    expect(Number((rows as { max_user_connections: number }[])[0]!.max_user_connections)).to.equal(formula)
  })

  it('the service reads every route through it, /readyz included', async () => {
    const server = testServer()
    service = await startListeningService({ databaseUrl: `mysql://${user}:${encodeURIComponent(password)}@${server.host}:${server.port}/${db.name}`, prefix: 'wp_' })
    for (const path of ['/readyz', '/wp-json/booking-calendar/v1/slots?format=csv', '/wp-json/booking-calendar/v1/slots?per_page=2',
      '/wp-json/booking-calendar/v1/summary?start=2026-11-01&end=2026-11-30&group_by=service',
      '/wp-json/booking-calendar/v1/disabled-time?start=2026-11-01&end=2026-11-30', '/wp-json/booking-calendar/v1/availability?start=2026-11-23&end=2026-11-29',
      '/wp-json/']) {
      const answer = await fetch(`http://127.0.0.1:${service.port}${path}`, { signal: AbortSignal.timeout(15_000) })
      expect(answer.status, `${path}: ${await answer.text()}`).to.equal(200)
    }
  })
})
