// The compose stack's parts, run here without Docker: the database's
// init script creates the read-only account, the seed has WordPress install
// itself and loads the demo data, the service reads it through the read-only
// account, and nginx, with the
// stack's own template, sends /wp-json/booking-calendar/ to the service and
// everything else to WordPress.
import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import mysql from 'mysql2/promise'
import { parse } from 'yaml'
import { describeOwnServer, testServer } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { checkNginxConfig, startNginx, type NginxProxy } from '../support/nginx.ts'
import { prepareWordPress, type WordPressServer } from '../../scripts/wordpress.ts'

const INIT_SCRIPT = 'docker/db/initdb.d/10-booking-api-reader.sh'
const BOOKINGS = 5_000
/** The bookings the seed wrote: BOOKINGS, with the showcase week in place of haircut's generated bookings of that week. */
let seeded = 0

/**
 * Sources the init script as the official MariaDB image's entrypoint does, with
 * its two helpers defined as the entrypoint defines them (root over the socket).
 */
function runInitScript(socketPath: string, env: Record<string, string>) {
  const harness = `
set -eo pipefail
docker_sql_escape_string_literal() {
  local newline=$'\\n'
  local escaped=\${1//\\\\/\\\\\\\\}
  escaped="\${escaped//$newline/\\\\n}"
  echo "\${escaped//\\'/\\\\\\'}"
}
docker_process_sql() {
  mariadb --protocol=socket -uroot -hlocalhost --socket="$TEST_SOCKET" "$@"
}
. ${INIT_SCRIPT}
`
  return spawnSync('bash', ['--norc', '--noprofile', '-c', harness], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, TEST_SOCKET: socketPath, ...env } })
}

function runSeed(env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/seed.ts'], { encoding: 'utf8', env: { PATH: process.env.PATH, ...env } })
}

