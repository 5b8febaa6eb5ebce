// Issue 51: the service on a MySQL server. No MySQL server can be installed
// here (Debian ships MariaDB only, and nothing may be downloaded), so a private
// MariaDB is started with a MySQL version string (mariadbd --version=…), which
// it gives in its handshake and as VERSION(): the service then takes its MySQL
// path (db/server-dialect.ts). Every statement the service sends is read back
// from the server's general log and checked for MariaDB-only syntax, and every
// variable it sets against Debian's php-mariadb-mysql-kbs, a record outside this
// project of which variables MySQL has. MariaDB runs these statements, so this
// shows they are MySQL's syntax, not that MySQL answers alike (docs/databases.md).
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import mysql from 'mysql2/promise'
import { aptInstall } from '../../scripts/apt.ts'
import { recommendedIndexesSql } from '../../scripts/bench/dataset.ts'
import { startPrivateMariaDb, type PrivateMariaDb } from '../support/private-mariadb.ts'
import { spawnService, startListeningService, type ServiceProcess } from '../support/service.ts'
import { describeOwnServer } from '../support/database.ts'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'

const API = '/wp-json/booking-calendar/v1/'
const KBS_FILE = '/usr/share/php/data/Williamdes/MariaDBMySQLKBS/merged-ultraslim.json'

/** The version MySQL syntax is checked for: a rule with `from` applies from that version on, with `before` before it. */
interface Version { major: number; minor: number; patch: number }
const at = (text: string): Version => {
  const [major, minor, patch] = text.split('.').map(Number) as [number, number, number]
  return { major, minor, patch }
}
const compare = (a: Version, b: Version) => (a.major - b.major) || (a.minor - b.minor) || (a.patch - b.patch)

/**
 * Syntax MySQL does not take, and from or before which version. Kept explicit:
 * the issue asks for a list, and a new MariaDB-only habit belongs here.
 */
