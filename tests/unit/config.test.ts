import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, ConfigError, DEFAULT_WORKER_V8_FLAGS } from '../../server/config.ts'

const DB = { DATABASE_URL: 'mysql://reader:s3cret@db.internal:3307/wordpress' }

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error('expected a refusal')
}

describe('configuration', () => {
  it('has API.md\'s defaults', () => {
    const config = loadConfig(DB)
    expect(config).to.deep.include({
      port: 8080, tablePrefix: 'wp_', siteTimezone: undefined, authMode: 'none', authCapability: 'manage_options',
      authCacheSeconds: 60, apiTokens: [], exposeCustomerData: false, dbPoolSize: 10, queryTimeoutMs: 10_000,
      maxRangeDays: 731, availabilityMaxItems: 100_000, corsOrigins: [], logLevel: 'info',
    })
    expect(config.database).to.deep.equal({ host: 'db.internal', port: 3307, user: 'reader', password: 's3cret', database: 'wordpress', tls: { mode: 'PREFERRED' } })
  })

  it('HOLD_MEMORY_BYTES, HOLD_DISK_BYTES, HOLD_DIR: 32 MiB, 1 GiB, and a directory in the system\'s temporary one, by default', () => {
    expect(loadConfig(DB).hold).to.deep.equal({ memoryBytes: 32 * 1024 * 1024, diskBytes: 1024 ** 3, dir: join(tmpdir(), 'booking-calendar-api') })
    expect(loadConfig({ ...DB, HOLD_MEMORY_BYTES: '0', HOLD_DISK_BYTES: '0', HOLD_DIR: '/var/tmp/bc' }).hold).to.deep.equal({ memoryBytes: 0, diskBytes: 0, dir: '/var/tmp/bc' })
  })

  it('CORS_ORIGINS: origins as a browser sends them, a slash after or capitals in the host taken as the same origin', () => {
    expect(loadConfig({ ...DB, CORS_ORIGINS: ' https://Reports.Example.com/ , http://localhost:3000,https://bi.example:8443' }).corsOrigins)
      .to.deep.equal(['https://reports.example.com', 'http://localhost:3000', 'https://bi.example:8443'])
  })

  it('WORKER_V8_FLAGS: flags separated by spaces, empty for V8\'s defaults, the sized default when unset; nothing but flags', () => {
    expect(loadConfig({ ...DB }).workerV8Flags).to.deep.equal(DEFAULT_WORKER_V8_FLAGS)
    expect(loadConfig({ ...DB, WORKER_V8_FLAGS: ' --max-semi-space-size=8   --max-old-space-size=512 ' }).workerV8Flags).to.deep.equal(['--max-semi-space-size=8', '--max-old-space-size=512'])
    expect(loadConfig({ ...DB, WORKER_V8_FLAGS: '' }).workerV8Flags).to.deep.equal([])
    for (const wrong of ['max-semi-space-size=8', '--max-semi-space-size=8;rm', '--require=/tmp/x.js --inspect=0.0.0.0:9229 $(id)', '-e']) {
      expect(refusal({ ...DB, WORKER_V8_FLAGS: wrong }), wrong).to.equal('WORKER_V8_FLAGS must be V8 flags separated by spaces, such as --max-semi-space-size=8, or empty for V8\'s defaults.')
    }
  })

  it('SERVICE_NICENESS: 10 by default, 0 to 19, a whole number', () => {
    expect(loadConfig(DB).serviceNiceness).to.equal(10)
    expect(loadConfig({ ...DB, SERVICE_NICENESS: '0' }).serviceNiceness).to.equal(0)
    expect(loadConfig({ ...DB, SERVICE_NICENESS: ' 19 ' }).serviceNiceness).to.equal(19)
    for (const wrong of ['20', '-5', '2.5', 'low']) {
      expect(refusal({ ...DB, SERVICE_NICENESS: wrong }), wrong).to.equal('SERVICE_NICENESS must be a whole number from 0 to 19.')
    }
  })

  it('WORKERS defaults to the available parallelism and refuses what is not a count of processes', () => {
    expect(loadConfig(DB).workers).to.equal(availableParallelism())
    expect(loadConfig({ ...DB, WORKERS: '3' }).workers).to.equal(3)
    expect(refusal({ ...DB, WORKERS: '0' })).to.equal('WORKERS must be a whole number from 1 to 256.')
    expect(refusal({ ...DB, WORKERS: 'all' })).to.equal('WORKERS must be a whole number from 1 to 256.')
  })

  it('reads the official WordPress image\'s variable names', () => {
    const config = loadConfig({
      WORDPRESS_DB_HOST: 'mariadb:3306', WORDPRESS_DB_USER: 'reader', WORDPRESS_DB_PASSWORD: 'pw',
      WORDPRESS_DB_NAME: 'site', WORDPRESS_TABLE_PREFIX: 'shop_',
    })
    expect(config.database).to.deep.equal({ host: 'mariadb', port: 3306, user: 'reader', password: 'pw', database: 'site', tls: { mode: 'PREFERRED' } })
    expect(config.tablePrefix).to.equal('shop_')
    expect(loadConfig({ WORDPRESS_DB_HOST: 'db', WORDPRESS_DB_USER: 'u' }).database).to.include({ port: 3306, database: 'wordpress' })
  })

  it('TABLE_PREFIX wins over WORDPRESS_TABLE_PREFIX', () => {
    expect(loadConfig({ ...DB, TABLE_PREFIX: 'wp_2_', WORDPRESS_TABLE_PREFIX: 'shop_' }).tablePrefix).to.equal('wp_2_')
  })

  it('reads PUBLIC_URL without its trailing slash, and TRUST_PROXY in Express\'s syntax', () => {
    expect(loadConfig(DB)).to.deep.include({ publicUrl: undefined, trustProxy: ['loopback', 'uniquelocal'] })
    expect(loadConfig({ ...DB, PUBLIC_URL: 'https://shop.example.com/' }).publicUrl).to.equal('https://shop.example.com')
    expect(loadConfig({ ...DB, PUBLIC_URL: 'https://example.com/shop/' }).publicUrl).to.equal('https://example.com/shop')
    const trust: [string, boolean | number | string[]][] = [
      ['true', true], ['FALSE', false], ['2', 2], ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']], ['172.18.0.5', ['172.18.0.5']],
    ]
    for (const [text, value] of trust) expect(loadConfig({ ...DB, TRUST_PROXY: text }).trustProxy, text).to.deep.equal(value)
  })

  it('trims tokens: spaces around one are no part of it', () => {
    const config = loadConfig({ ...DB, AUTH_MODE: 'token', API_TOKENS: ' one , two ', METRICS_TOKEN: ' m-token ' })
    expect([config.apiTokens, config.metricsToken]).to.deep.equal([['one', 'two'], 'm-token'])
  })

  it('decodes a percent-encoded password in DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'mysql://u:p%40ss%3Aw@h/db' }).database.password).to.equal('p@ss:w')
  })

  const refusals: [Record<string, string>, string][] = [
    [{}, 'DATABASE_URL must be set (mysql://user:password@host:3306/name), or WORDPRESS_DB_HOST and WORDPRESS_DB_USER, with WORDPRESS_DB_PASSWORD (WORDPRESS_DB_NAME defaults to wordpress).'],
    [{ DATABASE_URL: 'mysql://u:secret@h:99999/db' }, 'DATABASE_URL must look like mysql://user:password@host:3306/name, with a port from 1 to 65535 if any, and any %, @, : or / in the user, password or name percent-encoded (% as %25).'],
    [{ DATABASE_URL: 'postgres://u:secret@h/db' }, 'DATABASE_URL must look like mysql://user:password@host:3306/name.'],
    [{ DATABASE_URL: 'not a url with secret' }, 'DATABASE_URL must look like mysql://user:password@host:3306/name, with a port from 1 to 65535 if any, and any %, @, : or / in the user, password or name percent-encoded (% as %25).'],
    // A bad percent-escape once crashed the start with a URIError and its stack.
    [{ DATABASE_URL: 'mysql://u:S3cr%zz@h/db' }, 'DATABASE_URL must look like mysql://user:password@host:3306/name, with a port from 1 to 65535 if any, and any %, @, : or / in the user, password or name percent-encoded (% as %25).'],
    [{ DATABASE_URL: 'mysql://u:secret@h/db%zz' }, 'DATABASE_URL must look like mysql://user:password@host:3306/name, with a port from 1 to 65535 if any, and any %, @, : or / in the user, password or name percent-encoded (% as %25).'],
    [{ ...DB, PORT: 'eighty' }, 'PORT must be a whole number from 1 to 65535.'],
    [{ ...DB, PORT: '70000' }, 'PORT must be a whole number from 1 to 65535.'],
    [{ ...DB, TABLE_PREFIX: 'wp-; DROP' }, 'TABLE_PREFIX must be letters, digits and underscores, such as wp_ or shop_.'],
    [{ ...DB, SITE_TIMEZONE: 'Mars/Olympus' }, 'SITE_TIMEZONE must be an IANA time zone such as Europe/Berlin, UTC, or an offset such as +05:45.'],
    [{ ...DB, AUTH_MODE: 'open' }, 'AUTH_MODE must be none, wordpress or token.'],
    [{ ...DB, HOLD_DIR: 'held' }, 'HOLD_DIR must be an absolute path, such as /var/tmp/booking-calendar-api.'],
    [{ ...DB, HOLD_MEMORY_BYTES: '-1' }, 'HOLD_MEMORY_BYTES must be a whole number from 0 to 68719476736.'],
    [{ ...DB, HOLD_DISK_BYTES: '1GB' }, 'HOLD_DISK_BYTES must be a whole number from 0 to 1099511627776.'],
    [{ ...DB, AUTH_MODE: 'token' }, 'API_TOKENS must hold at least one token (comma-separated) when AUTH_MODE is token.'],
    [{ ...DB, AUTH_MODE: 'token', API_TOKENS: 'good-one, secret token' }, 'API_TOKENS must be tokens without spaces, comma-separated.'],
    [{ ...DB, METRICS_TOKEN: ' metrics secret ' }, 'METRICS_TOKEN must be one token without spaces.'],
    [{ ...DB, PUBLIC_URL: 'shop.example.com' }, 'PUBLIC_URL must be the site\'s public address, such as https://shop.example.com.'],
    [{ ...DB, PUBLIC_URL: 'https://user:secret@shop.example.com' }, 'PUBLIC_URL must be the site\'s public address, such as https://shop.example.com.'],
    [{ ...DB, PUBLIC_URL: 'https://shop.example.com/?x=1' }, 'PUBLIC_URL must be the site\'s public address, such as https://shop.example.com.'],
    [{ ...DB, TRUST_PROXY: 'the nginx box' }, 'TRUST_PROXY must be true, false, a number of hops, or addresses and subnets (loopback, uniquelocal, 10.0.0.0/8), comma-separated.'],
    [{ ...DB, METRICS_TOKEN: 'metrics\tsecret' }, 'METRICS_TOKEN must be one token without spaces.'],
    [{ ...DB, AUTH_MODE: 'wordpress' }, 'WORDPRESS_URL must be set when AUTH_MODE is wordpress: the site\'s address, such as https://example.com.'],
    [{ ...DB, WORDPRESS_URL: 'ftp://x' }, 'WORDPRESS_URL must be the site\'s address, such as https://example.com.'],
    [{ ...DB, WORDPRESS_URL: 'https://example.com/?rest_route=' }, 'WORDPRESS_URL must be the site\'s address, such as https://example.com.'],
    [{ ...DB, WORDPRESS_URL: 'https://admin:secret@example.com' }, 'WORDPRESS_URL must not hold a user name or password: each caller\'s own credentials are checked. Give the site\'s address, such as https://example.com.'],
    [{ ...DB, WORDPRESS_URL: 'https://admin@example.com' }, 'WORDPRESS_URL must not hold a user name or password: each caller\'s own credentials are checked. Give the site\'s address, such as https://example.com.'],
    [{ ...DB, PUBLIC_URL: 'https://:secret@shop.example.com' }, 'PUBLIC_URL must be the site\'s public address, such as https://shop.example.com.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db:0/wordpress' }, 'DATABASE_URL must look like mysql://user:password@host:3306/name.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress/extra' }, 'DATABASE_URL must look like mysql://user:password@host:3306/name.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress?ssl=true' }, 'DATABASE_URL has an option this service does not know: ssl. It takes ssl-mode, ssl-ca, ssl-cert, ssl-key, socket.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress?ssl-mode=REQUIRED&sslmode=require' }, 'DATABASE_URL has an option this service does not know: sslmode. It takes ssl-mode, ssl-ca, ssl-cert, ssl-key, socket.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress?ssl-mode=REQUIRED&ssl-mode=DISABLED' }, 'DATABASE_URL gives ssl-mode twice.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress?ssl-mode=on' }, 'ssl-mode in DATABASE_URL must be one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress#x' }, 'DATABASE_URL must look like mysql://user:password@host:3306/name?ssl-mode=REQUIRED, with nothing after the options.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress?socket=mysqld.sock' }, 'socket in DATABASE_URL must be the socket\'s path, such as /run/mysqld/mysqld.sock.'],
    [{ ...DB, DB_SSL_MODE: 'strict' }, 'DB_SSL_MODE must be one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY.'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress?ssl-mode=REQUIRED', DB_SSL_MODE: 'REQUIRED' }, 'ssl-mode is given both in DATABASE_URL and as DB_SSL_MODE: give it once.'],
    [{ ...DB, DB_SSL_CA: '/nonexistent/ca.pem' }, 'DB_SSL_CA names a file that cannot be read: /nonexistent/ca.pem'],
    [{ DATABASE_URL: 'mysql://reader:secret@db/wordpress?ssl-ca=/nonexistent/ca.pem' }, 'ssl-ca in DATABASE_URL names a file that cannot be read: /nonexistent/ca.pem'],
    [{ ...DB, DB_SSL_CERT: '/etc/hostname' }, 'ssl-cert and ssl-key (DB_SSL_CERT, DB_SSL_KEY) go together: a client certificate needs its key.'],
    [{ ...DB, DB_SSL_MODE: 'disabled', DB_SSL_CA: '/etc/hostname' }, 'ssl-mode is DISABLED, yet ssl-ca or ssl-cert is given: say which one is meant.'],
    [{ ...DB, DATABASE_URL_FILE: '/nonexistent/url' }, 'DATABASE_URL and DATABASE_URL_FILE are both set: give one.'],
    [{ DATABASE_URL_FILE: '/nonexistent/url' }, 'DATABASE_URL_FILE names a file that cannot be read: /nonexistent/url'],
    [{ WORDPRESS_DB_HOST: 'db', WORDPRESS_DB_USER: 'u', WORDPRESS_DB_PASSWORD: 'secret', WORDPRESS_DB_PASSWORD_FILE: '/run/secrets/db' }, 'WORDPRESS_DB_PASSWORD and WORDPRESS_DB_PASSWORD_FILE are both set: give one.'],
    ...['db:port', 'db:3306:3307', ':3306', '', 'db host', '[::1', 'db:0'].map((host): [Record<string, string>, string] =>
      [{ WORDPRESS_DB_HOST: host, WORDPRESS_DB_USER: 'u', WORDPRESS_DB_PASSWORD: 'secret' }, 'WORDPRESS_DB_HOST must be a host name, optionally with a port or a socket, as WordPress\'s DB_HOST: db, db:3306, [::1]:3306, localhost:/run/mysqld/mysqld.sock.']),
    [{ WORDPRESS_DB_HOST: 'db', WORDPRESS_DB_USER: '  ', WORDPRESS_DB_PASSWORD: 'secret' }, 'WORDPRESS_DB_USER must name the database account (a read-only one).'],
    ...['*', 'https://shop.example.com/reports', 'shop.example.com', 'https://shop.example.com?x=1', 'ftp://shop.example.com', 'https://user:secret@shop.example.com'].map((origins): [Record<string, string>, string] =>
      [{ ...DB, CORS_ORIGINS: `https://ok.example, ${origins}` }, 'CORS_ORIGINS must list origins such as https://reports.example.com (scheme, host and port, no path), comma-separated; * is not taken: name each origin.']),
    [{ ...DB, EXPOSE_CUSTOMER_DATA: 'maybe' }, 'EXPOSE_CUSTOMER_DATA must be true or false.'],
    [{ ...DB, QUERY_TIMEOUT_MS: '0' }, 'QUERY_TIMEOUT_MS must be a whole number from 1 to 3600000.'],
    [{ ...DB, MAX_RANGE_DAYS: '-5' }, 'MAX_RANGE_DAYS must be a whole number from 1 to 36600.'],
    [{ ...DB, AVAILABILITY_MAX_ITEMS: '0' }, 'AVAILABILITY_MAX_ITEMS must be a whole number from 1 to 100000000.'],
    [{ ...DB, DB_POOL_SIZE: 'lots' }, 'DB_POOL_SIZE must be a whole number from 1 to 200.'],
    [{ ...DB, LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent.'],
    [{ WORDPRESS_DB_HOST: 'db:99999', WORDPRESS_DB_USER: 'u' }, 'WORDPRESS_DB_HOST must be a host name, optionally with a port or a socket, as WordPress\'s DB_HOST: db, db:3306, [::1]:3306, localhost:/run/mysqld/mysqld.sock.'],
  ]
  for (const [env, message] of refusals) {
    it(`refuses ${JSON.stringify(env)} naming the variable, never echoing a secret`, () => {
      const said = refusal(env)
      expect(said).to.equal(message)
      expect(said).to.not.include('secret')
    })
  }

  it('WORKER_V8_FLAGS that Node refuses stop the process with one line naming the variable, before any worker starts', function () {
    this.timeout(30_000)
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      env: { PATH: process.env.PATH, ...DB, WORKERS: '2', WORKER_V8_FLAGS: '--max-semi-space-size=4 --no-such-flag' }, encoding: 'utf8',
    })
    expect(run.status).to.equal(1)
    expect(run.stdout).to.equal('')
    expect(run.stderr).to.match(/^booking-calendar-api: WORKER_V8_FLAGS must be flags Node takes, or empty for V8's defaults \(Node said: .*bad option: --no-such-flag\)\.\n$/)
  })

  it('a bad value stops the process with one line naming the variable', function () {
    this.timeout(30_000)
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      env: { PATH: process.env.PATH, ...DB, PORT: 'eighty' }, encoding: 'utf8',
    })
    expect(run.status).to.equal(1)
    expect(run.stdout).to.equal('')
    expect(run.stderr).to.equal('booking-calendar-api: PORT must be a whole number from 1 to 65535.\n')
  })
})
