// One question, one answer (issue 62): every setting a user may choose, and
// every state load brings (the hold's bounds spent, a HOLD_DIR that cannot be
// written, one that fills), gives the status, X-WP-Total and bytes of the reference: the
// simplest path, with no fast path, nothing held and nothing tagged. Questions
// are generated (fast-check) over routes, formats, _fields, pages, filters and
// ranges of every length class; the data is the demo's, with every quirk of
// PLUGIN_TABLES.md (notes with line breaks, стрижка, zero dates, legacy statuses).
// Tags may differ between settings; answers may not. A feed may differ only in DTSTAMP.
import { expect } from 'chai'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { demoDataSql, FIRST_SERVICE_ID } from '../../db/demo-data.ts'
import { createTestDatabase, testServer, type TestDatabase } from '../support/database.ts'
import { spawnService, startListeningService, type ListeningService, type ServiceProcess } from '../support/service.ts'

const BOOKINGS = 20_000
const PREFIX = '/wp-json/booking-calendar/v1/'

/** The simplest path: every row parsed, every query built afresh, nothing held, no answer tagged by its rows. */
const REFERENCE = { ROWS_AS_BYTES: 'false', SQL_SHAPE_CACHE: 'false', ETAG_MAX_ROWS: '0', HOLD_MEMORY_BYTES: '0', HOLD_DISK_BYTES: '0' }

/** The service reading changes/ from the binary log of `npm test`'s server: identical questions share one read (http/log-answers.ts). */
const LOG_SOURCE = 'CHANGES_SOURCE=log, its reads shared by the log'

/** Every setting compared with the reference, by name; HOLD_DIR is filled in per run. */
const SETTINGS: Record<string, Record<string, string>> = {
  'the defaults': {},
  'ETAG_MAX_ROWS=0': { ETAG_MAX_ROWS: '0' },
  'ETAG_MAX_ROWS=3': { ETAG_MAX_ROWS: '3' },
  'ETAG_MAX_ROWS=2000': { ETAG_MAX_ROWS: '2000' },
  'holding off': { HOLD_MEMORY_BYTES: '0', HOLD_DISK_BYTES: '0' },
  'hold bounds of 4 KiB and 64 KiB': { HOLD_MEMORY_BYTES: '4096', HOLD_DISK_BYTES: '65536' },
  'memory only, 64 KiB': { HOLD_MEMORY_BYTES: '65536', HOLD_DISK_BYTES: '0' },
  'the fast paths off': { ROWS_AS_BYTES: 'false', SQL_SHAPE_CACHE: 'false' },
  'DB_STREAM_CONNECTIONS=1': { DB_STREAM_CONNECTIONS: '1' },
  'a HOLD_DIR that cannot be written': { HOLD_DIR: '/unwritable' },
}

interface Answer {
  status: number
  total: string | null
  totalPages: string | null
  type: string | null
  body: string
}

