// TLS to the database (API.md, "The database"): a private MariaDB with
// certificates made by openssl for this run and require_secure_transport=ON,
// read with each ssl-mode. It listens on 127.0.0.1 and 127.0.0.2; its
// certificate names localhost and 127.0.0.1 only.
import { expect } from 'chai'
import { startPrivateMariaDb, type PrivateMariaDb } from '../support/private-mariadb.ts'
import { startListeningService, type ListeningService } from '../support/service.ts'
import { makeCertificates, type TestCertificates } from '../support/certificates.ts'
import mysql from 'mysql2/promise'
import { killStatement } from '../../db/bounded-pool.ts'
import { mysqlTarget } from '../../db/connection-options.ts'
import { loadConfig } from '../../server/config.ts'

const SLOTS = '/wp-json/booking-calendar/v1/slots?per_page=5'

describe('TLS to the database', function () {
  this.timeout(120_000)
  let certs: TestCertificates
  let privateDb: PrivateMariaDb
  const running: ListeningService[] = []

  before(async () => {
    certs = makeCertificates()
    privateDb = await startPrivateMariaDb('tls', 40, {
      bindAddress: '127.0.0.1,127.0.0.2',
      serverOptions: [`--ssl-ca=${certs.ca}`, `--ssl-cert=${certs.serverCert}`, `--ssl-key=${certs.serverKey}`, '--require-secure-transport=ON'],
    })
  })
  after(async () => {
    await Promise.all(running.map((service) => service.close()))
    await privateDb?.stop()
    certs?.remove()
  })

  /** The service over the private server at `host`, with these DATABASE_URL options. */
  async function serviceAt(host: string, options: string): Promise<ListeningService> {
    const { user, password } = privateDb.reader
    const databaseUrl = `mysql://${user}:${password}@${host}:${privateDb.server.port}/tls${options}`
    const service = await startListeningService({ databaseUrl, prefix: 'wp_' })
    running.push(service)
    return service
  }

  const get = (service: ListeningService, path: string) => fetch(`http://127.0.0.1:${service.port}${path}`, { signal: AbortSignal.timeout(15_000) })

  /** A data call and /readyz both answer 200, the bookings over TLS. */
  async function expectAnswers(service: ListeningService): Promise<void> {
    const slots = await get(service, SLOTS)
    expect(slots.status).to.equal(200)
    expect(((await slots.json()) as { total: number }).total).to.equal(40)
    expect((await get(service, '/readyz')).status).to.equal(200)
  }

  /** /readyz is 503, and its one log line says why; nothing in the log holds the password. */
  async function expectRefused(service: ListeningService, why: RegExp): Promise<void> {
    const ready = await get(service, '/readyz')
    expect(ready.status).to.equal(503)
    expect(((await ready.json()) as { code: string }).code).to.equal('rest_database_unavailable')
    const lines = service.logs.filter((line) => line.msg === 'not ready')
    expect(lines).to.have.lengthOf(1)
    expect(lines[0]!.problem).to.match(why)
    expect(JSON.stringify(service.logs)).to.not.include(privateDb.reader.password)
  }

  it('VERIFY_IDENTITY with the right CA answers, by address and by name', async () => {
    await expectAnswers(await serviceAt('127.0.0.1', `?ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`))
    await expectAnswers(await serviceAt('localhost', `?ssl-mode=verify_identity&ssl-ca=${certs.ca}`))
  })

  it('a wrong CA does not connect: /readyz is 503, and the log says why in one line', async () => {
    await expectRefused(await serviceAt('127.0.0.1', `?ssl-mode=VERIFY_CA&ssl-ca=${certs.wrongCa}`),
      /^The database's TLS certificate was refused \(self-signed certificate in certificate chain\): give the CA that signed it as ssl-ca/)
  })

  it('VERIFY_IDENTITY to an address the certificate does not name does not connect; VERIFY_CA there does', async () => {
    await expectRefused(await serviceAt('127.0.0.2', `?ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`),
      /^The database's TLS certificate was refused \(Hostname\/IP does not match certificate's altnames: IP: 127\.0\.0\.2 is not in the cert's list: .*\)/)
    await expectAnswers(await serviceAt('127.0.0.2', `?ssl-mode=VERIFY_CA&ssl-ca=${certs.ca}`))
  })

  it('DISABLED is refused by the server, and the log line names ssl-mode', async () => {
    await expectRefused(await serviceAt('127.0.0.1', '?ssl-mode=DISABLED'),
      /^The database refused the account with ssl-mode DISABLED: a server that requires TLS \(require_secure_transport/)
  })

  it('REQUIRED and PREFERRED (the default) connect over TLS without checking the certificate', async () => {
    await expectAnswers(await serviceAt('127.0.0.2', '?ssl-mode=REQUIRED'))
    await expectAnswers(await serviceAt('127.0.0.2', ''))
  })

  it('the read-only account of own-site.md, with REQUIRE SSL of docs/managed-databases.md, answers every route family', async () => {
    // The recipe's statements, for the database `tls` and the prefix `wp_` (own-site-account.test.ts runs the page's own text).
    await privateDb.server.adminQuery(`
      CREATE USER 'booking_api'@'%' IDENTIFIED BY 'recipe-pw' REQUIRE SSL WITH MAX_USER_CONNECTIONS 52;
      GRANT SELECT ON tls.wp_options TO 'booking_api'@'%';
      GRANT SELECT ON tls.wp_posts TO 'booking_api'@'%';
      GRANT SELECT ON tls.wp_booking_calendar_bookings TO 'booking_api'@'%';
      GRANT SELECT ON tls.wp_booking_calendar_disabled_times TO 'booking_api'@'%';`)
    const service = await startListeningService({ databaseUrl: `mysql://booking_api:recipe-pw@127.0.0.1:${privateDb.server.port}/tls?ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`, prefix: 'wp_' })
    running.push(service)
    await expectAnswers(service)
    for (const path of ['/wp-json/booking-calendar/v1/slots?format=csv', '/wp-json/booking-calendar/v1/summary?start=2025-01-01&end=2026-12-31&group_by=month,service',
      '/wp-json/booking-calendar/v1/disabled-time', '/wp-json/booking-calendar/v1/availability?start=2026-03-01&end=2026-03-07']) {
      expect((await get(service, path)).status, path).to.equal(200)
    }
  })

  it('the connection that ends an overlong statement (KILL) goes with the same TLS settings', async () => {
    const { user, password } = privateDb.reader
    const url = `mysql://${user}:${password}@127.0.0.1:${privateDb.server.port}/tls?ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`
    const target = mysqlTarget(loadConfig({ DATABASE_URL: url }).database)
    const sleeper = await mysql.createConnection(target)
    try {
      const marker = '/* tls kill test */'
      const sleeping = sleeper.query(`${marker} SELECT SLEEP(30)`).then(() => 'slept on', () => 'ended')
      await new Promise((resolve) => setTimeout(resolve, 300))
      await killStatement(target, marker)
      expect(await Promise.race([sleeping, new Promise((resolve) => setTimeout(() => resolve('still running'), 5_000))])).to.equal('ended')
    } finally {
      sleeper.destroy()
    }
  })
})

describe('TLS to a database that offers only TLS 1.1 (issue 63)', function () {
  this.timeout(120_000)
  let certs: TestCertificates
  let privateDb: PrivateMariaDb
  const running: ListeningService[] = []

  before(async () => {
    certs = makeCertificates()
    // OpenSSL 3 takes TLS 1.1 only at security level 0.
    privateDb = await startPrivateMariaDb('tls11', 40, {
      serverOptions: [`--ssl-ca=${certs.ca}`, `--ssl-cert=${certs.serverCert}`, `--ssl-key=${certs.serverKey}`, '--tls-version=TLSv1.1', '--ssl-cipher=DEFAULT:@SECLEVEL=0'],
    })
  })
  after(async () => {
    await Promise.all(running.map((service) => service.close()))
    await privateDb?.stop()
    certs?.remove()
  })

  async function serviceWith(options: string): Promise<ListeningService> {
    const { user, password } = privateDb.reader
    const service = await startListeningService({ databaseUrl: `mysql://${user}:${password}@127.0.0.1:${privateDb.server.port}/tls11${options}`, prefix: 'wp_' })
    running.push(service)
    return service
  }
  const get = (service: ListeningService, path: string) => fetch(`http://127.0.0.1:${service.port}${path}`, { signal: AbortSignal.timeout(15_000) })

  it('PREFERRED (the default) reads in plain text, as the mysql client does', async () => {
    const service = await serviceWith('')
    const slots = await get(service, SLOTS)
    expect(slots.status).to.equal(200)
    expect(((await slots.json()) as { total: number }).total).to.equal(40)
    expect((await get(service, '/readyz')).status).to.equal(200)
  })

  it('REQUIRED refuses, and the log says why in one line', async () => {
    const service = await serviceWith('?ssl-mode=REQUIRED')
    const ready = await get(service, '/readyz')
    expect(ready.status).to.equal(503)
    const lines = service.logs.filter((line) => line.msg === 'not ready')
    expect(lines).to.have.lengthOf(1)
    expect(lines[0]!.problem).to.equal('The database offers only TLS 1.0 or 1.1, which this service does not take (TLS 1.2 or later): turn TLS 1.2 on at the server, or set ssl-mode to PREFERRED, which then reads in plain text as the mysql client does.')
  })
})
