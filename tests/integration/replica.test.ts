// The service on a read-only replica (API.md, "The database"): a second private
// MariaDB made a real replica of the first with MariaDB's own replication
// (binary log and GTID), read_only=ON. Once it has caught up, it answers as the
// primary does, to the ETag.
import { expect } from 'chai'
import { startMariaDb, type MariaDbServer } from '../../scripts/mariadb.ts'
import { startPrivateMariaDb, type PrivateMariaDb } from '../support/private-mariadb.ts'
import { startListeningService, type ListeningService } from '../support/service.ts'

const BOOKINGS = 200
const BOOKINGS_TABLE = 'repl.wp_booking_calendar_bookings'
const ROUTES = [
  '/wp-json/booking-calendar/v1/slots?per_page=5',
  '/wp-json/booking-calendar/v1/slots?format=csv',
  '/wp-json/booking-calendar/v1/slots?format=ics&start=2025-01-01&end=2026-12-31',
  '/wp-json/booking-calendar/v1/summary?start=2025-01-01&end=2026-12-31&group_by=month,service',
  '/wp-json/booking-calendar/v1/disabled-time',
  '/wp-json/booking-calendar/v1/availability?start=2026-03-01&end=2026-03-14',
]
const REPLICATION = { user: 'repl_link', password: 'repl-link-pw' }

describe('the service on a replica', function () {
  this.timeout(120_000)
  let primary: PrivateMariaDb
  let replica: MariaDbServer
  let onPrimary: ListeningService
  let onReplica: ListeningService

  before(async () => {
    // Binary log on from the first statement, so the replica replays everything from the empty server on.
    primary = await startPrivateMariaDb('repl', BOOKINGS, { serverOptions: ['--log-bin=primary-bin', '--server-id=1', '--binlog-format=ROW'] })
    await primary.server.adminQuery(`CREATE USER '${REPLICATION.user}'@'%' IDENTIFIED BY '${REPLICATION.password}'; GRANT REPLICATION SLAVE ON *.* TO '${REPLICATION.user}'@'%';`)
    replica = await startMariaDb({ serverOptions: ['--server-id=2', '--read-only=ON', '--relay-log=replica-relay'] })
    await replica.adminQuery(`
      CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.server.port}, MASTER_USER='${REPLICATION.user}',
        MASTER_PASSWORD='${REPLICATION.password}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;
      START SLAVE;`)
    await caughtUp()
    onPrimary = await startListeningService({ databaseUrl: primary.databaseUrl, prefix: 'wp_' })
    onReplica = await startListeningService({ databaseUrl: primary.databaseUrl.replace(`:${primary.server.port}/`, `:${replica.port}/`), prefix: 'wp_' })
  })
  after(async () => {
    await Promise.all([onPrimary?.close(), onReplica?.close()])
    await replica?.stop()
    await primary?.stop()
  })

  /** Waits, at most 10 s, until the replica has applied all the primary has logged. */
  async function caughtUp(): Promise<void> {
    const { position } = (await primary.server.adminQuery('SELECT @@GLOBAL.gtid_binlog_pos AS position') as Array<{ position: string }>)[0]!
    const { waited } = (await replica.adminQuery(`SELECT MASTER_GTID_WAIT('${position}', 10) AS waited`) as Array<{ waited: number }>)[0]!
    if (waited !== 0) {
      const status = await replica.adminQuery('SHOW SLAVE STATUS') as Array<{ Last_IO_Error?: string; Last_SQL_Error?: string }>
      throw new Error(`the replica did not catch up with ${position} within 10 s: ${status[0]?.Last_IO_Error ?? ''} ${status[0]?.Last_SQL_Error ?? ''}`)
    }
  }

  const get = (service: ListeningService, path: string) => fetch(`http://127.0.0.1:${service.port}${path}`, { signal: AbortSignal.timeout(15_000) })

  /** Each route's status, ETag and body from `service`. */
  async function answers(service: ListeningService): Promise<Array<{ path: string; status: number; etag: string | null; body: string }>> {
    // One at a time: streamed answers wait in line for a few connections (DB_STREAM_CONNECTIONS).
    const all = []
    for (const path of ROUTES) {
      const answer = await get(service, path)
      // DTSTAMP is when a feed was written, not what it says (its ETag is weak).
      all.push({ path, status: answer.status, etag: answer.headers.get('etag'), body: (await answer.text()).replace(/^DTSTAMP:.*$/gm, 'DTSTAMP:(when written)') })
    }
    return all
  }

  it('is a real replica: read_only, replicating from the primary', async () => {
    const [status] = await replica.adminQuery('SHOW SLAVE STATUS') as Array<Record<string, unknown>>
    expect(status).to.include({ Slave_IO_Running: 'Yes', Slave_SQL_Running: 'Yes', Master_Port: primary.server.port })
    const [readOnly] = await replica.adminQuery('SELECT @@GLOBAL.read_only AS ro') as Array<{ ro: number }>
    expect(readOnly!.ro).to.equal(1)
  })

  it('answers on the replica, with the same ETags and bodies as on the primary', async () => {
    expect((await get(onReplica, '/readyz')).status).to.equal(200)
    const [fromPrimary, fromReplica] = [await answers(onPrimary), await answers(onReplica)]
    for (const answer of fromPrimary) expect(answer.status, answer.path).to.equal(200)
    expect(fromPrimary.filter((answer) => answer.etag !== null).length).to.be.at.least(4)
    fromPrimary.forEach((answer, i) => {
      expect(fromReplica[i]!.etag, answer.path).to.equal(answer.etag)
      expect(fromReplica[i]!.body, answer.path).to.equal(answer.body)
    })
  })

  it('a booking written on the primary shows on the replica once it has caught up, with the primary\'s new ETags', async () => {
    const before = await answers(onReplica)
    await primary.server.adminQuery(`INSERT INTO ${BOOKINGS_TABLE} (service_id, status, booking_date, time_from, time_to, customer_name, created_at)
      SELECT service_id, 'approved', '2026-03-04', '10:00:00', '11:00:00', 'Written on the primary', '2026-02-01 09:00:00' FROM ${BOOKINGS_TABLE} ORDER BY id LIMIT 1`)
    await caughtUp()
    const [fromPrimary, fromReplica] = [await answers(onPrimary), await answers(onReplica)]
    expect(fromReplica).to.deep.equal(fromPrimary)
    const total = (answer: { body: string }) => (JSON.parse(answer.body) as { total: number }).total
    expect(total(fromReplica[0]!)).to.equal(total(before[0]!) + 1)
    expect(fromReplica[1]!.etag).to.not.equal(before[1]!.etag)
  })
})
