// Issue 64's targets (BENCH_ONLY=x; a whole run at 1,000,000 bookings): the
// log source of changes/ (the database's binary log read as a replica reads
// it; docs/changes.md, docs/changes-log-setup.md) against what a client does
// without it, in one run, each beside its competitor:
//   1. the year report ((b)) answered 304 from the log against its 200, one at
//      a time, with the digest source's 304 beside it;
//   2. 16 identical clients of the year report, no If-None-Match, against 16
//      `mariadb` clients running the service's own statement (identical
//      requests in flight share one read in the log source), the digest
//      source beside it;
//   3. a delta of one changed booking against a full re-read of its year, in
//      the log source and in the digest source;
//   4. the reader's lag and CPU under 500 single-row writes a second.
// The bench's MariaDB runs with the binary log when this phase runs (run.ts,
// BINLOG_OPTIONS); the log source's service runs with an account that has
// the replication grants (docs/changes-log-setup.md), everything else at its
// defaults; the digest source's service is the same with the SELECT-only account.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadavg } from 'node:os'
import { request } from 'node:http'
import mysql from 'mysql2/promise'
import { createPool } from 'mysql2'
import { Kysely, MysqlDialect } from 'kysely'
import { bookingsDigestHalves, compileBookingsOfPeriod, compileBookingsDayDigests, parseServerVersion, periodKindOf, periodOfDay, periodRange, readBookingIndexes, readVisibleLogPosition, rowsInTableOrder, TablePrefixPlugin, type Database } from '../../server/tools.ts'
import type { BenchContext } from './context.ts'
import { cpuSeconds } from './setup.ts'
import { timedGet } from './conditional.ts'
import { curlReports, mariadbReports, REPORT_CLIENTS, REPORT_SECONDS, reportLoad, untilSiteIdle, type ReportRun } from './concurrent-reports.ts'

/** The mariadbd options of the log source (docs/changes-log-setup.md; tests/support/binlog-site.ts). */
export const BINLOG_OPTIONS = ['--log-bin=bc-bin', '--server-id=1', '--binlog-format=ROW', '--binlog-row-image=FULL', '--binlog-row-metadata=FULL']

/** The log source's account: SELECT on the site's database and the replication grants, as docs/changes-log-setup.md sets it up. */
const LOG_READER = { user: 'booking_api_log', password: 'bench-log-reader' }
const PAIRS = Number(process.env.BENCH_CONDITIONAL_PAIRS ?? 9)
const DELTA_ROUNDS = Number(process.env.BENCH_DELTA_ROUNDS ?? 7)
const WRITES_PER_SECOND = Number(process.env.BENCH_WRITES_PER_SECOND ?? 500)
const WRITE_SECONDS = Number(process.env.BENCH_WRITE_SECONDS ?? 30)
const SAMPLE_EVERY_MS = 150
/**
 * The rest before the timed deltas, and between their rounds: this machine's two cores slow down
 * under sustained load and recover within about 20 s of rest (two statements side by side took
 * 350 ms before a 90 s burn of both cores, 530 ms right after it, 315 ms 20 s later), and the
 * syncs and the loads before are such a load. The delta and the re-read it is compared with are
 * timed in turn in each round, so each meets the cores as the other does.
 */
const REST_MS = Number(process.env.BENCH_REST_SECONDS ?? 30) * 1000
const ROUND_REST_MS = 3000
const PROBE_EVERY_MS = 200
const YEAR = { start: '2025-01-01', end: '2025-12-31' }
/** The day of the lag probe's marker booking: one day, so its delta reads little beside the marker. */
const PROBE_DAY = '2027-06-15'
const API = '/wp-json/booking-calendar/v1/'

interface Service { label: string; url: string; pid: number; pids(): number[]; stop(): Promise<void> }

export interface ChangesLogDeps {
  /** run.ts's startService: the built service at its defaults but for `env`, WORKERS as the bench runs it. */
  startService(label: string, env: Record<string, string>): Promise<Service>
  /** run.ts's startHttpFloor: node:http alone on the same workers, serving `body` at `path` from memory (http-floor.mjs). */
  startHttpFloor(body: Buffer, path: string): Promise<{ url: string; stop(): Promise<void> }>
  /** The site's database as root (the administrator's writes, SHOW MASTER STATUS). */
  root: { socketPath: string; dataDir: string; database: string }
  /** The year report's path under the namespace ((b)). */
  reportPath: string
  /** The service's own statement for the year report, as text, for the `mariadb` clients. */
  reportSql: string
}

interface Position { file: string; position: number }
const comparePositions = (a: Position, b: Position) => (a.file === b.file ? a.position - b.position : a.file < b.file ? -1 : 1)

const median = (values: number[]) => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2
}
const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const f1 = (n: number) => (Number.isNaN(n) ? '—' : n.toFixed(1))