/** One question asked over HTTP: what a user sees of the answer, DTSTAMP lines (the time of the answer) taken out. */
async function ask(port: number, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}${PREFIX}${path}`, init)
  const body = (await response.text()).replace(/^DTSTAMP:.*\r\n/gm, '')
  return {
    status: response.status, total: response.headers.get('x-wp-total'), totalPages: response.headers.get('x-wp-totalpages'),
    type: response.headers.get('content-type'), body,
  }
}

const day = (from: string, plus: number) => new Date(Date.parse(`${from}T00:00:00Z`) + plus * 86_400_000).toISOString().slice(0, 10)

/** A range of each length class: narrow (≤ 62 days), a quarter, a year, more than 366 days, open at either end, or none. */
const rangeArb = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 61 })).map(([at, days]) => ({ start: day('2025-01-01', at), end: day('2025-01-01', at + days) })),
  fc.integer({ min: 0, max: 900 }).map((at) => ({ start: day('2025-01-01', at), end: day('2025-01-01', at + 91) })),
  fc.integer({ min: 0, max: 800 }).map((at) => ({ start: day('2025-01-01', at), end: day('2025-01-01', at + 364) })),
  fc.integer({ min: 0, max: 400 }).map((at) => ({ start: day('2025-01-01', at), end: day('2025-01-01', at + 500) })),
  fc.integer({ min: 0, max: 1000 }).map((at) => ({ start: day('2025-01-01', at) })),
  fc.integer({ min: 0, max: 1000 }).map((at) => ({ end: day('2025-01-01', at) })),
  fc.constant({}),
)

const statusArb = fc.option(fc.subarray(['pending', 'booked', 'reject', 'completed', 'expired'], { minLength: 1 }), { nil: undefined })
const serviceArb = fc.option(fc.oneof(fc.integer({ min: FIRST_SERVICE_ID, max: FIRST_SERVICE_ID + 3 }).map(String), fc.constantFrom('haircut', 'стрижка', '9999')), { freq: 3, nil: undefined })
const slotFieldsArb = fc.option(fc.subarray(['id', 'status', 'note', 'service_slug', 'start', 'customer', 'nope'], { minLength: 1 }), { freq: 2, nil: undefined })
const csvFieldsArb = fc.option(fc.subarray(['id', 'status', 'note', 'service_slug', 'start', 'booking_date'], { minLength: 1 }), { freq: 2, nil: undefined })

function query(params: Record<string, string | string[] | number | boolean | undefined>): string {
  const parts: string[] = []
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === false) continue
    parts.push(value === true ? name : `${name}=${encodeURIComponent(Array.isArray(value) ? value.join(',') : String(value))}`)
  }
  return parts.join('&')
}

/** A question of any route, in any of its formats, with its filters, _fields and pages. */
const questionArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ range: rangeArb, status: statusArb, service: serviceArb, flat: fc.boolean(), _fields: slotFieldsArb, filter_by: fc.constantFrom(undefined, 'created_date'), paged: fc.option(fc.record({ per_page: fc.integer({ min: 1, max: 1000 }), page: fc.integer({ min: 1, max: 4 }) }), { freq: 3, nil: undefined }) })
    .map((q) => `slots?${query({ ...q.range, status: q.status, service: q.service, flat: q.flat, _fields: q._fields, filter_by: q.filter_by, ...q.paged })}`) },
  { weight: 4, arbitrary: fc.record({ range: rangeArb, status: statusArb, service: serviceArb, _fields: csvFieldsArb, bom: fc.boolean() })
    .map((q) => `slots?${query({ format: 'csv', ...q.range, status: q.status, service: q.service, _fields: q._fields, bom: q.bom })}`) },
  { weight: 3, arbitrary: fc.record({ range: rangeArb, status: statusArb, service: serviceArb })
    .map((q) => `slots?${query({ format: 'ics', ...q.range, status: q.status, service: q.service })}`) },
  { weight: 1, arbitrary: fc.record({ at: fc.integer({ min: 0, max: 900 }), days: fc.integer({ min: 0, max: 120 }), service: serviceArb, format: fc.constantFrom('json', 'ics') })
    .map((q) => `disabled-time?${query({ start: day('2025-01-01', q.at), end: day('2025-01-01', q.at + q.days), service: q.service, format: q.format })}`) },
  { weight: 1, arbitrary: fc.record({ at: fc.integer({ min: 0, max: 900 }), days: fc.integer({ min: 0, max: 400 }), group_by: fc.constantFrom(undefined, 'day', 'service', 'status', 'service,status'), format: fc.constantFrom('json', 'csv') })
    .map((q) => `summary?${query({ start: day('2025-01-01', q.at), end: day('2025-01-01', q.at + q.days), group_by: q.group_by, format: q.format })}`) },
  { weight: 1, arbitrary: fc.record({ at: fc.integer({ min: 0, max: 900 }), days: fc.integer({ min: 0, max: 30 }), duration: fc.option(fc.constantFrom(30, 60), { nil: undefined }), format: fc.constantFrom('json', 'csv') })
    .map((q) => `availability?${query({ start: day('2025-01-01', q.at), end: day('2025-01-01', q.at + q.days), duration: q.duration, format: q.format })}`) },
)

/**
 * Questions that reach every cause of a second attempt or a fallback, asked
 * every run besides the generated ones: a year with _fields (JSON and CSV), a
 * year's feed, a narrow range of more than a thousand bookings, a service by
 * ID and by slug, the whole table, a page past the hold's bounds.
 */
const PINNED = [
  'slots?flat&_fields=id&start=2026-01-01&end=2026-06-30',
  'slots?format=csv&_fields=id,status&start=2026-01-01&end=2026-06-30',
  'slots?format=csv&_fields=id,status,note&start=2026-01-01&end=2026-06-30',
  'slots?flat&start=2026-01-01&end=2026-06-30',
  'slots?_fields=id,note,service_slug&start=2025-03-01&end=2026-02-28',
  'slots?format=csv&start=2025-03-01&end=2026-02-28',
  'slots?format=ics&start=2025-03-01&end=2026-02-28',
  'slots?format=ics&start=2025-03-01&end=2026-02-28&status=booked,pending',
  'slots?flat&start=2026-01-01&end=2026-02-28',
  'slots?flat&_fields=id,customer&start=2026-01-01&end=2026-02-28',
  `slots?service=${FIRST_SERVICE_ID}&start=2025-01-01&end=2027-12-31`,
  'slots?service=haircut&format=csv&_fields=id,note',
  'slots?flat&_fields=id',
  'slots',
  'slots?format=csv',
  'slots?per_page=1000&page=3&_fields=id,note',
  'slots?start=2025-01-01',
  'summary?start=2025-01-01&end=2025-12-31&group_by=day',
  'availability?start=2026-03-02&end=2026-03-08&duration=30',
  'disabled-time?start=2026-01-01&end=2026-03-31&format=ics',
]

interface Target {
  name: string
  port: number
  close(): Promise<void>
}

describe('one question, one answer: every setting against the reference (issue 62)', function () {
  this.timeout(300_000)
  let db: TestDatabase
  let dir: string
  let reference: ListeningService
  /** The tmpfs mounted for the disk that fills, when mount works here. */
  let smallDisk: string | undefined
  const targets: Target[] = []
  const answers = new Map<string, Answer>()
  /** The log source's request lines: which answers the log gave (answeredByLog). */
  let logSourceLogs: Record<string, unknown>[] = []

  /** The reference's answer, asked once per question. */
  async function expected(path: string): Promise<Answer> {
    let answer = answers.get(path)
    if (!answer) {
      answer = await ask(reference.port, path)
      expect(answer.status, `${path}: the reference answers`).to.be.lessThan(500)
      answers.set(path, answer)
    }
    return answer
  }

  async function compare(target: Target, path: string): Promise<void> {
    const want = await expected(path)
    const got = await ask(target.port, path)
    const where = `${target.name}: ${path}`
    expect({ status: got.status, total: got.total, totalPages: got.totalPages, type: got.type }, where)
      .to.deep.equal({ status: want.status, total: want.total, totalPages: want.totalPages, type: want.type })
    // Compared as text first for a readable difference, then as bytes (the length says it all when they differ).
    if (got.body !== want.body) expect(got.body.length, `${where}: the body's length`).to.equal(want.body.length)
    expect(got.body, `${where}: the body`).to.equal(want.body)
  }

  before(async function () {
    db = await createTestDatabase('differential')
    for (const statement of demoDataSql({ prefix: db.prefix, bookings: BOOKINGS })) await db.admin.query(statement)
    dir = mkdtempSync(join(tmpdir(), 'bc-differential-'))
    // A HOLD_DIR under a regular file can never be made, as on a read-only root filesystem.
    writeFileSync(join(dir, 'a-file'), '')
    reference = await startListeningService(db, { ...REFERENCE, HOLD_DIR: join(dir, 'reference') })
    for (const [name, env] of Object.entries(SETTINGS)) {
      const holdDir = env.HOLD_DIR === '/unwritable' ? join(dir, 'a-file', 'held') : join(dir, name.replace(/\W+/g, '-'))
      const service = await startListeningService(db, { ...env, HOLD_DIR: holdDir })
      targets.push({ name, port: service.port, close: () => service.close() })
    }
    // changes/'s log source (API.md, "Conditional requests"): identical questions in flight share one read.
    const logReader = process.env.TEST_DB_LOG_READER_USER
    if (logReader !== undefined) {
      const server = testServer()
      const databaseUrl = `mysql://${logReader}:${server.readerPassword}@${server.host}:${server.port}/${db.name}`
      const service = await startListeningService({ databaseUrl, prefix: db.prefix }, { CHANGES_SOURCE: 'log', HOLD_DIR: join(dir, 'log-source') })
      logSourceLogs = service.logs
      targets.push({ name: LOG_SOURCE, port: service.port, close: () => service.close() })
    }
    // A disk that fills mid-hold: a 1 MiB tmpfs, which a whole export (5 MB of JSON here) passes.
    const small = join(dir, 'small-disk')
    mkdirSync(small)
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', small], { stdio: 'pipe' })
      smallDisk = small
      const service = await startListeningService(db, { HOLD_DIR: small })
      targets.push({ name: 'a HOLD_DIR that fills (a 1 MiB tmpfs)', port: service.port, close: () => service.close() })
    } catch (error) {
      console.log(`      without the disk that fills: mount -t tmpfs failed (${String((error as Error).message).split('\n')[0]}); it needs root on Linux`)
    }
  })

  after(async function () {
    for (const target of targets) await target.close()
    await reference?.close()
    if (smallDisk !== undefined) execFileSync('umount', ['--lazy', smallDisk], { stdio: 'ignore' })
    rmSync(dir, { recursive: true, force: true })
    await db?.drop()
  })

  it('answers the pinned questions alike under every setting', async function () {
    for (const path of PINNED) {
      for (const target of targets) await compare(target, path)
    }
  })

  it('answers generated questions alike under every setting', async function () {
    await fc.assert(fc.asyncProperty(questionArb, async (path) => {
      for (const target of targets) await compare(target, path)
    }), { numRuns: 60 })
  })

  it('answers alike under concurrency, with the hold bounds spent by the exports beside', async function () {
    const tiny = targets.find((target) => target.name === 'hold bounds of 4 KiB and 64 KiB')!
    const questions = [...PINNED.slice(0, 8), ...PINNED.slice(0, 8)]
    for (const path of questions) await expected(path)
    await Promise.all(questions.map((path) => compare(tiny, path)))
    const defaults = targets.find((target) => target.name === 'the defaults')!
    await Promise.all(questions.map((path) => compare(defaults, path)))
    const log = targets.find((target) => target.name === LOG_SOURCE)
    if (log !== undefined) await Promise.all(questions.map((path) => compare(log, path)))
  })

  it('in the log source, a tag held is answered 304 by the log while nothing changed, for every pinned question that is tagged', async function () {
    const log = targets.find((target) => target.name === LOG_SOURCE)
    if (log === undefined) return this.skip()
    let revalidated = 0
    let byLog = 0
    for (const path of PINNED) {
      const first = await fetch(`http://127.0.0.1:${log.port}${PREFIX}${path}`)
      const body = (await first.text()).replace(/^DTSTAMP:.*\r\n/gm, '')
      expect(body, path).to.equal((await expected(path)).body)
      const tag = first.headers.get('etag')
      if (tag === null) continue
      const again = await fetch(`http://127.0.0.1:${log.port}${PREFIX}${path}`, { headers: { 'If-None-Match': tag } })
      expect({ status: again.status, tag: again.headers.get('etag') }, path).to.deep.equal({ status: 304, tag })
      revalidated++
      // A feed is read again: its DTSTAMP and its default range are the time of the answer (http/log-answers.ts).
      if (!path.includes('format=ics')) byLog++
    }
    expect(revalidated).to.be.above(10)
    // Answered by the log, not by reading the rows again (which would also give 304).
    expect(logSourceLogs.filter((line) => line.answeredByLog === 'not-modified').length).to.equal(byLog)
  })

  describe('with WORKERS=2 and one stream connection', function () {
    let service: ServiceProcess
    before(async function () {
      service = await spawnService(db, { WORKERS: '2', DB_STREAM_CONNECTIONS: '1', HOLD_DIR: join(dir, 'workers') })
    })
    after(async function () {
      service?.child.kill('SIGTERM')
      await service?.exited
    })

    it('answers the pinned questions as the reference does, several at once', async function () {
      const target: Target = { name: 'WORKERS=2', port: service.port, close: async () => {} }
      await Promise.all(PINNED.map((path) => compare(target, path)))
    })
  })
})
