// Where the database is and how the link is secured, as configured
// (server/config.ts), and what mysql2 is given for it (db/connection-options.ts).
import { expect } from 'chai'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, parseWordPressDbHost } from '../../server/config.ts'
import { mysqlTarget } from '../../db/connection-options.ts'

const URL_BASE = 'mysql://reader:pw@db.example.com:3307/site'
const WP = { WORDPRESS_DB_USER: 'reader', WORDPRESS_DB_PASSWORD: 'pw' }

describe('the database\'s address and TLS settings', () => {
  let dir: string
  let ca = ''
  let cert = ''
  let key = ''
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bc-config-'))
    const file = (name: string) => {
      const path = join(dir, name)
      writeFileSync(path, `-----BEGIN ${name}-----\n`)
      return path
    }
    ca = file('ca.pem')
    cert = file('client.pem')
    key = file('client.key')
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('WORDPRESS_DB_HOST: every form WordPress\'s DB_HOST takes', () => {
    const forms: Array<[string, ReturnType<typeof parseWordPressDbHost>]> = [
      ['db', { host: 'db', port: 3306 }],
      ['db:3307', { host: 'db', port: 3307 }],
      ['localhost', { host: 'localhost', port: 3306 }],
      ['192.0.2.7:3306', { host: '192.0.2.7', port: 3306 }],
      ['localhost:/run/mysqld/mysqld.sock', { host: 'localhost', port: 3306, socketPath: '/run/mysqld/mysqld.sock' }],
      [':/var/run/mysqld/mysqld.sock', { host: 'localhost', port: 3306, socketPath: '/var/run/mysqld/mysqld.sock' }],
      ['/tmp/mysql.sock', { host: 'localhost', port: 3306, socketPath: '/tmp/mysql.sock' }],
      ['db:3307:/run/mysqld/mysqld.sock', { host: 'db', port: 3307, socketPath: '/run/mysqld/mysqld.sock' }],
      ['[::1]:3306', { host: '::1', port: 3306 }],
      ['[2001:db8::5]:3310', { host: '2001:db8::5', port: 3310 }],
      ['[::1]', { host: '::1', port: 3306 }],
      ['::1', { host: '::1', port: 3306 }],
      [' db:3306 ', { host: 'db', port: 3306 }],
    ]
    for (const [text, expected] of forms) expect(parseWordPressDbHost(text), text).to.deep.equal(expected)
    for (const wrong of ['db:port', 'db:0', 'db:70000', ':3306', '', 'db host']) expect(parseWordPressDbHost(wrong), wrong).to.equal(undefined)
  })

  it('WORDPRESS_DB_HOST with a socket: mysql2 is given the socket, no host; PREFERRED over a socket is no TLS, as for the mysql client', () => {
    const config = loadConfig({ ...WP, WORDPRESS_DB_HOST: 'localhost:/run/mysqld/mysqld.sock' })
    expect(mysqlTarget(config.database)).to.deep.equal({ socketPath: '/run/mysqld/mysqld.sock', user: 'reader', password: 'pw', database: 'wordpress' })
    const required = loadConfig({ ...WP, WORDPRESS_DB_HOST: ':/run/mysqld/mysqld.sock', DB_SSL_MODE: 'required' })
    expect(mysqlTarget(required.database).ssl).to.deep.equal({ rejectUnauthorized: false, verifyIdentity: false })
  })

  it('DATABASE_URL ?socket=: the host is not used', () => {
    const config = loadConfig({ DATABASE_URL: `${URL_BASE}?socket=/run/mysqld/mysqld.sock` })
    expect(config.database).to.include({ socketPath: '/run/mysqld/mysqld.sock' })
    expect(mysqlTarget(config.database)).to.deep.equal({ socketPath: '/run/mysqld/mysqld.sock', user: 'reader', password: 'pw', database: 'site' })
  })

  it('ssl-mode: each of MySQL\'s five, in any case, as mysql2\'s ssl option; PREFERRED by default', () => {
    const ssl = (mode?: string) => mysqlTarget(loadConfig({ DATABASE_URL: mode === undefined ? URL_BASE : `${URL_BASE}?ssl-mode=${mode}` }).database).ssl
    expect(ssl()).to.deep.equal({ rejectUnauthorized: false, verifyIdentity: false })
    expect(ssl('DISABLED')).to.equal(undefined)
    expect(ssl('preferred')).to.deep.equal({ rejectUnauthorized: false, verifyIdentity: false })
    expect(ssl('Required')).to.deep.equal({ rejectUnauthorized: false, verifyIdentity: false })
    expect(ssl('VERIFY_CA')).to.deep.equal({ rejectUnauthorized: true, verifyIdentity: false })
    expect(ssl('verify_identity')).to.deep.equal({ rejectUnauthorized: true, verifyIdentity: true })
    expect(loadConfig({ DATABASE_URL: `${URL_BASE}?ssl-mode=verify_identity` }).database.tls).to.deep.equal({ mode: 'VERIFY_IDENTITY' })
  })

  it('ssl-ca, ssl-cert, ssl-key: the files\' contents, read at start, from the URL or from DB_SSL_*; a CA alone means VERIFY_CA', () => {
    const fromUrl = loadConfig({ DATABASE_URL: `${URL_BASE}?ssl-mode=VERIFY_IDENTITY&ssl-ca=${ca}&ssl-cert=${cert}&ssl-key=${key}` })
    expect(fromUrl.database.tls).to.deep.equal({ mode: 'VERIFY_IDENTITY', ca: '-----BEGIN ca.pem-----\n', cert: '-----BEGIN client.pem-----\n', key: '-----BEGIN client.key-----\n' })
    const fromEnv = loadConfig({ DATABASE_URL: URL_BASE, DB_SSL_MODE: 'VERIFY_IDENTITY', DB_SSL_CA: ca, DB_SSL_CERT: cert, DB_SSL_KEY: key })
    expect(fromEnv.database.tls).to.deep.equal(fromUrl.database.tls)
    expect(loadConfig({ ...WP, WORDPRESS_DB_HOST: 'db', DB_SSL_CA: ca }).database.tls).to.deep.equal({ mode: 'VERIFY_CA', ca: '-----BEGIN ca.pem-----\n' })
    expect(mysqlTarget(fromEnv.database).ssl).to.deep.include({ ca: '-----BEGIN ca.pem-----\n', rejectUnauthorized: true, verifyIdentity: true })
  })

  it('VERIFY_IDENTITY to an IP address makes its own TCP connection, so the address is what the certificate is checked against', () => {
    expect(mysqlTarget(loadConfig({ DATABASE_URL: 'mysql://u:p@127.0.0.1/db?ssl-mode=VERIFY_IDENTITY' }).database).stream).to.be.a('function')
    expect(mysqlTarget(loadConfig({ DATABASE_URL: 'mysql://u:p@db.example.com/db?ssl-mode=VERIFY_IDENTITY' }).database).stream).to.equal(undefined)
    expect(mysqlTarget(loadConfig({ DATABASE_URL: 'mysql://u:p@127.0.0.1/db?ssl-mode=VERIFY_CA' }).database).stream).to.equal(undefined)
  })

  it('X_FILE: the file\'s text without its trailing newlines, for each secret; never a value in a refusal', () => {
    const write = (name: string, text: string) => {
      const path = join(dir, name)
      writeFileSync(path, text)
      return path
    }
    const config = loadConfig({
      DATABASE_URL_FILE: write('url', `${URL_BASE}\n`), API_TOKENS_FILE: write('tokens', 'tok-1,tok-2\r\n'), AUTH_MODE: 'token',
      METRICS_TOKEN_FILE: write('metrics', 'm-token\n\n'),
    })
    expect(config.database).to.include({ host: 'db.example.com', password: 'pw' })
    expect(config.apiTokens).to.deep.equal(['tok-1', 'tok-2'])
    expect(config.metricsToken).to.equal('m-token')
    const wp = loadConfig({
      WORDPRESS_DB_HOST_FILE: write('host', 'db:3307\n'), WORDPRESS_DB_USER_FILE: write('user', 'reader\n'),
      WORDPRESS_DB_PASSWORD_FILE: write('password', 'p w\n'), WORDPRESS_DB_NAME_FILE: write('name', 'shop\n'),
    })
    expect(wp.database).to.deep.include({ host: 'db', port: 3307, user: 'reader', password: 'p w', database: 'shop' })
  })
})