/** One GET by curl in its own process, body dropped: status and ms to the last byte (as run.ts's curlOnce). */
function curlGet(url: string): Promise<{ status: number; ms: number; bytes: number }> {
  return new Promise((resolve) => {
    const child = spawn('curl', ['-q', '-s', '--noproxy', '*', '-o', '/dev/null', '--max-time', '300', '-w', '%{http_code} %{size_download} %{time_total}', url], { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.on('close', () => {
      const [status, bytes, seconds] = out.trim().split(' ')
      resolve({ status: Number(status), ms: Number(seconds) * 1000, bytes: Number(bytes) })
    })
  })
}

interface ChangesPage { changes: Array<{ op: string; id?: number; bookings?: Array<{ id: number }> }>; more: boolean; next: string }

/** One GET by curl in its own process, the body kept: status, body and ms to the last byte (curl's time_total, as curlGet). */
function curlGetBody(url: string): Promise<{ status: number; ms: number; body: string }> {
  return new Promise((resolve) => {
    const child = spawn('curl', ['-q', '-s', '--noproxy', '*', '--max-time', '60', '-w', '\n%{http_code} %{time_total}', url], { stdio: ['ignore', 'pipe', 'ignore'] })
    const chunks: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    child.on('close', () => {
      const out = Buffer.concat(chunks).toString('utf8')
      const cut = out.lastIndexOf('\n')
      const [status, seconds] = out.slice(cut + 1).trim().split(' ')
      resolve({ status: Number(status), ms: Number(seconds) * 1000, body: out.slice(0, cut) })
    })
  })
}

/**
 * A changes/ request followed to more=false, as a client does: the token to keep, the operations
 * (only when `keep`: a sync's 200,000 records held by this process made its collector pause
 * the deltas timed after it), the pages, the time. By `fetch` in this process, or by `curl`,
 * as the re-read it is compared with is timed: each page's time to its last byte (curl's
 * time_total), its body parsed after, untimed, to follow `next`.
 */
async function followChanges(base: string, query: string, since?: string, keep = true, client: 'fetch' | 'curl' = 'fetch'): Promise<{ token: string; ops: ChangesPage['changes']; pages: number; ms: number; bookings: number; pageMs: number[] }> {
  const ops: ChangesPage['changes'] = []
  const pageMs: number[] = []
  let token = since
  let pages = 0
  let bookings = 0
  for (;;) {
    const url = `${base}${API}changes?${query}${token === undefined ? '' : `&since=${encodeURIComponent(token)}`}`
    let page: ChangesPage
    if (client === 'curl') {
      const res = await curlGetBody(url)
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body}`)
      pageMs.push(res.ms)
      page = JSON.parse(res.body) as ChangesPage
    } else {
      const pageStarted = performance.now()
      const res = await fetch(url)
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
      page = await res.json() as ChangesPage
      pageMs.push(performance.now() - pageStarted)
    }
    pages++
    for (const op of page.changes) {
      bookings += op.op === 'replace' ? op.bookings?.length ?? 0 : 1
      if (keep) ops.push(op)
    }
    token = page.next
    if (!page.more) break
  }
  return { token, ops, pages, ms: pageMs.reduce((sum, ms) => sum + ms, 0), bookings, pageMs }
}

const touches = (ops: ChangesPage['changes'], id: number) => ops.some((op) => op.id === id || op.bookings?.some((b) => b.id === id))

interface Readyz { changes?: { source?: string; reason?: string; reader?: { connected?: boolean; position?: Position } } }
const readyz = async (url: string) => await (await fetch(`${url}/readyz`)).json() as Readyz

export async function benchChangesLog(ctx: BenchContext, deps: ChangesLogDeps): Promise<{ lines: string[]; verdicts: string[] }> {
  const say = (line: string) => ctx.say(line)
  const db = ctx.readerDb
  await ctx.adminQuery(`
    CREATE USER IF NOT EXISTS '${LOG_READER.user}'@'%' IDENTIFIED BY '${LOG_READER.password}';
    GRANT SELECT ON ${db.database}.* TO '${LOG_READER.user}'@'%';
    GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '${LOG_READER.user}'@'%';`)
  const root = await mysql.createConnection({ socketPath: deps.root.socketPath, user: 'root', database: deps.root.database, dateStrings: true })
  const masterStatus = async (): Promise<Position> => {
    const [rows] = await root.query('SHOW MASTER STATUS') as unknown as [Array<{ File: string; Position: number | string }>]
    return { file: rows[0]!.File, position: Number(rows[0]!.Position) }
  }
  const binlogBytes = async () => ((await root.query('SHOW BINARY LOGS'))[0] as Array<{ File_size: number | string }>).reduce((n, row) => n + Number(row.File_size), 0)
  const status = async (name: string) => Number(((await root.query('SHOW GLOBAL STATUS LIKE ?', [name]))[0] as Array<{ Value: string }>)[0]?.Value ?? NaN)
  const binlogAtStart = await binlogBytes()
  const loadAtStart = loadavg()

  const logService = await deps.startService('log source', { DATABASE_URL: `mysql://${LOG_READER.user}:${LOG_READER.password}@${db.host}:${db.port}/${db.database}` })
  const digestService = await deps.startService('digest source', {})
  const services = [logService, digestService]
  try {
    // The log source decides after its checks and its reader's first position: wait for it, then say what each shows.
    let logReady: Readyz = {}
    for (let i = 0; i < 300; i++) {
      logReady = await readyz(logService.url)
      if (logReady.changes?.source === 'log' && logReady.changes.reader?.connected && logReady.changes.reader.position) break
      await sleep(100)
    }
    const digestReady = await readyz(digestService.url)
    say(`changes log: /readyz of the log service: ${JSON.stringify(logReady.changes)}; of the digest service: ${JSON.stringify(digestReady.changes)}`)
    if (logReady.changes?.source !== 'log') throw new Error(`the log service's /readyz shows source ${logReady.changes?.source} (${logReady.changes?.reason}), not log`)
    if (digestReady.changes?.source !== 'digest') throw new Error(`the digest service's /readyz shows source ${digestReady.changes?.source}, not digest`)

    // --- 1. the year report: 304 against 200, one at a time ---------------------------------
    const report = (service: Service) => `${service.url}${API}${deps.reportPath}`
    const tags = new Map<Service, string>()
    // Warm-up: a 200 and a 304 per worker (each connection goes to the next worker), so each worker remembers the tag.
    for (const service of services) {
      for (let i = 0; i < 2 * 2; i++) {
        const first = await timedGet(report(service), tags.has(service) && i % 2 === 1 ? { 'If-None-Match': tags.get(service)! } : {})
        if (first.etag) tags.set(service, first.etag)
      }
    }
    const times = { log200: [] as number[], log304: [] as number[], digest200: [] as number[], digest304: [] as number[] }
    let reportBytes = 0
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const [service, key] of [[logService, 'log'], [digestService, 'digest']] as const) {
        // The log source keeps a whole answer and sends it again while the log shows no change
        // (http/log-answers.ts): a booking outside the report (rejected) changed first makes its 200 a read, as
        // the digest source's always is. Then each worker revalidates once, untimed (each
        // connection goes to the next worker), so the timed 304 is the log's own.
        if (key === 'log') await root.query("UPDATE wp_booking_calendar_bookings SET note = ? WHERE status = 'reject' ORDER BY id LIMIT 1", [`bench 200 ${pair} ${Date.now()}`])
        const whole = await timedGet(report(service))
        if (key === 'log') for (let worker = 0; worker < 2; worker++) await timedGet(report(service), { 'If-None-Match': tags.get(service)! })
        const held = await timedGet(report(service), { 'If-None-Match': tags.get(service)! })
        if (whole.status !== 200 || held.status !== 304) throw new Error(`${service.label}: expected 200 and 304, got ${whole.status} and ${held.status}`)
        reportBytes = whole.bytes
        times[`${key}200`].push(whole.ms)
        times[`${key}304`].push(held.ms)
      }
    }
    const log304Ratio = median(times.log304) / median(times.log200)
    say(`changes log: year report 200 ${f1(median(times.log200))} ms, 304 ${f1(median(times.log304))} ms (log); digest 200 ${f1(median(times.digest200))} ms, 304 ${f1(median(times.digest304))} ms`)

    // --- 2. 16 identical clients against 16 mariadb clients ---------------------------------
    // How many reads each load made MariaDB do: InnoDB's rows read over one report's, measured alone first.
    const rowsReadBefore = await status('Rows_read')
    await timedGet(report(logService))
    const rowsPerReport = (await status('Rows_read')) - rowsReadBefore
    const mariadbPid = Number(readFileSync(join(deps.root.dataDir, 'mariadbd.pid'), 'utf8').trim())
    /** A load, with MariaDB's reads of the report in it and the CPU (% of a core) of `pids` and mariadbd over it. */
    const readsOf = async (run: () => Promise<ReportRun>, pids: number[] = []) => {
      const before = await status('Rows_read')
      const cpuFrom = [...pids, mariadbPid].map(cpuSeconds)
      const from = Date.now()
      const result = await run()
      const seconds = (Date.now() - from) / 1000
      const cpu = [...pids, mariadbPid].map((pid, i) => (100 * (cpuSeconds(pid) - cpuFrom[i]!)) / seconds)
      return { run: result, reads: ((await status('Rows_read')) - before) / rowsPerReport, cpu: { service: cpu.slice(0, -1), mariadb: cpu.at(-1)! } }
    }
    say(`changes log: ${REPORT_CLIENTS} clients of the year report, ${REPORT_SECONDS} s each: the log source, the digest source, the mariadb clients`)
    const throughLog = await readsOf(() => reportLoad(ctx.wordpressUrl, (until, signal) => curlReports(report(logService), until, signal)), logService.pids())
    await untilSiteIdle(ctx.wordpressUrl)
    const throughDigest = await readsOf(() => reportLoad(ctx.wordpressUrl, (until, signal) => curlReports(report(digestService), until, signal)), digestService.pids())
    await untilSiteIdle(ctx.wordpressUrl)
    const floor = await readsOf(() => reportLoad(ctx.wordpressUrl, (until) => mariadbReports(db, deps.reportSql, until)))
    // The most any service sending these bytes to these clients can do here: node:http alone, the
    // report's body from memory on the same workers, no database (http-floor.mjs), to 16 curl clients.
    const body = await new Promise<Buffer>((resolve, reject) => {
      request(report(logService), { agent: false }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve(Buffer.concat(chunks)))
        res.on('error', reject)
      }).on('error', reject).end()
    })
    const httpFloor = await deps.startHttpFloor(body, '/')
    await untilSiteIdle(ctx.wordpressUrl)
    const bytesAlone = await readsOf(() => reportLoad(ctx.wordpressUrl, (until, signal) => curlReports(httpFloor.url, until, signal)))
    await httpFloor.stop()
    const done = (run: ReportRun) => run.tally!.ok
    const loadRatio = done(throughLog.run) / Math.max(1, done(floor.run))

    // --- 3. a delta of one changed booking against a full re-read of its year ----------------
    const yearQuery = `start=${YEAR.start}&end=${YEAR.end}&per_page=1000`
    // The year's ids as small integers: this process holds as little as it can while it times the deltas.
    const yearIds = ((await root.query('SELECT id FROM wp_booking_calendar_bookings WHERE booking_date BETWEEN ? AND ?', [YEAR.start, YEAR.end]))[0] as Array<{ id: number }>).map((row) => row.id)
    const syncs = new Map<Service, Awaited<ReturnType<typeof followChanges>>>()
    for (const service of services) {
      syncs.set(service, await followChanges(service.url, yearQuery, undefined, false))
      say(`changes log: ${service.label}: a year's sync, ${syncs.get(service)!.bookings} bookings in ${syncs.get(service)!.pages} pages, ${f1(syncs.get(service)!.ms)} ms`)
    }
    const deltas = new Map<Service, number[]>(services.map((s) => [s, []]))
    const deltaBookings = new Map<Service, number[]>(services.map((s) => [s, []]))
    const firstPages = new Map<Service, number[]>(services.map((s) => [s, []]))
    const deltaPages = new Map<Service, number[]>(services.map((s) => [s, []]))
    const rereads: number[] = []
    let rereadBytes = 0
    const tokens = new Map(services.map((s) => [s, syncs.get(s)!.token]))
    await sleep(REST_MS)
    for (let round = 0; round < DELTA_ROUNDS; round++) {
      if (round > 0) await sleep(ROUND_REST_MS)
      const id = yearIds[Math.floor(Math.random() * yearIds.length)]!
      await root.query('UPDATE wp_booking_calendar_bookings SET note = ? WHERE id = ?', [`bench delta ${round} ${Date.now()}`, id])
      for (const service of services) {
        const delta = await followChanges(service.url, yearQuery, tokens.get(service), true, 'curl')
        if (!touches(delta.ops, id)) throw new Error(`${service.label}: the delta after booking ${id} changed does not carry it`)
        tokens.set(service, delta.token)
        deltas.get(service)!.push(delta.ms)
        deltaBookings.get(service)!.push(delta.bookings)
        firstPages.get(service)!.push(delta.pageMs[0]!)
        deltaPages.get(service)!.push(delta.pages)
      }
      // The client without changes/: the year read again, by curl (a cheaper reader than this process's fetch).
      const whole = await curlGet(`${digestService.url}${API}slots?flat&start=${YEAR.start}&end=${YEAR.end}`)
      if (whole.status !== 200) throw new Error(`the year's re-read answered ${whole.status}`)
      rereads.push(whole.ms)
      rereadBytes = whole.bytes
    }
    await sleep(ROUND_REST_MS)
    // Where the digest source's delta goes: its first page reads every period's digest (two
    // statements over the year, side by side) before the changed period's first rows; the statements alone, through mysql2.
    const pool = createPool({ ...db, dateStrings: true, connectionLimit: 2, charset: 'UTF8MB4_UNICODE_520_CI' })
    const kysely = new Kysely<Database>({ dialect: new MysqlDialect({ pool }), plugins: [new TablePrefixPlugin('wp_')] })
    await readBookingIndexes(kysely, 'wp_booking_calendar_bookings')
    const yearFilter = { bookingDate: { from: YEAR.start, to: YEAR.end } }
    const statementMs = async (...statements: Array<{ sql: string; parameters: readonly unknown[] }>) => {
      const runs: number[] = []
      for (let i = 0; i < DELTA_ROUNDS; i++) {
        const started = performance.now()
        await Promise.all(statements.map((compiled) => pool.promise().query(compiled.sql, compiled.parameters as unknown[])))
        runs.push(performance.now() - started)
      }
      return median(runs)
    }
    // As the service sends them: two halves side by side, their rows read in the table's order (db/changes.ts, db/server-dialect.ts).
    const inTableOrder = (compiled: { sql: string; parameters: readonly unknown[] }) => ({ ...compiled, sql: rowsInTableOrder(parseServerVersion('10.11.0-MariaDB'), compiled.sql) })
    const halves = bookingsDigestHalves(kysely, yearFilter)
    if (halves.length !== 2) throw new Error('the year\'s period digests are not read in two halves')
    // The year's periods, as the service cuts them (two days of a month, for at most a year).
    const yearKind = periodKindOf(YEAR.start, YEAR.end)
    const digestsAloneMs = await statementMs(...halves.map((half) => inTableOrder(compileBookingsDayDigests(kysely, yearFilter, { customer: false }, half))))
    const digestsOneStatementMs = await statementMs(inTableOrder(compileBookingsDayDigests(kysely, yearFilter, { customer: false })))
    // The floor of any digest of the year: MariaDB reading each column of the year's rows, in the
    // table's order, nothing hashed or grouped, nothing sent but one row.
    const floorSql = (half: string) => rowsInTableOrder(parseServerVersion('10.11.0-MariaDB'), `SELECT COUNT(*), SUM(LENGTH(id) + LENGTH(service_id) + LENGTH(status) + LENGTH(booking_date) + IFNULL(LENGTH(time_from), 0) + IFNULL(LENGTH(time_to), 0) + IFNULL(LENGTH(note), 0) + LENGTH(created_at)) FROM wp_booking_calendar_bookings FORCE INDEX (bc_api_date) WHERE booking_date BETWEEN ? AND ?${half}`)
    const floorMs = await statementMs({ sql: floorSql(''), parameters: [YEAR.start, YEAR.end] })
    // And in the service's two halves (the ids' remainder by 2), side by side.
    const floorHalvesMs = await statementMs(...[' AND id % 2 = ?', ' AND id % 2 = ?'].map((half, index) => ({ sql: floorSql(half), parameters: [YEAR.start, YEAR.end, index] })))
    const samplePeriod = { number: periodOfDay('2025-06-09', yearKind), kind: yearKind, ...periodRange(periodOfDay('2025-06-09', yearKind), yearKind) }
    const periodAloneMs = await statementMs(compileBookingsOfPeriod(kysely, yearFilter, { customer: false }, samplePeriod, undefined, undefined, 1_000_000))
    await kysely.destroy()
    // And the log source's: its statements alone, in turn, on one connection of the log account
    // (the server's id; the position as the service asks it of MariaDB, one SHOW STATUS; the
    // changed booking by id), and /readyz by the same
    // client as the deltas (HTTP and one statement of the service's).
    const asLogReader = await mysql.createConnection({ host: db.host, port: db.port, user: LOG_READER.user, password: LOG_READER.password, database: db.database })
    const logStatements: number[] = []
    const readyzMs: number[] = []
    for (let i = 0; i < 9; i++) {
      const started = performance.now()
      await asLogReader.query('select @@server_id as server_id, @@log_bin_basename as log_basename')
      await readVisibleLogPosition(asLogReader, 'mariadb')
      await asLogReader.query('SELECT * FROM wp_booking_calendar_bookings WHERE id IN (?) AND booking_date BETWEEN ? AND ?', [[yearIds[i]!], YEAR.start, YEAR.end])
      logStatements.push(performance.now() - started)
      const asked = performance.now()
      await (await fetch(`${logService.url}/readyz`)).arrayBuffer()
      readyzMs.push(performance.now() - asked)
    }
    await asLogReader.end()
    const logDelta = median(deltas.get(logService)!)
    const digestDelta = median(deltas.get(digestService)!)
    const reread = median(rereads)

    // --- 4. lag and CPU under WRITES_PER_SECOND single-row writes -----------------------------
    // Still up, idle: the digest service takes no part.
    await digestService.stop()
    services.splice(services.indexOf(digestService), 1)
    const [[marker]] = await root.query('SELECT id FROM wp_booking_calendar_bookings WHERE booking_date = ? ORDER BY id LIMIT 1', [PROBE_DAY]) as unknown as [[{ id: number }]]
    const probeQuery = `start=${PROBE_DAY}&end=${PROBE_DAY}&per_page=1000`
    const probeRoot = await mysql.createConnection({ socketPath: deps.root.socketPath, user: 'root', database: deps.root.database })
    let probeToken = (await followChanges(logService.url, probeQuery)).token
    const workerPids = logService.pids().filter((pid) => pid !== logService.pid)
    /** Commit → a changes/ that reports it (ms), and /readyz's reader position against the server's (ms behind), each stamped. */
    const visible: Array<{ at: number; ms: number }> = []
    const readyzLag: Array<{ at: number; ms: number; bytes: number }> = []
    const masterSeen: Array<{ at: number; pos: Position }> = []
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const next = Date.now() + SAMPLE_EVERY_MS
        const master = await masterStatus()
        masterSeen.push({ at: Date.now(), pos: master })
        const reader = (await readyz(logService.url).catch(() => undefined))?.changes?.reader?.position
        const at = Date.now()
        if (reader) {
          // Behind by the time since the server's log first went past the reader's position (0 when it has not).
          const past = masterSeen.find((seen) => comparePositions(seen.pos, reader) > 0)
          const behind = comparePositions(reader, master) >= 0 || !past ? 0 : at - past.at
          readyzLag.push({ at, ms: behind, bytes: reader.file === master.file ? Math.max(0, master.position - reader.position) : NaN })
        }
        // Only what a later sample can still need.
        while (masterSeen.length > 2 && comparePositions(masterSeen[1]!.pos, reader ?? master) <= 0) masterSeen.shift()
        await sleep(Math.max(0, next - Date.now()))
      }
    })()
    let probing = true
    const probeFailures = new Map<string, number>()
    const prober = (async () => {
      for (let n = 0; probing; n++) {
        const next = Date.now() + PROBE_EVERY_MS
        await probeRoot.query('UPDATE wp_booking_calendar_bookings SET note = ? WHERE id = ?', [`bench probe ${n}`, marker.id])
        const committed = performance.now()
        for (let tries = 0; tries < 50; tries++) {
          try {
            const delta = await followChanges(logService.url, probeQuery, probeToken)
            probeToken = delta.token
            if (touches(delta.ops, marker.id)) {
              visible.push({ at: Date.now(), ms: performance.now() - committed })
              break
            }
          } catch (error) {
            // A refused delta (503 while the reader is late) is asked again, and the time runs on.
            probeFailures.set((error as Error).message.slice(-60), (probeFailures.get((error as Error).message.slice(-60)) ?? 0) + 1)
            await sleep(50)
          }
        }
        await sleep(Math.max(0, next - Date.now()))
      }
    })()
    const IDLE_MS = 5_000
    const idleFrom = Date.now()
    const idleCpu = { primary: cpuSeconds(logService.pid), workers: workerPids.map(cpuSeconds), mariadb: cpuSeconds(mariadbPid) }
    await sleep(IDLE_MS)
    const idleTo = Date.now()
    const idleCpuEnd = { primary: cpuSeconds(logService.pid), workers: workerPids.map(cpuSeconds), mariadb: cpuSeconds(mariadbPid) }
    const binlogBeforeWrites = await binlogBytes()
    const cpuBefore = { primary: cpuSeconds(logService.pid), workers: workerPids.map(cpuSeconds), mariadb: cpuSeconds(mariadbPid) }
    const writesFrom = Date.now()
    const writer = spawn(process.execPath, ['--import', 'tsx', new URL('./log-writes.ts', import.meta.url).pathname, String(WRITES_PER_SECOND), String(WRITE_SECONDS)], {
      env: { ...process.env, BENCH_ROOT_SOCKET: deps.root.socketPath, BENCH_DATABASE: deps.root.database }, stdio: ['ignore', 'pipe', 'inherit'],
    })
    let writerOut = ''
    writer.stdout.on('data', (chunk: Buffer) => { writerOut += chunk.toString() })
    let writerCpu = 0
    const writerSampler = setInterval(() => { try { writerCpu = cpuSeconds(writer.pid!) } catch { /* ended */ } }, 250)
    await new Promise((resolve) => writer.once('exit', resolve))
    clearInterval(writerSampler)
    const writesTo = Date.now()
    const cpuAfter = { primary: cpuSeconds(logService.pid), workers: workerPids.map(cpuSeconds), mariadb: cpuSeconds(mariadbPid) }
    // A second more, so the last writes' lag is seen out.
    await sleep(1_000)
    sampling = false
    probing = false
    await Promise.all([sampler, prober])
    await probeRoot.end()
    const writes = JSON.parse(writerOut.trim().split('\n').at(-1) ?? '{}') as { writes: number; perSecond: number; updates: number; inserts: number; deletes: number; failed: number; seconds: number }
    const binlogAfterWrites = await binlogBytes()
    const during = <T extends { at: number }>(list: T[], from: number, to: number) => list.filter((s) => s.at >= from && s.at <= to)
    const visibleWriting = during(visible, writesFrom, writesTo + 1_000).map((s) => s.ms)
    const visibleIdle = during(visible, idleFrom, idleTo).map((s) => s.ms)
    const readyzWriting = during(readyzLag, writesFrom, writesTo + 1_000).map((s) => s.ms)
    const readyzBytes = during(readyzLag, writesFrom, writesTo).map((s) => s.bytes).filter((n) => !Number.isNaN(n))
    const writeSeconds = (writesTo - writesFrom) / 1000
    const idleSeconds = (idleTo - idleFrom) / 1000
    const share = (a: number, b: number, seconds: number) => (100 * (b - a)) / seconds
    const workersCpu = (from: typeof cpuBefore, to: typeof cpuBefore, seconds: number) => to.workers.map((cpu, i) => share(from.workers[i]!, cpu, seconds).toFixed(1)).join(' / ')
    const binlogAtEnd = await binlogBytes()
    await root.end()

    // --- the tables ---------------------------------------------------------------------------
    const lines: string[] = []
    const out = (...more: string[]) => lines.push(...more)
    const pass = (met: boolean) => (met ? 'PASS' : 'MISS')
    const year = syncs.get(logService)!
    out('', `### changes/ and the log source (issue 64): ${ctx.bookings.toLocaleString('en')} bookings, the binary log on (\`${BINLOG_OPTIONS.join(' ')}\`)`, '',
      `Two services at their defaults (\`WORKERS\` as the bench runs them), started for this phase: the **log source** (\`DATABASE_URL\` of an account with \`SELECT\` and \`REPLICATION SLAVE, BINLOG MONITOR\`, as docs/changes-log-setup.md sets it up; its /readyz: \`${JSON.stringify(logReady.changes)}\`) and the **digest source** (the bench's SELECT-only account; /readyz: \`${JSON.stringify(digestReady.changes)}\`). The year report is (b), \`${deps.reportPath}\` (${(reportBytes / 1e6).toFixed(1)} MB).`, '',
      '| target | measured | competitor | ratio | target | verdict |',
      '|---|---:|---:|---:|---:|---|',
      `| 1. year report, 304 in the log source (median of ${PAIRS}, one at a time) vs its 200 | ${f1(median(times.log304))} ms | ${f1(median(times.log200))} ms | 200 ÷ 304 = ${(1 / log304Ratio).toFixed(0)}× | ≥ 20× | ${pass(log304Ratio <= 0.05)} |`,
      `| 1'. for reference: the digest source's 304 vs its 200 | ${f1(median(times.digest304))} ms | ${f1(median(times.digest200))} ms | 200 ÷ 304 = ${(median(times.digest200) / median(times.digest304)).toFixed(2)}× | — | — |`,
      `| 2. ${REPORT_CLIENTS} identical clients of the year report, ${REPORT_SECONDS} s, log source vs ${REPORT_CLIENTS} \`mariadb\` clients (reports done) | ${done(throughLog.run)} | ${done(floor.run)} | ${loadRatio.toFixed(2)}× | ≥ 3× | ${pass(loadRatio >= 3)} |`,
      `| 2'. for reference: the digest source (no sharing) vs the same | ${done(throughDigest.run)} | ${done(floor.run)} | ${(done(throughDigest.run) / Math.max(1, done(floor.run))).toFixed(2)}× | — | — |`,
      `| 3. delta of one changed booking, log source (median of ${DELTA_ROUNDS}, by curl) vs the year re-read (\`slots?flat\`, 200, by curl) | ${f1(logDelta)} ms | ${f1(reread)} ms | re-read ÷ delta = ${(reread / logDelta).toFixed(0)}× | > 50× | ${pass(logDelta / reread < 0.02)} |`,
      `| 3'. the same, digest source | ${f1(digestDelta)} ms | ${f1(reread)} ms | re-read ÷ delta = ${(reread / digestDelta).toFixed(2)}× | > 2× | ${pass(digestDelta / reread < 0.5)} |`,
      `| 4. lag at ${WRITES_PER_SECOND} writes/s: commit → a \`changes?since=\` that reports it, max (p50 / p99) | ${f1(Math.max(...visibleWriting))} ms (${f1(percentile(visibleWriting, 50))} / ${f1(percentile(visibleWriting, 99))}) | idle: ${f1(percentile(visibleIdle, 50))} ms p50 | — | < 1000 ms | ${pass(Math.max(...visibleWriting) < 1000)} |`,
      '',
      '#### 1. The year report, one request at a time (ms, request to last byte, fresh connection each; the four in turn in each round)', '',
      '| source | 200 best | 200 median | 304 best | 304 median | 304 ÷ 200 |',
      '|---|---:|---:|---:|---:|---:|',
      `| log | ${f1(Math.min(...times.log200))} | ${f1(median(times.log200))} | ${f1(Math.min(...times.log304))} | ${f1(median(times.log304))} | ${log304Ratio.toFixed(4)} |`,
      `| digest | ${f1(Math.min(...times.digest200))} | ${f1(median(times.digest200))} | ${f1(Math.min(...times.digest304))} | ${f1(median(times.digest304))} | ${(median(times.digest304) / median(times.digest200)).toFixed(3)} |`,
      '',
      `#### 2. ${REPORT_CLIENTS} clients asking for the year report back to back for ${REPORT_SECONDS} s (no If-None-Match), beside the site's probe`, '',
      `Each report a \`curl\` process (a fresh connection, the body dropped); the floor is ${REPORT_CLIENTS} \`mariadb\` clients running the service's own statement, as in the concurrent reports above. MariaDB's reads: its \`Rows_read\` over the load ÷ that of one report of the log source read alone (${Math.round(rowsPerReport).toLocaleString('en')} rows).`, '',
      '| reports through | done (2xx) | non-2xx | errors | MariaDB reads of the report | CPU % of a core: the service\'s primary / workers; mariadbd | the site\'s p50 / p99 ms |',
      '|---|---:|---:|---:|---:|---|---|',
      ...([['the service, log source (identical requests in flight share one read)', throughLog], ['the service, digest source', throughDigest], [`${REPORT_CLIENTS} \`mariadb\` clients (the floor)`, floor],
        [`the limit: node:http alone sending the same ${(body.length / 1e6).toFixed(1)} MB from memory, no database, on ${logService.pids().length - 1 || 1} workers (not a contender)`, bytesAlone]] as const).map(([label, { run, reads, cpu }]) =>
        `| ${label} | ${run.tally!.ok} | ${run.tally!.notOk} | ${run.tally!.errors}${run.tally!.kinds.size > 0 ? ` (${[...run.tally!.kinds].map(([kind, n]) => `${n}× ${kind}`).join(', ')})` : ''} | ${reads.toFixed(1)} | ${cpu.service.length > 0 ? `${cpu.service.map((n) => n.toFixed(0)).join(' / ')}; ` : ''}${cpu.mariadb.toFixed(0)} | ${run.probe.p50.toFixed(0)} / ${run.probe.p99.toFixed(0)} |`),
      '',
      `The limit did ${done(bytesAlone.run)} reports: the log source's ${done(throughLog.run)} are ${(done(throughLog.run) / Math.max(1, done(bytesAlone.run))).toFixed(2)}× it, and ${(done(bytesAlone.run) / Math.max(1, done(floor.run))).toFixed(2)}× the floor is the most any service could show against the floor here (the curl clients, the service and MariaDB share the cores).`,
      '',
      `#### 3. A year's sync, then one booking of the year changed (as root) and the delta followed to \`more=false\` (\`per_page=1000\`), ${DELTA_ROUNDS} rounds`, '',
      `The year's re-read: \`slots?flat&start=${YEAR.start}&end=${YEAR.end}\`, ${(rereadBytes / 1e6).toFixed(1)} MB, by curl; the deltas' pages by curl too (each page's time to its last byte, its body parsed after, untimed, to follow \`next\`); the syncs by fetch in the bench process.`, '',
      '| source | the year\'s sync: bookings, pages, s | delta bookings (each round) | delta ms (each round) | median ms | ÷ re-read median |',
      '|---|---|---|---|---:|---:|',
      ...services.concat(digestService).map((service) => {
        const sync = syncs.get(service)!
        return `| ${service.label} | ${sync.bookings.toLocaleString('en')}, ${sync.pages}, ${(sync.ms / 1000).toFixed(1)} | ${deltaBookings.get(service)!.join(', ')} | ${deltas.get(service)!.map(f1).join(', ')} | ${f1(median(deltas.get(service)!))} | ${(median(deltas.get(service)!) / reread).toFixed(4)} |`
      }),
      `| the year re-read (200) | | ${year.bookings.toLocaleString('en')} | ${rereads.map(f1).join(', ')} | ${f1(reread)} | 1 |`,
      '',
      `Where the digest source's delta goes: ${deltaPages.get(digestService)!.join(', ')} pages; its first page (every period's digest read, then the changed period's first day) took ${firstPages.get(digestService)!.map(f1).join(', ')} ms, the rest ${deltas.get(digestService)!.map((ms, i) => f1(ms - firstPages.get(digestService)![i]!)).join(', ')} ms. Its statements alone through mysql2 (median of ${DELTA_ROUNDS}): the year's period digests as the service reads them, two halves side by side, ${f1(digestsAloneMs)} ms (in one statement: ${f1(digestsOneStatementMs)} ms); one period's rows (${samplePeriod.lower} to before ${samplePeriod.before}, all at once) ${f1(periodAloneMs)} ms; the floor of any digest of the year (MariaDB reading each column of its rows, in the table's order, nothing hashed, in one statement: every exact digest source must at least do this before it knows what changed) ${f1(floorMs)} ms, in the two halves side by side ${f1(floorHalvesMs)} ms, and with one period's rows ${f1(floorHalvesMs + periodAloneMs)} ms against the ${f1(reread / 2)} ms the target allows (half the re-read). The log source's delta: ${deltaPages.get(logService)!.join(', ')} page(s); its statements alone, in turn on one connection (the server's id; the position as the service asks MariaDB for it, one SHOW STATUS; the booking by id): ${f1(median(logStatements))} ms (median of 9); /readyz by the same client (HTTP and one statement): ${f1(median(readyzMs))} ms. For the target (re-read ÷ delta > 50×) this re-read allows a delta of at most ${f1(reread / 50)} ms.`,
      '',
      `#### 4. ${WRITES_PER_SECOND} single-row writes a second for ${WRITE_SECONDS} s (as root: updates of random rows, 5 % inserts, 5 % deletes), the log source's service otherwise idle`, '',
      `The writer did ${writes.writes} writes in ${writes.seconds?.toFixed(1)} s (**${writes.perSecond?.toFixed(0)}/s**: ${writes.updates} updates, ${writes.inserts} inserts, ${writes.deletes} deletes, ${writes.failed} failed). The binary log grew by ${((binlogAfterWrites - binlogBeforeWrites) / 1e6).toFixed(1)} MB.`, '',
      '| lag | samples | p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|',
      `| commit of a marker booking (every ${PROBE_EVERY_MS} ms) → a \`changes?since=\` (its day) that reports it, during the writes | ${visibleWriting.length} | ${f1(percentile(visibleWriting, 50))} | ${f1(percentile(visibleWriting, 99))} | ${f1(Math.max(...visibleWriting))} |`,
      `| the same, before the writes (idle: the request's own time) | ${visibleIdle.length} | ${f1(percentile(visibleIdle, 50))} | ${f1(percentile(visibleIdle, 99))} | ${f1(Math.max(...visibleIdle))} |`,
      `| /readyz's \`changes.reader.position\` against SHOW MASTER STATUS (every ${SAMPLE_EVERY_MS} ms; a worker's /readyz shows the position the primary told it, at most 1 s old) | ${readyzWriting.length} | ${f1(percentile(readyzWriting, 50))} | ${f1(percentile(readyzWriting, 99))} | ${f1(Math.max(...readyzWriting))} |`,
      '',
      ...(probeFailures.size > 0 ? [`The probe's deltas refused and asked again: ${[...probeFailures].map(([kind, n]) => `${n}× ${kind}`).join(', ')}.`, ''] : []),
      `Bytes of log /readyz's position was behind SHOW MASTER STATUS during the writes: p50 ${percentile(readyzBytes, 50).toLocaleString('en')}, max ${Math.max(...readyzBytes, 0).toLocaleString('en')}.`, '',
      '| process | CPU % of a core, idle (' + idleSeconds.toFixed(0) + ' s) | CPU % during the writes (' + writeSeconds.toFixed(1) + ' s) |',
      '|---|---:|---:|',
      `| the service's primary (reads the log; pid ${logService.pid}) | ${share(idleCpu.primary, idleCpuEnd.primary, idleSeconds).toFixed(1)} | ${share(cpuBefore.primary, cpuAfter.primary, writeSeconds).toFixed(1)} |`,
      `| its workers (${workerPids.join(', ')}; they answer the probes) | ${workersCpu(idleCpu, idleCpuEnd, idleSeconds)} | ${workersCpu(cpuBefore, cpuAfter, writeSeconds)} |`,
      `| mariadbd | ${share(idleCpu.mariadb, idleCpuEnd.mariadb, idleSeconds).toFixed(1)} | ${share(cpuBefore.mariadb, cpuAfter.mariadb, writeSeconds).toFixed(1)} |`,
      `| the writer (Node, mysql2) | | ${((100 * writerCpu) / writeSeconds).toFixed(1)} |`,
      '',
      `The binary log: ${(binlogAtStart / 1e6).toFixed(0)} MB when this phase began (the seed written through it), ${(binlogAtEnd / 1e6).toFixed(0)} MB at its end.`,
      '',
      `The machine's load average (1, 5, 15 min) when this phase began: ${loadAtStart.map((n) => n.toFixed(2)).join(', ')}; at its end: ${loadavg().map((n) => n.toFixed(2)).join(', ')} (2 cores: above 2, other processes than the bench's wanted the cores too).`,
    )
    const verdicts = [
      ctx.verdict(`changes log (issue 64): the year report's 200 ÷ its 304 in the log source, medians one at a time (${f1(median(times.log200))} ms against ${f1(median(times.log304))} ms; the digest source's 304: ${f1(median(times.digest304))} ms)`, 1 / log304Ratio, 20, '×', 'higher'),
      ctx.verdict(`changes log (issue 64): ${REPORT_CLIENTS} identical clients of the year report in the log source ÷ ${REPORT_CLIENTS} \`mariadb\` clients, reports done in ${REPORT_SECONDS} s (${done(throughLog.run)} against ${done(floor.run)}; the digest source: ${done(throughDigest.run)})`, loadRatio, 3, '×', 'higher'),
      ctx.verdict(`changes log (issue 64): the year's re-read ÷ a delta of one changed booking in the log source, medians (${f1(reread)} ms against ${f1(logDelta)} ms; target > 50×)`, reread / logDelta, 50, '×', 'higher'),
      ctx.verdict(`changes log (issue 64): the same in the digest source (${f1(digestDelta)} ms; target > 2×)`, reread / digestDelta, 2, '×', 'higher'),
      ctx.verdict(`changes log (issue 64): at ${writes.perSecond?.toFixed(0)} writes/s, the longest from a commit to a \`changes?since=\` that reports it (p50 ${f1(percentile(visibleWriting, 50))} ms, p99 ${f1(percentile(visibleWriting, 99))} ms; /readyz's position, at most 1 s stale by design: max ${f1(Math.max(...readyzWriting))} ms); the log's reader used ${share(cpuBefore.primary, cpuAfter.primary, writeSeconds).toFixed(1)} % of a core`, Math.max(...visibleWriting), 1000, 'ms', 'lower'),
    ]
    return { lines, verdicts }
  } finally {
    for (const service of services) await service.stop()
  }
}
