// GET changes/ in the log source (API.md, "GET changes/"): the service as its
// own process (server/main.ts, WORKERS=2: the primary reads the log, its workers
// ask it), over a private MariaDB with a binary log. Operations in commit
// order, paged deltas, the replay property, revalidation and shared reads by
// the log's position, restarts of the service and of the database, purged logs.
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { get as httpGet } from 'node:http'
import fc from 'fast-check'
import { describeOwnServer } from '../support/database.ts'
import { spawnService, startListeningService, type ServiceProcess } from '../support/service.ts'
import { startBinlogSite, type BinlogSite } from '../support/binlog-site.ts'
import { HAIRCUT, STRIZHKA } from '../fixtures/site.ts'
import type { Booking, ChangesPage } from '../support/changes.ts'
import { applyPage, expectSameBookings } from '../support/changes.ts'
import { replayProperty } from '../support/changes-property.ts'
import { until } from '../support/metrics-line.ts'

const PREFIX = '/wp-json/booking-calendar/v1/'

describeOwnServer('GET changes/ (log source)', 'it kills and restarts a MariaDB of its own with a binary log', function () {
  this.timeout(120_000)
  let binlog: BinlogSite
  let service: ServiceProcess
  const table = '`wp_booking_calendar_bookings`'
  const env = () => ({ WORKERS: '2', CHANGES_SOURCE: 'auto', SITE_TIMEZONE: 'Europe/Berlin', BINLOG_SERVER_ID: '7301' })
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${service.port}${PREFIX}${path}`, { headers })
  const stopService = async () => {
    service.child.kill('SIGTERM')
    await service.exited
  }
  let serviceStartedAt = 0
  const startService = async (extra: Record<string, string> = {}) => {
    service = await spawnService({ databaseUrl: binlog.logReaderUrl, prefix: 'wp_' }, { ...env(), ...extra })
    serviceStartedAt = Date.now()
    await until(async () => ((await (await fetch(`http://127.0.0.1:${service.port}/readyz`)).json()) as { changes?: { source?: string } }).changes?.source === 'log', 30_000, 'the log source is read', 100)
  }
  /** Follows next until more is false, as a client does; the pages and the token to keep. */
  const follow = async (copy: Map<number, Booking>, since: string | undefined, query = '') => {
    const pages: ChangesPage[] = []
    let token = since
    for (;;) {
      const res = await get(`changes?${[query, token === undefined ? '' : `since=${encodeURIComponent(token)}`].filter(Boolean).join('&')}`)
      const body = await res.json() as ChangesPage
      expect(res.status, JSON.stringify(body)).to.equal(200)
      pages.push(body)
      applyPage(copy, body)
      token = body.next
      if (!body.more) return { token, pages }
    }
  }
  const slotsNow = async (query = '') => {
    const filters = query.split('&').filter((pair) => pair !== '' && !pair.startsWith('per_page=')).join('&')
    const body = await (await get(`slots?flat${filters ? `&${filters}` : ''}`)).json() as { booked_slots: Booking[] }
    return new Map(body.booked_slots.map((booking) => [booking.id, booking]))
  }

  before(async () => {
    binlog = await startBinlogSite('changes_log')
    await startService()
  })
  after(async () => {
    if (service && service.child.exitCode === null) await stopService()
    await binlog?.stop()
  })

  it('names its source: /readyz says log and where its reader is; /metrics says log', async () => {
    const ready = await (await fetch(`http://127.0.0.1:${service.port}/readyz`)).json() as { changes: { source: string; reader: { connected: boolean; position?: { file: string } } } }
    expect(ready.changes.source).to.equal('log')
    expect(ready.changes.reader.connected).to.equal(true)
    expect(ready.changes.reader.position?.file).to.match(/^bc-bin\.\d+$/)
    // docs/changes-log-setup.md shows this answer: the same fields, of the same types (the position is this server's).
    const page = readFileSync('docs/changes-log-setup.md', 'utf8')
    const shown = JSON.parse(/curl -s https:\/\/shop\.example\.com\/readyz\n```\n\n```json\n(.*)\n```/.exec(page)![1]!) as typeof ready
    const shape = (value: unknown): unknown => (value !== null && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)])) : typeof value)
    expect(shape(ready)).to.deep.equal(shape(shown))
    const metrics = await (await fetch(`http://127.0.0.1:${service.port}/metrics`)).text()
    expect(metrics).to.match(/^booking_calendar_changes_source\{source="log"\} 1$/m)
    expect(service.logs.some((line) => line.msg === 'changes/ reads the database\'s binary log')).to.equal(true)
  })

  it('inserts, updates and deletes come as upserts and deletes, in commit order, each booking once; replaying gives slots/', async () => {
    const copy = new Map<number, Booking>()
    const { token } = await follow(copy, undefined)
    expect(copy.size).to.equal((await slotsNow()).size)
    await binlog.site.insert('booking_calendar_bookings', [{ id: 901, service_id: HAIRCUT, status: 'booked', booking_date: '2026-06-01', time_from: '10:00:00', time_to: '11:00:00', created_at: '2026-05-01 09:00:00' }])
    await binlog.site.admin.query(`UPDATE ${table} SET note = 'first' WHERE id = 102`)
    await binlog.site.admin.query(`DELETE FROM ${table} WHERE id = 103`)
    await binlog.site.admin.query(`UPDATE ${table} SET note = 'second' WHERE id = 901`)
    const { pages } = await follow(copy, token)
    expect(pages).to.have.length(1)
    expect(pages[0]!.changes.map((operation) => `${operation.op} ${'id' in operation ? operation.id : ''}`)).to.deep.equal(['upsert 102', 'delete 103', 'upsert 901'])
    expect(copy.get(901)?.note).to.equal('second')
    expectSameBookings(copy, await slotsNow())
  })

  it('a delta pages: per_page operations a page, the same delta until more is false; a booking that leaves the filters is a delete', async () => {
    const query = 'status=booked,pending&per_page=2'
    const copy = new Map<number, Booking>()
    const { token } = await follow(copy, undefined, query)
    await binlog.site.admin.query(`UPDATE ${table} SET status = 'reject' WHERE id = 101`)
    for (let i = 0; i < 4; i++) await binlog.site.insert('booking_calendar_bookings', [{ id: 910 + i, service_id: STRIZHKA, status: 'pending', booking_date: '2026-06-02', created_at: '2026-05-01 09:00:00' }])
    const { pages } = await follow(copy, token, query)
    expect(pages.map((page) => page.changes.length)).to.deep.equal([2, 2, 1])
    expect(pages[0]!.changes[0]).to.deep.equal({ op: 'delete', id: 101 })
    expect(copy.has(101)).to.equal(false)
    expectSameBookings(copy, await slotsNow(query))
  })

  it('random writes during paging and between syncs, random filters: the copy equals slots/ (property)', async () => {
    await fc.assert(replayProperty({
      app: () => `http://127.0.0.1:${service.port}`,
      target: () => ({ admin: binlog.site.admin, table }),
      services: [HAIRCUT, STRIZHKA],
    }), { numRuns: 12 })
  })

  it('a year\'s tag revalidated by the log: 304 with no row read while nothing changed; never stale after a booking changed', async () => {
    const path = 'slots?flat&start=2026-01-01&end=2026-12-31'
    const first = await get(path)
    expect(first.status).to.equal(200)
    const tag = first.headers.get('etag')!
    // Both workers learn the tag: the next requests may reach either.
    for (let i = 0; i < 4; i++) await get(path)
    // MariaDB's count of rows read, by every statement of every account.
    const rowsRead = async () => {
      const [row] = await binlog.db.server.adminQuery("SHOW GLOBAL STATUS LIKE 'Rows_read'") as Array<{ Value: string }>
      expect(row, 'the Rows_read status').to.not.equal(undefined)
      return Number(row!.Value)
    }
    const before = await rowsRead()
    for (let i = 0; i < 4; i++) {
      const again = await get(path, { 'If-None-Match': tag })
      expect(again.status).to.equal(304)
      expect(again.headers.get('etag')).to.equal(tag)
      expect(again.headers.get('cache-control')).to.equal('private, no-cache')
    }
    expect(await rowsRead() - before, 'rows read by four 304s').to.equal(0)
    expect(service.logs.filter((line) => line.answeredByLog === 'not-modified').length).to.be.at.least(4)
    // A change the answer is not made of (a post that is no service): still 304.
    await binlog.site.insert('posts', [{ ID: 700, post_type: 'post', post_name: 'news', post_title: 'News', post_status: 'publish' }])
    expect((await get(path, { 'If-None-Match': tag })).status).to.equal(304)
    // A booking of the year (a new one: the property test above moves the fixtures' days at random).
    await binlog.site.insert('booking_calendar_bookings', [{ id: 960, service_id: HAIRCUT, status: 'booked', booking_date: '2026-09-09', note: 'revalidated', created_at: '2026-08-01 09:00:00' }])
    const changed = await get(path, { 'If-None-Match': tag })
    expect(changed.status).to.equal(200)
    expect(changed.headers.get('etag')).to.not.equal(tag)
    expect(await changed.text()).to.include('revalidated')
  })

  it('identical reports in flight share one read: the same bytes for each, as a lone request gets', async () => {
    const path = 'slots?format=csv&start=2025-01-01&end=2027-12-31'
    const alone = await (await get(path)).text()
    const answers = await Promise.all(Array.from({ length: 12 }, async () => {
      const res = await get(path)
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() }
    }))
    for (const answer of answers) expect(answer).to.deep.equal({ status: 200, type: 'text/csv; charset=utf-8', body: alone })
    // Shared with the one in flight, or sent again as kept whole once it ended: never read twelve times.
    // Under load a request may also read for itself (the log asked too late: in doubt, read), never with other bytes.
    expect(service.logs.filter((line) => line.path === `${PREFIX}slots` && (line.answeredByLog === 'shared' || line.answeredByLog === 'kept')).length, 'answers shared or kept').to.be.at.least(1)
  })

  it('an answer kept whole is sent again while the log shows no change, and read again after one', async () => {
    const path = 'slots?format=csv&start=2026-01-01&end=2026-12-31&status=booked'
    const first = await (await get(path)).text()
    // Both workers keep it: the next requests may reach either.
    for (let i = 0; i < 3; i++) expect(await (await get(path)).text()).to.equal(first)
    expect(service.logs.filter((line) => line.answeredByLog === 'kept').length).to.be.at.least(1)
    expect(first).to.include('\n901,')
    await binlog.site.admin.query(`UPDATE ${table} SET note = 'kept no more' WHERE id = 901`)
    for (let i = 0; i < 3; i++) expect(await (await get(path)).text()).to.include('kept no more')
  })

  it('joiners that read slowly get every byte of a long shared answer right (the writer\'s buffers are used again)', async () => {
    const rows = Array.from({ length: 4000 }, (_, i) => ({ id: 20_000 + i, service_id: i % 2 === 0 ? HAIRCUT : STRIZHKA, status: 'booked', booking_date: `2026-08-${String(1 + (i % 28)).padStart(2, '0')}`, time_from: '09:00:00', time_to: '10:00:00', note: `note ${i} `.repeat(1 + (i % 7)), created_at: '2026-07-01 08:00:00' }))
    for (let at = 0; at < rows.length; at += 500) await binlog.site.insert('booking_calendar_bookings', rows.slice(at, at + 500))
    try {
      const path = 'slots?flat&start=2026-08-01&end=2026-08-31'
      const alone = await (await get(path)).text()
      expect(alone.length).to.be.above(1_000_000)
      // Not the kept answer: another question of the same bytes' length class, asked once each, at once.
      const fresh = `${path}&_fields=id,note,start`
      const want = await (await get(fresh)).text()
      await binlog.site.admin.query(`UPDATE ${table} SET note = 'changed' WHERE id = 20000`)
      const slowly = async (pauseMs: number) => new Promise<string>((resolve, reject) => {
        const req = httpGet(`http://127.0.0.1:${service.port}${PREFIX}${fresh}`, (res) => {
          const chunks: Buffer[] = []
          res.pause()
          setTimeout(() => res.resume(), pauseMs)
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
          res.on('error', reject)
        })
        req.on('error', reject)
      })
      const answers = await Promise.all([slowly(0), slowly(300), slowly(600), slowly(900), slowly(0), slowly(400)])
      const expected = want.replace(/"note":"note 0 "/, '"note":"changed"')
      for (const answer of answers) expect(answer === expected, 'a joiner\'s bytes').to.equal(true)
    } finally {
      await binlog.site.admin.query(`DELETE FROM ${table} WHERE id >= 20000 AND id < 30000`)
    }
  })

  it('customer data follows the caller\'s mode in every operation: null without credentials, shown with a token', async () => {
    const tokenService = await startListeningService({ databaseUrl: binlog.logReaderUrl, prefix: 'wp_' }, { CHANGES_SOURCE: 'log', BINLOG_SERVER_ID: '7309', AUTH_MODE: 'token', API_TOKENS: 'changes-token-0123456789', SITE_TIMEZONE: 'Europe/Berlin' })
    try {
      const ask = async (port: number, path: string, headers: Record<string, string> = {}) => (await fetch(`http://127.0.0.1:${port}${PREFIX}${path}`, { headers })).json() as Promise<ChangesPage>
      const bearer = { Authorization: 'Bearer changes-token-0123456789' }
      const anonymous = await ask(service.port, 'changes?per_page=3')
      const withToken = await ask(tokenService.port, 'changes?per_page=3', bearer)
      for (const operation of anonymous.changes) if (operation.op === 'upsert') expect(operation.booking.customer).to.equal(null)
      for (const operation of withToken.changes) if (operation.op === 'upsert') expect(operation.booking.customer).to.have.keys('name', 'email', 'phone')
      // A delta of the log source (upserts), for each caller.
      const anonymousToken = (await follow(new Map(), undefined)).token
      let tokenToken = withToken.next
      for (let page = withToken; page.more; page = await ask(tokenService.port, `changes?per_page=3&since=${encodeURIComponent(tokenToken)}`, bearer)) tokenToken = page.next
      const last = await ask(tokenService.port, `changes?per_page=3&since=${encodeURIComponent(tokenToken)}`, bearer)
      tokenToken = last.next
      await binlog.site.admin.query(`UPDATE ${table} SET customer_name = 'Renamed' WHERE id = 110`)
      const anonymousDelta = await ask(service.port, `changes?since=${encodeURIComponent(anonymousToken)}`)
      const tokenDelta = await ask(tokenService.port, `changes?per_page=3&since=${encodeURIComponent(tokenToken)}`, bearer)
      expect(anonymousDelta.changes).to.have.length(1)
      expect(anonymousDelta.changes[0]).to.deep.include({ op: 'upsert', id: 110 })
      expect((anonymousDelta.changes[0] as { booking: Booking }).booking.customer).to.equal(null)
      expect((tokenDelta.changes[0] as { booking: Booking }).booking.customer).to.deep.include({ name: 'Renamed' })
      // Without credentials in token mode: 401, as every route.
      expect((await fetch(`http://127.0.0.1:${tokenService.port}${PREFIX}changes`)).status).to.equal(401)
    } finally {
      await tokenService.close()
    }
  })

  it('the digest source, with the reason logged and in /readyz: an account without replication privileges, binlog_format=MIXED', async () => {
    const reasonOf = async (databaseUrl: string) => {
      const other = await startListeningService({ databaseUrl, prefix: 'wp_' }, { CHANGES_SOURCE: 'auto', BINLOG_SERVER_ID: '7310' })
      try {
        const ready = await (await fetch(`http://127.0.0.1:${other.port}/readyz`)).json() as { changes: { source: string; reason?: string } }
        const line = other.logs.find((entry) => entry.changesSource === 'digest')
        expect(ready.changes.source).to.equal('digest')
        expect(line?.reason).to.equal(ready.changes.reason)
        return ready.changes.reason ?? ''
      } finally {
        await other.close()
      }
    }
    expect(await reasonOf(binlog.db.databaseUrl)).to.match(/REPLICATION/)
    await binlog.db.server.adminQuery("SET GLOBAL binlog_format = 'MIXED'")
    try {
      expect(await reasonOf(binlog.logReaderUrl)).to.match(/binlog_format/)
    } finally {
      await binlog.db.server.adminQuery("SET GLOBAL binlog_format = 'ROW'")
    }
  })

  it('a second instance with the same BINLOG_SERVER_ID is refused with a clear line; the first keeps reading', async () => {
    // The first is established (reading for over 10 s), the second a newcomer: the newcomer gives way (db/binlog-reader.ts).
    const establishedAt = serviceStartedAt + 11_000
    if (Date.now() < establishedAt) await new Promise((resolve) => setTimeout(resolve, establishedAt - Date.now()))
    const second = await startListeningService({ databaseUrl: binlog.logReaderUrl, prefix: 'wp_' }, { CHANGES_SOURCE: 'log', BINLOG_SERVER_ID: env().BINLOG_SERVER_ID })
    try {
      await until(() => second.logs.some((line) => /another reader uses server id 7301 \(BINLOG_SERVER_ID\)/.test(typeof line.msg === 'string' ? line.msg : '')), 60_000, 'the second names the shared server id', 100)
        .catch((error: unknown) => {
          console.log(second.logs.filter((line) => Number(line.level) >= 40 || /reader|binary|server id/.test(String(line.msg))).map((line) => JSON.stringify(line)).join('\n'))
          console.log(service.logs.filter((line) => Number(line.level) >= 40).map((line) => JSON.stringify(line)).join('\n'))
          throw error
        })
      const copy = new Map<number, Booking>()
      const { token } = await follow(copy, undefined)
      await binlog.site.admin.query(`UPDATE ${table} SET note = 'the first reads on' WHERE id = 111`)
      await follow(copy, token)
      expect(copy.get(111)?.note).to.equal('the first reads on')
    } finally {
      await second.close()
    }
  })

  it('a token survives a restart of the service: the new reader reads back to it', async () => {
    const copy = new Map<number, Booking>()
    const { token } = await follow(copy, undefined)
    await binlog.site.admin.query(`UPDATE ${table} SET note = 'while the service was up' WHERE id = 104`)
    await stopService()
    await binlog.site.admin.query(`UPDATE ${table} SET note = 'while the service was down' WHERE id = 106`)
    await startService()
    await follow(copy, token)
    expect(copy.get(104)?.note).to.equal('while the service was up')
    expect(copy.get(106)?.note).to.equal('while the service was down')
    expectSameBookings(copy, await slotsNow())
  })

  it('a token survives the database killed (kill -9) and started again: nothing lost', async () => {
    const copy = new Map<number, Booking>()
    const { token } = await follow(copy, undefined)
    // The test server flushes the redo log and the binary log once a second (scripts/mariadb.ts): a crash would lose the last second.
    await binlog.db.server.adminQuery('SET GLOBAL innodb_flush_log_at_trx_commit = 1; SET GLOBAL sync_binlog = 1')
    await binlog.site.admin.query(`UPDATE ${table} SET note = 'before the crash' WHERE id = 107`)
    process.kill(binlog.db.pid(), 'SIGKILL')
    await binlog.db.server.restart()
    await binlog.db.server.adminQuery(`UPDATE changes_log.${table} SET note = 'after the crash' WHERE id = 108`)
    let result: { token: string } | undefined
    await until(async () => {
      const res = await get(`changes?since=${encodeURIComponent(token)}`)
      if (res.status !== 200) return false
      applyPage(copy, await res.json() as ChangesPage)
      result = { token }
      return true
    }, 60_000, 'a delta after the restart', 500)
    expect(result).to.not.equal(undefined)
    expect(copy.get(107)?.note).to.equal('before the crash')
    expect(copy.get(108)?.note).to.equal('after the crash')
  })

  it('410 rest_changes_token_expired when the log no longer reaches back to the token (purged)', async () => {
    // The admin connection did not survive the crash above: root's own, over the socket.
    const { token } = await follow(new Map(), undefined)
    await binlog.db.server.adminQuery(`UPDATE changes_log.${table} SET note = 'before the purge' WHERE id = 109`)
    await stopService()
    // A file a replica still reads is not purged: the stopped service's dump thread, which MariaDB
    // notices gone only at its next heartbeat, is ended first.
    for (const { id } of await binlog.db.server.adminQuery("SELECT id FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%'") as Array<{ id: number }>) {
      await binlog.db.server.adminQuery(`KILL ${id}`).catch(() => undefined)
    }
    await binlog.db.server.adminQuery('FLUSH BINARY LOGS')
    const [status] = await binlog.db.server.adminQuery('SHOW MASTER STATUS') as Array<{ File: string }>
    const logsLeft = async () => (await binlog.db.server.adminQuery('SHOW BINARY LOGS') as Array<{ Log_name: string }>).map((row) => row.Log_name)
    // MariaDB keeps a file until its binlog checkpoint has moved past it (crash recovery may need it): asked again until it goes.
    await until(async () => {
      await binlog.db.server.adminQuery(`PURGE BINARY LOGS TO '${status!.File}'`)
      return (await logsLeft()).length === 1
    }, 20_000, 'the old logs purged', 200)
    expect(await logsLeft(), 'the logs left after the purge').to.deep.equal([status!.File])
    await startService()
    const res = await get(`changes?since=${encodeURIComponent(token)}`)
    const body = await res.json() as { code: string; data: { status: number }; message: string }
    expect(res.status).to.equal(410)
    expect(body.code).to.equal('rest_changes_token_expired')
    expect(body.message).to.match(/Start a new sync/)
    // A new sync works.
    const copy = new Map<number, Booking>()
    await follow(copy, undefined)
    expectSameBookings(copy, await slotsNow())
  })

  it('a delta on a frozen database (SIGSTOP) is 503 or 504 with Retry-After within QUERY_TIMEOUT_MS and a margin; after SIGCONT the same token answers', async () => {
    // The log's position, the server's id and the slugs are read on the worker's own pool: each bounded by its statement timer.
    await stopService()
    await startService({ QUERY_TIMEOUT_MS: '1000' })
    const copy = new Map<number, Booking>()
    const { token } = await follow(copy, undefined)
    const pid = binlog.db.pid()
    process.kill(pid, 'SIGSTOP')
    try {
      const started = Date.now()
      const res = await get(`changes?since=${encodeURIComponent(token)}`)
      const ms = Date.now() - started
      expect([503, 504], await res.text()).to.include(res.status)
      expect(ms).to.be.below(4_500)
      expect(res.headers.get('retry-after')).to.match(/^\d+$/)
    } finally {
      process.kill(pid, 'SIGCONT')
    }
    await binlog.db.server.adminQuery(`UPDATE changes_log.${table} SET note = 'after the freeze' WHERE id = 112`)
    await until(async () => {
      const res = await get(`changes?since=${encodeURIComponent(token)}`)
      if (res.status !== 200) return false
      applyPage(copy, await res.json() as ChangesPage)
      return true
    }, 30_000, 'a delta after SIGCONT', 200)
    expect(copy.get(112)?.note).to.equal('after the freeze')
  })
})