const NOT_MYSQL: Array<{ what: string; pattern: RegExp; from?: string; before?: string }> = [
  { what: 'SET STATEMENT … FOR (MariaDB only)', pattern: /\bSET\s+STATEMENT\b/i },
  { what: 'max_statement_time (MariaDB\'s; MySQL has max_execution_time)', pattern: /\bmax_statement_time\b/i },
  { what: 'RETURNING (MariaDB only)', pattern: /\bRETURNING\b/i },
  { what: 'sequences (MariaDB only)', pattern: /\b(NEXTVAL|LASTVAL|SETVAL)\s*\(|\b(NEXT|PREVIOUS)\s+VALUE\s+FOR\b|\bSEQUENCE\b/i },
  { what: 'MariaDB executable comment /*M!', pattern: /\/\*M!/ },
  { what: 'mrr_sort_keys (a MariaDB optimizer_switch flag)', pattern: /\bmrr_sort_keys\b/i },
  { what: 'IF [NOT] EXISTS on an index (MariaDB only)', pattern: /\b(ADD|CREATE|DROP)\s+(UNIQUE\s+)?INDEX\s+IF\s+(NOT\s+)?EXISTS\b/i },
  { what: 'LIMIT ROWS EXAMINED (MariaDB only)', pattern: /\bROWS\s+EXAMINED\b/i },
  { what: 'OFFSET … ROWS / FETCH FIRST … ROWS (MariaDB 10.6)', pattern: /\bFETCH\s+(FIRST|NEXT)\b|\bOFFSET\s+\S+\s+ROWS?\b/i },
  { what: 'FOR SYSTEM_TIME (MariaDB\'s system-versioned tables)', pattern: /\bFOR\s+SYSTEM_TIME\b/i },
  { what: 'ANALYZE SELECT / SHOW EXPLAIN (MariaDB only)', pattern: /^\s*ANALYZE\s+SELECT\b|\bSHOW\s+EXPLAIN\b/i },
  { what: 'KILL QUERY ID / KILL SOFT|HARD (MariaDB only)', pattern: /\bKILL\s+(SOFT|HARD|QUERY\s+ID)\b/i },
  { what: 'MariaDB-only JSON functions', pattern: /\bJSON_(DETAILED|COMPACT|LOOSE|EXISTS|NORMALIZE|EQUALS)\s*\(/i },
  { what: 'NO_AUTO_CREATE_USER (removed in MySQL 8.0.11)', pattern: /\bNO_AUTO_CREATE_USER\b/i, from: '8.0.11' },
  { what: 'optimizer hints /*+ (MySQL 5.7+)', pattern: /\/\*\+/, before: '5.7.7' },
  { what: 'MAX_EXECUTION_TIME (MySQL 5.7.8+)', pattern: /\bMAX_EXECUTION_TIME\b/i, before: '5.7.8' },
  { what: 'SET_VAR hints (MySQL 8.0+)', pattern: /\bSET_VAR\s*\(/i, before: '8.0.0' },
  { what: 'common table expressions (MySQL 8.0+)', pattern: /^\s*WITH\b|\(\s*WITH\s+\w+\s+AS\s*\(/i, before: '8.0.0' },
  { what: 'window functions (MySQL 8.0+)', pattern: /\bOVER\s*\(/i, before: '8.0.0' },
  { what: 'JSON functions (MySQL 5.7+)', pattern: /\bJSON_\w+\s*\(/i, before: '5.7.0' },
  { what: 'SET TRANSACTION … READ ONLY (MySQL 5.6.5+)', pattern: /\bSET\s+(SESSION\s+)?TRANSACTION\b.*\bREAD\s+ONLY\b/i, before: '5.6.5' },
]

function rulesFor(version: Version) {
  return NOT_MYSQL.filter((rule) => (rule.from === undefined || compare(version, at(rule.from)) >= 0) && (rule.before === undefined || compare(version, at(rule.before)) < 0))
}

/** A statement's shape: no lease marker, each literal one placeholder, so each form is listed once. */
function shapeOf(statement: string): string {
  return statement
    .replace(/\/\* bc-api [0-9a-f]+-\d+ \*\/\s*/g, '')
    .replace(/'(?:[^'\\]|\\.|'')*'/g, "'?'")
    .replace(/\b\d+(\.\d+)?\b/g, 'N')
    .replace(/\s+/g, ' ')
    .replace(/'\?'(, '\?')+/g, "'?', …")
    .trim()
}

/** The variables a statement sets: SET [SESSION] x = …, SET TRANSACTION, SET NAMES, and SET_VAR(x = …) hints. */
function variablesSet(shape: string): string[] {
  const names: string[] = []
  if (/^SET\s+(SESSION\s+)?TRANSACTION\b/i.test(shape)) {
    names.push('transaction_isolation')
    if (/READ\s+ONLY/i.test(shape)) names.push('transaction_read_only')
  } else if (/^SET\s+NAMES\b/i.test(shape)) {
    names.push('character_set_client', 'character_set_connection', 'character_set_results', 'collation_connection')
  } else if (/^SET\s/i.test(shape)) {
    for (const part of shape.replace(/^SET\s+/i, '').split(',')) {
      const name = /^\s*(?:SESSION\s+|LOCAL\s+|@@session\.|@@)?(\w+)\s*=/i.exec(part)
      if (name) names.push(name[1]!)
    }
  }
  for (const hint of shape.matchAll(/\bSET_VAR\s*\(\s*(\w+)\s*=/gi)) names.push(hint[1]!)
  return names
}

/** Debian's php-mariadb-mysql-kbs: for each variable, the documentation pages of the servers that have it (type 1 is MySQL). */
function mysqlVariables(): Set<string> {
  if (!existsSync(KBS_FILE)) aptInstall(['php-mariadb-mysql-kbs'], 'php-mariadb-mysql-kbs (which server has which variable)')
  const data = JSON.parse(readFileSync(KBS_FILE, 'utf8')) as { vars: Record<string, { a?: Array<{ t?: number }> }>; types: Record<string, string> }
  const mysqlType = Number(Object.entries(data.types).find(([, name]) => name === 'MYSQL')![0])
  return new Set(Object.entries(data.vars).filter(([, entry]) => (entry.a ?? []).some((page) => page.t === mysqlType)).map(([name]) => name.toLowerCase()))
}

interface Logged { thread: number; command: string; statement: string }

/** What the reader account sent, from the general log (a table: each statement whole, with its thread). */
async function readerStatements(server: PrivateMariaDb): Promise<Logged[]> {
  const rows = await server.server.adminQuery(`
    SELECT thread_id AS thread, command_type AS command, CONVERT(argument USING utf8mb4) AS statement FROM mysql.general_log
    WHERE user_host LIKE '${server.reader.user}[%' ORDER BY event_time`) as Logged[]
  return rows.filter((row) => row.command === 'Query')
}

/** Checks each statement shape against the rules for `version`, and each variable set against MySQL's; returns the shapes, listed. */
function checkStatements(statements: Logged[], version: string): string[] {
  const rules = rulesFor(at(version))
  const known = mysqlVariables()
  const shapes = [...new Set(statements.map((row) => shapeOf(row.statement)))].sort()
  const problems = new Set<string>()
  // The rules read each statement whole, its values too (an sql_mode's list is a string).
  for (const { statement } of statements) {
    for (const rule of rules) if (rule.pattern.test(statement)) problems.add(`${rule.what}: ${shapeOf(statement)}`)
  }
  for (const shape of shapes) {
    for (const name of variablesSet(shape)) if (!known.has(name.toLowerCase())) problems.add(`sets ${name}, which MySQL does not have: ${shape}`)
  }
  process.stdout.write(`      ${shapes.length} statement shapes checked for MySQL ${version} (${rules.length} syntax rules, variables against php-mariadb-mysql-kbs):\n`)
  for (const shape of shapes) process.stdout.write(`        ${shape}\n`)
  expect([...problems]).to.deep.equal([])
  return shapes
}

async function get(port: number, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

describeOwnServer('the MySQL path, on a MariaDB that reports a MySQL version (issue 51)', 'it starts MariaDBs of its own, with other version strings', function () {
  this.timeout(180_000)

  describe('MySQL 8.0.36', () => {
    let server: PrivateMariaDb
    let service: ServiceProcess

    before(async () => {
      server = await startPrivateMariaDb('bc_mysql80', 3000, { serverOptions: ['--version=8.0.36-fake', '--general-log=1', '--log-output=TABLE'] })
      // The recommended indexes, so the service names them in FORCE INDEX hints (db/index-hints.ts).
      await server.server.adminQuery(`USE bc_mysql80; ${recommendedIndexesSql('wp_')}`)
      service = await spawnService({ databaseUrl: server.databaseUrl, prefix: 'wp_' }, { LOG_LEVEL: 'info', WORKERS: '1' })
    })
    after(async () => {
      service?.child.kill('SIGTERM')
      await service?.exited
      await server?.stop()
    })

    it('finds MySQL at start, says so in its log and in /metrics', async () => {
      const deadline = Date.now() + 10_000
      while (!service.logs.some((line) => line.msg === 'database: mysql 8.0.36') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      const found = service.logs.find((line) => line.msg === 'database: mysql 8.0.36')
      expect(found?.database).to.deep.equal({ kind: 'mysql', version: '8.0.36', comment: 'Debian 12', timeLimit: 'max_execution_time_hint' })
      const metrics = await get(service.port, '/metrics')
      expect(metrics.text).to.contain('booking_calendar_database_info{kind="mysql",version="8.0.36"} 1')
    })

    it('answers every route, and every statement it sent is MySQL\'s', async () => {
      const port = service.port
      // slots: narrow, paged, streamed (flat, CSV), and a feed.
      const narrow = await get(port, `${API}slots?service=10&start=2026-03-01&end=2026-03-31`)
      expect(narrow.status).to.equal(200)
      const paged = await get(port, `${API}slots?flat&per_page=5&page=3`)
      expect(paged.status).to.equal(200)
      expect((JSON.parse(paged.text) as { booked_slots: unknown[] }).booked_slots).to.have.length(5)
      expect(paged.headers.get('x-wp-total')).to.equal('3000')
      const streamed = await get(port, `${API}slots?flat`)
      expect(streamed.status).to.equal(200)
      expect((JSON.parse(streamed.text) as { booked_slots: unknown[] }).booked_slots).to.have.length(3000)
      const grouped = await get(port, `${API}slots`)
      expect(grouped.status).to.equal(200)
      const csv = await get(port, `${API}slots?format=csv`)
      expect(csv.status).to.equal(200)
      expect(csv.headers.get('x-wp-total')).to.equal('3000')
      const feed = await get(port, `${API}slots?format=ics&start=2025-01-01&end=2025-12-31`)
      expect(feed.status).to.equal(200)
      expect(feed.text).to.contain('BEGIN:VCALENDAR')
      // disabled-time, summary, availability.
      expect((await get(port, `${API}disabled-time`)).status).to.equal(200)
      expect((await get(port, `${API}summary?start=2025-01-01&end=2025-12-31&group_by=month,service`)).status).to.equal(200)
      expect((await get(port, `${API}availability?service=10&start=2026-11-25&end=2026-11-26`)).status).to.equal(200)
      // Conditional requests: the rows read once in the permits' line and hashed, then 304.
      for (const path of [`${API}slots?service=10&start=2026-03-01&end=2026-03-31`, `${API}slots?flat`]) {
        const first = await get(port, path)
        const tag = first.headers.get('etag')
        expect(tag, path).to.be.a('string')
        expect((await get(port, path, { 'If-None-Match': tag! })).status, path).to.equal(304)
      }
      // changes/ in the digest source: a year's sync (two-day periods, the digests in two halves
      // through the index) and an unbounded one (months); a booking changed as root, then each
      // delta, its days counted and its rows read.
      const follow = async (query: string, since?: string) => {
        const changes: Array<{ op: string }> = []
        for (let next = since; ;) {
          const page = await get(port, `${API}changes?${query}${next === undefined ? '' : `&since=${encodeURIComponent(next)}`}`)
          expect(page.status, page.text).to.equal(200)
          const body = JSON.parse(page.text) as { changes: Array<{ op: string }>; more: boolean; next: string }
          changes.push(...body.changes)
          next = body.next
          if (!body.more) return { token: next, changes }
        }
      }
      const year = await follow('start=2025-01-01&end=2025-12-31&per_page=1000')
      const whole = await follow('per_page=1000')
      expect(year.changes.length).to.be.above(100)
      await server.server.adminQuery("UPDATE bc_mysql80.wp_booking_calendar_bookings SET note = CONCAT(IFNULL(note, ''), '!') WHERE booking_date BETWEEN '2025-03-01' AND '2025-03-31' ORDER BY id LIMIT 1")
      for (const [query, sync] of [['start=2025-01-01&end=2025-12-31&per_page=2', year], ['per_page=1000', whole]] as const) {
        const delta = await follow(query, sync.token)
        expect(delta.changes.length, query).to.be.above(0)
        expect(delta.changes.every((operation) => operation.op === 'replace'), query).to.equal(true)
      }
      // npm run indexes on this database: the recommended indexes' SQL, and the EXPLAIN of the typical queries.
      const indexes = await runIndexes(server.databaseUrl)
      expect(indexes.code, indexes.output).to.equal(0)
      expect(indexes.output).to.contain('ADD INDEX bc_api_date')

      const statements = await readerStatements(server)
      const shapes = checkStatements(statements, '8.0.36')
      // The MySQL path's own statements are there: the time limit as a hint.
      expect(shapes.some((shape) => /^select \/\*\+ MAX_EXECUTION_TIME\(N\) \*\//.test(shape))).to.equal(true)
      expect(shapes).to.include("SET SESSION sql_mode = '?'")
      expect(statements.some((row) => row.statement.includes('NO_ENGINE_SUBSTITUTION'))).to.equal(true)
      expect(shapes.some((shape) => shape.startsWith('EXPLAIN '))).to.equal(true)
      // An export lifts a server-wide max_execution_time for itself (issue 63), the short statements keep their hint.
      expect(shapes.some((shape) => /^select \/\*\+ SET_VAR\(max_execution_time = N\) \*\//.test(shape))).to.equal(true)
      // Index hints, on the exports read through the recommended indexes (streamed: no time-limit hint).
      expect(shapes.some((shape) => /^select .* FORCE INDEX \(`bc_api_date`\)/.test(shape))).to.equal(true)
      // changes/'s digests per day, exact DOUBLE sums, in halves by the ids' remainder, and a period's days counted.
      expect(shapes.some((shape) => /`booking_date` \+ N as `day`.*cast\(sum\(crc32\(reverse\(concat_ws\(.*\) \+ 0e0\) as unsigned\).*`id` % N = N group by `day`/.test(shape))).to.equal(true)
      expect(shapes.some((shape) => /count\(\*\) as `bookings` from .* group by `wp_booking_calendar_bookings`\.`booking_date`/.test(shape))).to.equal(true)
    })
  })

  describe('MySQL 5.6.51: no time limit in the server, so the service kills an overlong statement', () => {
    let server: PrivateMariaDb

    before(async () => {
      server = await startPrivateMariaDb('bc_mysql56', 500, { serverOptions: ['--version=5.6.51-log', '--general-log=1', '--log-output=TABLE'] })
    })
    after(async () => {
      await server?.stop()
    })

    it('answers, and a statement past QUERY_TIMEOUT_MS is a 504 and gone from the server', async () => {
      const service = await startListeningService({ databaseUrl: server.databaseUrl, prefix: 'wp_' }, { QUERY_TIMEOUT_MS: '500' })
      const locker = await mysql.createConnection({ socketPath: server.server.socketPath, user: 'root', database: 'bc_mysql56' })
      try {
        const ok = await get(service.port, `${API}slots?flat&per_page=5`)
        expect(ok.status).to.equal(200)
        const tagged = await get(service.port, `${API}slots?service=10&start=2026-03-01&end=2026-03-31`)
        expect(tagged.headers.get('etag')).to.be.a('string')
        expect((await get(service.port, `${API}summary?start=2025-01-01&end=2025-12-31`)).status).to.equal(200)
        // A write lock held elsewhere keeps our SELECT waiting for as long as it is held: only a kill ends it.
        await locker.query('LOCK TABLES wp_booking_calendar_bookings WRITE')
        const started = Date.now()
        const slow = await get(service.port, `${API}slots?status=reject&flat`)
        expect(slow.status).to.equal(504)
        expect(JSON.parse(slow.text).code).to.equal('rest_query_timeout')
        expect(Date.now() - started).to.be.below(3_000)
        // Gone from PROCESSLIST while the lock is still held: the service's KILL ended it.
        const deadline = Date.now() + 3_000
        let running: unknown[] = []
        do {
          [running] = await locker.query(`SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ? AND COMMAND = 'Query' AND INFO NOT LIKE 'SELECT ID FROM information_schema.PROCESSLIST%'`, [server.reader.user]) as [unknown[], unknown]
          if (running.length > 0) await new Promise((resolve) => setTimeout(resolve, 100))
        } while (running.length > 0 && Date.now() < deadline)
        expect(running).to.deep.equal([])
      } finally {
        await locker.query('UNLOCK TABLES')
        await locker.end()
        await service.close()
      }
      const statements = await readerStatements(server)
      checkStatements(statements, '5.6.51')
      // No server limit was set (the server has none); the statement ended by the service's own kill.
      expect(statements.filter((row) => /max_(statement|execution)_time/i.test(row.statement))).to.deep.equal([])
      expect(statements.some((row) => /^KILL (CONNECTION|QUERY) \d+$/.test(row.statement))).to.equal(true)
    })
  })
})

/** The reader's statements that run now on `server`, from its process list, as root sees it. */
async function readerRunning(server: PrivateMariaDb): Promise<string[]> {
  const rows = await server.server.adminQuery(`
    SELECT INFO AS info FROM information_schema.PROCESSLIST WHERE USER = '${server.reader.user}' AND COMMAND = 'Query'`) as Array<{ info: string | null }>
  return rows.map((row) => String(row.info))
}

/** Waits, at most `ms`, until the reader runs nothing on `server`; returns what it still runs. */
async function untilReaderIdle(server: PrivateMariaDb, ms: number): Promise<string[]> {
  const deadline = Date.now() + ms
  let running = await readerRunning(server)
  while (running.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    running = await readerRunning(server)
  }
  return running
}

describeOwnServer('behind a proxy that names its own version and thread id (issue 63)', 'it starts a MariaDB of its own, with a MySQL version string', function () {
  this.timeout(180_000)
  let server: PrivateMariaDb

  before(async () => {
    server = await startPrivateMariaDb('bc_proxied', 500, { serverOptions: ['--version=8.0.36-fake', '--general-log=1', '--log-output=TABLE'] })
  })
  after(async () => {
    await server?.stop()
  })

  // ProxySQL answers the handshake as 5.5.30 by default; other routers name what they like.
  for (const handshakeVersion of ['5.5.30', 'router-2.1']) {
    it(`asks the server, not the handshake ('${handshakeVersion}'): MySQL 8's statements only, and a kill that reaches the server through a pooling proxy`, async () => {
      await server.server.adminQuery('TRUNCATE TABLE mysql.general_log')
      // A pooling proxy: its own thread id in the handshake, and the server's connection kept when the service drops its own.
      const proxy: TcpProxy = await startTcpProxy(server.server.host, server.server.port, { handshakeVersion, handshakeThreadId: 4_000_000, keepServerConnections: true })
      const { user, password } = server.reader
      const service = await spawnService({ databaseUrl: `mysql://${user}:${password}@127.0.0.1:${proxy.port}/bc_proxied`, prefix: 'wp_' }, { QUERY_TIMEOUT_MS: '500', LOG_LEVEL: 'info', WORKERS: '1' })
      const locker = await mysql.createConnection({ socketPath: server.server.socketPath, user: 'root', database: 'bc_proxied' })
      try {
        const ok = await get(service.port, `${API}slots?flat&per_page=5`)
        expect(ok.status, ok.text).to.equal(200)
        expect((await get(service.port, `${API}slots?flat`)).status).to.equal(200)
        expect((await get(service.port, `${API}summary?start=2025-01-01&end=2025-12-31`)).status).to.equal(200)
        expect(service.logs.find((line) => String(line.msg).startsWith('database: '))?.msg).to.equal('database: mysql 8.0.36')
        // A write lock held elsewhere keeps our SELECT waiting for as long as it is held: only a kill ends it.
        await locker.query('LOCK TABLES wp_booking_calendar_bookings WRITE')
        const slow = await get(service.port, `${API}slots?status=reject&flat`)
        expect(slow.status).to.equal(504)
        expect(JSON.parse(slow.text).code).to.equal('rest_query_timeout')
        // Gone from the server's process list while the lock is still held: the KILL found it by its text.
        expect(await untilReaderIdle(server, 5_000)).to.deep.equal([])
      } finally {
        await locker.query('UNLOCK TABLES')
        await locker.end()
        service.child.kill('SIGTERM')
        await service.exited
        await proxy.close()
      }
      const statements = await readerStatements(server)
      checkStatements(statements, '8.0.36')
      expect(statements.some((row) => /^SELECT VERSION\(\)/.test(row.statement))).to.equal(true)
      expect(statements.some((row) => /^KILL QUERY \d+$/.test(row.statement))).to.equal(true)
    })
  }
})

describeOwnServer('a server whose VERSION() names no version (issue 63)', 'it starts a MariaDB of its own, with another version string', function () {
  this.timeout(180_000)
  let server: PrivateMariaDb

  before(async () => {
    server = await startPrivateMariaDb('bc_unnamed', 500, { serverOptions: ['--version=unnamed-build', '--general-log=1', '--log-output=TABLE'] })
  })
  after(async () => {
    await server?.stop()
  })

  it('answers with what every supported server takes, and says so in one log line', async () => {
    const service = await spawnService({ databaseUrl: server.databaseUrl, prefix: 'wp_' }, { LOG_LEVEL: 'info', WORKERS: '1' })
    try {
      expect((await get(service.port, `${API}slots?flat&per_page=5`)).status).to.equal(200)
      expect((await get(service.port, `${API}slots?flat`)).status).to.equal(200)
      expect((await get(service.port, `${API}summary?start=2025-01-01&end=2025-12-31`)).status).to.equal(200)
      const lines = service.logs.filter((line) => String(line.msg).startsWith('database: '))
      expect(lines.map((line) => [line.level, line.msg])).to.deep.equal([
        [40, 'database: no version could be read from what SELECT VERSION() says: only the statements every supported server takes are sent, and QUERY_TIMEOUT_MS is kept by the service\'s own timer'],
      ])
    } finally {
      service.child.kill('SIGTERM')
      await service.exited
    }
    const statements = await readerStatements(server)
    // The oldest servers supported (MySQL 5.5, MariaDB 5.5) take each of them.
    checkStatements(statements, '5.5.0')
    const session = [...new Set(statements.map((row) => row.statement).filter((text) => /^SET /.test(text)))].sort()
    expect(session).to.deep.equal([
      'SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci',
      'SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ',
      "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
    ])
    expect(statements.filter((row) => /max_(statement|execution)_time|SET STATEMENT|\/\*\+/i.test(row.statement))).to.deep.equal([])
  })
})

/** Old MariaDBs that WordPress still allows, and what each does not take (issue 63). */
const OLD_MARIADBS: Array<{ version: string; database: string; notTaken: Array<{ what: string; pattern: RegExp }> }> = [
  {
    version: '5.5.68-MariaDB', database: 'bc_mariadb55', // CentOS 7's
    notTaken: [
      { what: 'READ ONLY in SET SESSION TRANSACTION (MariaDB 10.0)', pattern: /\bREAD\s+ONLY\b/i },
      { what: 'SET STATEMENT (MariaDB 10.1.2)', pattern: /\bSET\s+STATEMENT\b/i },
      { what: 'max_statement_time (MariaDB 10.1.1)', pattern: /\bmax_statement_time\b/i },
      { what: 'KILL QUERY ID (MariaDB 10.0.5)', pattern: /\bKILL\s+QUERY\s+ID\b/i },
    ],
  },
  {
    version: '10.1.1-MariaDB', database: 'bc_mariadb1011',
    notTaken: [{ what: 'SET STATEMENT (MariaDB 10.1.2)', pattern: /\bSET\s+STATEMENT\b/i }],
  },
]

for (const old of OLD_MARIADBS) {
  describeOwnServer(`MariaDB ${old.version}, by its version string (issue 63)`, 'it starts a MariaDB of its own, with another version string', function () {
    this.timeout(180_000)
    let server: PrivateMariaDb

    before(async () => {
      server = await startPrivateMariaDb(old.database, 500, { serverOptions: [`--version=${old.version}`, '--general-log=1', '--log-output=TABLE'] })
    })
    after(async () => {
      await server?.stop()
    })

    it('answers, sends only what it takes, and ends a statement past QUERY_TIMEOUT_MS itself', async () => {
      const service = await startListeningService({ databaseUrl: server.databaseUrl, prefix: 'wp_' }, { QUERY_TIMEOUT_MS: '500' })
      const locker = await mysql.createConnection({ socketPath: server.server.socketPath, user: 'root', database: old.database })
      try {
        expect((await get(service.port, `${API}slots?flat&per_page=5`)).status).to.equal(200)
        const whole = await get(service.port, `${API}slots?flat`)
        expect((JSON.parse(whole.text) as { booked_slots: unknown[] }).booked_slots).to.have.length(500)
        const path = `${API}slots?service=10&start=2026-03-01&end=2026-03-31`
        const tag = (await get(service.port, path)).headers.get('etag')
        expect((await get(service.port, path, { 'If-None-Match': tag! })).status).to.equal(304)
        expect((await get(service.port, `${API}summary?start=2025-01-01&end=2025-12-31`)).status).to.equal(200)
        expect((await get(service.port, `${API}availability?service=10&start=2026-11-25&end=2026-11-26`)).status).to.equal(200)
        // No time limit of the server's that an export could lift: the service's timer, then its kill.
        await locker.query('LOCK TABLES wp_booking_calendar_bookings WRITE')
        const slow = await get(service.port, `${API}slots?status=reject&flat`)
        expect(slow.status).to.equal(504)
        expect(await untilReaderIdle(server, 3_000)).to.deep.equal([])
      } finally {
        await locker.query('UNLOCK TABLES')
        await locker.end()
        await service.close()
      }
      const statements = await readerStatements(server)
      const problems = statements.flatMap(({ statement }) => old.notTaken.filter((rule) => rule.pattern.test(statement)).map((rule) => `${rule.what}: ${shapeOf(statement)}`))
      expect([...new Set(problems)]).to.deep.equal([])
      expect(statements.some((row) => /^KILL QUERY \d+$/.test(row.statement))).to.equal(true)
    })
  })
}

describeOwnServer('a server-wide statement time limit (issue 63)', 'it starts a MariaDB of its own, with a global max_statement_time', function () {
  this.timeout(300_000)
  let server: PrivateMariaDb

  before(async () => {
    // MariaDB's global max_statement_time, the nearest thing here to a host's global max_execution_time on MySQL.
    server = await startPrivateMariaDb('bc_limited', 60_000)
    await server.server.adminQuery('SET GLOBAL max_statement_time = 0.2')
  })
  after(async () => {
    await server?.stop()
  })

  it('a full export runs past it and QUERY_TIMEOUT_MS, and arrives whole', async () => {
    const service = await startListeningService({ databaseUrl: server.databaseUrl, prefix: 'wp_' }, { QUERY_TIMEOUT_MS: '200' })
    try {
      const started = Date.now()
      const res = await get(service.port, `${API}slots?flat`)
      const took = Date.now() - started
      expect(res.status).to.equal(200)
      expect(res.headers.get('x-wp-total')).to.equal('60000')
      // A cut answer is no valid JSON: this one is whole, every booking in it.
      expect((JSON.parse(res.text) as { booked_slots: unknown[] }).booked_slots).to.have.length(60_000)
      process.stdout.write(`      the export took ${took} ms against a server-wide limit of 200 ms\n`)
    } finally {
      await service.close()
    }
  })
})

/** `npm run indexes` with DATABASE_URL: explains on that database, applies nothing. */
function runIndexes(databaseUrl: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/indexes.ts'], {
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, SITE_TIMEZONE: 'UTC' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString('utf8') })
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString('utf8') })
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}