describeOwnServer('the compose stack, without Docker', 'the image\'s init script runs as root over the private MariaDB\'s socket', function () {
  this.timeout(120_000)
  const server = testServer()
  const suffix = `${process.pid}_${Date.now() % 100_000}`
  const database = `bc_stack_${suffix}`
  const reader = { user: `booking_api_${suffix}`, password: 'it\'s a \\ secret' }
  const writer = { user: `wordpress_${suffix}`, password: 'wordpress-password' }
  let root: mysql.Connection
  let wordpress: WordPressServer | undefined
  let t: TestApp | undefined
  let api: Server | undefined
  let proxy: NginxProxy | undefined

  const seedEnv = () => ({
    WORDPRESS_DB_HOST: `${server.host}:${server.port}`, WORDPRESS_DB_USER: writer.user, WORDPRESS_DB_PASSWORD: writer.password,
    WORDPRESS_DB_NAME: database, WORDPRESS_TABLE_PREFIX: 'wp_', SEED_BOOKINGS: String(BOOKINGS),
  })

  before(async () => {
    root = await mysql.createConnection({ socketPath: server.socketPath, user: 'root', multipleStatements: true })
    // What the official image does with MARIADB_DATABASE, MARIADB_USER and MARIADB_PASSWORD.
    await root.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
      CREATE USER '${writer.user}'@'%' IDENTIFIED BY '${writer.password}'; GRANT ALL ON \`${database}\`.* TO '${writer.user}'@'%'`)
  })
  after(async () => {
    await proxy?.stop()
    if (api) {
      api.closeAllConnections()
      await new Promise((resolve) => api!.close(resolve))
    }
    await t?.close()
    await wordpress?.close()
    await root.query(`DROP DATABASE IF EXISTS \`${database}\`; DROP USER IF EXISTS '${writer.user}'@'%'; DROP USER IF EXISTS '${reader.user}'@'%'`)
    await root.end()
  })

  it('the init script creates the read-only account: SELECT on the WordPress database, nothing else', async () => {
    const result = runInitScript(server.socketPath!, {
      MARIADB_DATABASE: database, BOOKING_API_DB_USER: reader.user, BOOKING_API_DB_PASSWORD: reader.password,
    })
    expect(result.stderr).to.equal('')
    expect(result.status).to.equal(0)
    const [grants] = await root.query(`SHOW GRANTS FOR '${reader.user}'@'%'`)
    const lines = (grants as Record<string, string>[]).map((row) => Object.values(row)[0]!.replace(/ IDENTIFIED BY PASSWORD '[^']*'/, ''))
    expect(lines).to.deep.equal([`GRANT USAGE ON *.* TO \`${reader.user}\`@\`%\``, `GRANT SELECT ON \`${database}\`.* TO \`${reader.user}\`@\`%\``])
    // The password with a quote and a backslash in it works as given.
    const conn = await mysql.createConnection({ host: server.host, port: server.port, user: reader.user, password: reader.password })
    const [databases] = await conn.query('SHOW DATABASES')
    expect((databases as { Database: string }[]).map((row) => row.Database).sort()).to.deep.equal([database, 'information_schema'])
    await conn.end()
  })

  it('the init script stops with a sentence when a variable is missing', () => {
    const result = runInitScript(server.socketPath!, { MARIADB_DATABASE: database, BOOKING_API_DB_USER: reader.user })
    expect(result.status).to.not.equal(0)
    expect(result.stderr).to.include('BOOKING_API_DB_PASSWORD must be set')
  })

  it('the seed refuses a database where WordPress is not installed, unless it may run the installer', () => {
    const result = runSeed(seedEnv())
    expect(result.status).to.equal(1)
    expect(result.stderr).to.equal(`[seed] WordPress is not installed in ${database} (no siteurl in wp_options): finish its install, or set WORDPRESS_INSTALL_URL for the seed to run it.\n`)
  })

  it('the seed has WordPress install itself, then loads the demo data once; a seeded database is left alone', async () => {
    wordpress = await prepareWordPress({ database: { name: database, host: server.host, port: server.port, ...writer }, prefix: 'wp_' })
    await wordpress.start()
    const env = { ...seedEnv(), WORDPRESS_INSTALL_URL: wordpress.url, SEED_ADMIN_PASSWORD: 'admin-password', SEED_SITE_TITLE: 'Seeded salon' }
    const first = runSeed(env)
    expect(first.stderr).to.equal('')
    expect(first.status).to.equal(0)
    const lines = first.stdout.trimEnd().split('\n')
    expect(lines[0]).to.equal(`[seed] installing WordPress through ${wordpress.url}/wp-admin/install.php`)
    const written = /^\[seed\] ([\d,]+) bookings written to (\S+) \(prefix wp_\) in [\d.]+ s$/.exec(lines.at(-1)!)
    expect(written?.[2]).to.equal(database)
    seeded = Number(written![1]!.replace(/,/g, ''))
    const second = runSeed(env)
    expect(second.status).to.equal(0)
    expect(second.stdout).to.equal(`[seed] ${database} has ${seeded.toLocaleString('en')} bookings already: nothing written\n`)

    const [rows] = await root.query(`SELECT
      (SELECT COUNT(*) FROM \`${database}\`.wp_booking_calendar_bookings) AS bookings,
      (SELECT COUNT(*) FROM \`${database}\`.wp_booking_calendar_bookings WHERE customer_name LIKE 'Showcase %') AS showcase,
      (SELECT COUNT(*) FROM \`${database}\`.wp_booking_calendar_disabled_times) AS rules,
      (SELECT COUNT(*) FROM \`${database}\`.wp_posts WHERE post_type = 'bc_service') AS services,
      (SELECT COUNT(*) FROM \`${database}\`.wp_users) AS users,
      (SELECT option_value FROM \`${database}\`.wp_options WHERE option_name = 'timezone_string') AS timezone,
      (SELECT option_value FROM \`${database}\`.wp_options WHERE option_name = 'blogname') AS title`)
    expect((rows as Record<string, unknown>[])[0]).to.deep.include({ bookings: seeded, showcase: 6, services: 36, users: 1, timezone: 'Europe/Berlin', title: 'Seeded salon' })
    expect(seeded).to.be.within(BOOKINGS - 20, BOOKINGS + 6)
    expect(Number((rows as Record<string, unknown>[])[0]!.rules)).to.be.above(0)
    const posts = await (await fetch(`${wordpress.url}/wp-json/wp/v2/posts`)).json() as { title: { rendered: string } }[]
    expect(posts.map((post) => post.title.rendered)).to.include('Hello world!')
  })

  it('the service reads the seeded site through the read-only account', async function () {
    if (!wordpress) this.skip()
    t = createTestApp({ name: database, prefix: 'wp_' } as Parameters<typeof createTestApp>[0], {
      env: { DATABASE_URL: `mysql://${reader.user}:${encodeURIComponent(reader.password)}@${server.host}:${server.port}/${database}` },
    })
    api = t.app.listen(0, '127.0.0.1')
    await new Promise((resolve) => api!.once('listening', resolve))
    const res = await fetch(`http://127.0.0.1:${(api.address() as AddressInfo).port}/wp-json/booking-calendar/v1/slots?service=haircut&per_page=1`)
    expect(res.status).to.equal(200)
    expect(Number(res.headers.get('x-wp-total'))).to.be.above(100)
    // The README's and get-it-running.md's availability/ example answers under compose as under npm run demo (DEMO_SITE).
    const free = await fetch(`http://127.0.0.1:${(api.address() as AddressInfo).port}/wp-json/booking-calendar/v1/availability?service=haircut&start=2026-12-08&end=2026-12-08&duration=60&format=csv`)
    expect(await free.text()).to.equal([
      'service_id,service_slug,start,end',
      ...['08', '11', '12', '13', '14', '15'].map((hour) => `10,haircut,2026-12-08T${hour}:00:00+01:00,2026-12-08T${String(Number(hour) + 1).padStart(2, '0')}:00:00+01:00`),
      '',
    ].join('\r\n'))
  })

  describe('nginx in front (docker/nginx/templates/default.conf.template)', () => {
    const proxied = (path: string, headers: Record<string, string> = {}) => fetch(`${proxy!.url}${path}`, { headers })

    before(async function () {
      if (!api || !wordpress) this.skip()
      proxy = await startNginx({ api: `127.0.0.1:${(api.address() as AddressInfo).port}`, wordpress: new URL(wordpress.url).host })
    })

    it('sends /wp-json/booking-calendar/ to the service, whole, and keeps the client\'s X-Request-Id', async () => {
      const res = await proxied('/wp-json/booking-calendar/v1/slots/?flat&_fields=id', { 'X-Request-Id': 'through-nginx-1' })
      expect(res.status).to.equal(200)
      expect(res.headers.get('x-request-id')).to.equal('through-nginx-1')
      const body = await res.json() as { booked_slots: unknown[]; total: number }
      expect(body.total).to.equal(seeded)
      expect(body.booked_slots).to.have.length(seeded)
      expect(t!.logs.filter((line) => line.msg === 'request').at(-1)).to.include({ requestId: 'through-nginx-1', route: 'slots' })
    })

    it('sends the ?rest_route=/booking-calendar/ form to the service, encoded slashes too', async () => {
      for (const path of ['/?rest_route=/booking-calendar/v1/disabled-time', '/index.php?rest_route=%2Fbooking-calendar%2Fv1%2Fslots&per_page=1']) {
        const res = await proxied(path)
        expect(res.status, path).to.equal(200)
        expect(res.headers.get('x-powered-by'), path).to.equal(null)
        expect(res.headers.get('content-security-policy'), path).to.equal("default-src 'none'; frame-ancestors 'none'")
      }
    })

    it('sends everything else to WordPress: /wp-json/wp/v2/, the REST index, rest_route of other namespaces, pages', async () => {
      const posts = await proxied('/wp-json/wp/v2/posts')
      expect(posts.status).to.equal(200)
      expect(posts.headers.get('x-powered-by')).to.match(/^PHP/)
      expect((await posts.json() as { title: { rendered: string } }[]).map((post) => post.title.rendered)).to.include('Hello world!')
      const index = await (await proxied('/wp-json/')).json() as { namespaces: string[] }
      expect(index.namespaces).to.include('wp/v2')
      const restRoute = await proxied('/?rest_route=/wp/v2/posts')
      expect(restRoute.headers.get('x-powered-by')).to.match(/^PHP/)
      expect(restRoute.status).to.equal(200)
      const feed = await proxied('/?feed=rss2')
      expect(feed.headers.get('x-powered-by')).to.match(/^PHP/)
      expect(await feed.text()).to.include('<title>Seeded salon</title>')
    })
  })

  it('nginx -t accepts the template as the compose stack renders it, and refuses a broken one', () => {
    const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as { services: Record<string, { environment: Record<string, string> }> }
    const checked = checkNginxConfig(compose.services.proxy!.environment)
    expect(checked.output).to.include('test is successful')
    expect(checked.status).to.equal(0)
    const broken = checkNginxConfig({ ...compose.services.proxy!.environment, NGINX_PORT: 'not-a-port' })
    expect(broken.status).to.not.equal(0)
  })
})
