// npm run contract:prism: Stoplight Prism's validating proxy in front of the
// real service, to check openapi.json both ways with a validator nobody here
// wrote. A private MariaDB holds the test fixtures (tests/fixtures/site.ts), the
// service (server/main.ts) reads it, and `prism proxy openapi.json <service>
// --errors` stands in front. Each request goes through Prism; Prism checks the
// request against the document (refusing a bad one itself with 422) and the
// answer too (sl-violations header, and a warning in its log). Everything this
// script starts is stopped again, also when it fails or is interrupted.
//
// Prism lives in tools/prism with its own lockfile, so the project's own
// dependencies stay small; it is installed there on the first run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:net'
import { findFreePort, startMariaDb, stopOnExit } from '../mariadb.ts'
import { createTestDatabase, type TestDatabase } from '../../tests/support/database.ts'
import { HAIRCUT, STRIZHKA, loadSite } from '../../tests/fixtures/site.ts'

const root = new URL('../../', import.meta.url).pathname
const prismDir = `${root}tools/prism`
const prismBin = `${prismDir}/node_modules/.bin/prism`
const NAMESPACE = '/wp-json/booking-calendar/v1'
const REQUEST_TIMEOUT_MS = 15_000
const START_TIMEOUT_MS = 60_000

const say = (line: string) => process.stdout.write(`${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

if (!existsSync(prismBin)) {
  say('[prism] installing Prism into tools/prism (npm ci)')
  const install = spawnSync('npm', ['ci', '--prefix', prismDir, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: 'inherit' })
  if (install.status !== 0) throw new Error('npm ci in tools/prism failed')
}

const mariadb = await startMariaDb()
const children: ChildProcess[] = []
let database: TestDatabase | undefined

/** Stops Prism and the service (SIGTERM, then SIGKILL after 5 s) and drops the database. */
async function stopChildren(): Promise<void> {
  await Promise.all(children.map(async (child) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await exited
    clearTimeout(timer)
  }))
  await database?.drop().catch(() => undefined)
  database = undefined
}
stopOnExit(mariadb, stopChildren)

// The test helpers find the server through the variables scripts/test.ts sets.
const readerPassword = 'prism-reader-password'
await mariadb.adminQuery(`CREATE USER 'bc_reader'@'%' IDENTIFIED BY '${readerPassword}'; GRANT SELECT ON *.* TO 'bc_reader'@'%';`)
Object.assign(process.env, {
  TEST_DB_HOST: mariadb.host, TEST_DB_PORT: String(mariadb.port), TEST_DB_SOCKET: mariadb.socketPath,
  TEST_DB_READER_USER: 'bc_reader', TEST_DB_READER_PASSWORD: readerPassword,
})
database = await createTestDatabase('prism')
await loadSite(database)
await database.insert('booking_calendar_disabled_times', [
  { id: 1, service_id: 0, rule_type: 'weekly', weekday: 1, time_from: '18:00:00', time_to: '08:00:00', note: 'After hours' },
  { id: 2, service_id: HAIRCUT, rule_type: 'weekly', weekday: 1, time_from: '12:00:00', time_to: '13:00:00', note: 'Lunch' },
  { id: 3, service_id: 0, rule_type: 'date', date_from: '2026-12-24', date_to: '2026-12-26', note: 'Christmas' },
  { id: 4, service_id: STRIZHKA, rule_type: 'weekly', weekday: 6, time_from: '14:00:00', time_to: '24:00:00', note: 'Саббат 🌙' },
])
// A legacy row on the zero date, the one case where start is null.
await database.admin.query(`SET SESSION sql_mode = ''`)
await database.insert('booking_calendar_bookings', [{
  id: 117, service_id: HAIRCUT, status: 'booked', booking_date: '0000-00-00', time_from: '09:00:00', time_to: '10:00:00',
  customer_name: 'Customer 117', customer_email: 'c117@example.com', customer_phone: '+49 30 117', note: 'legacy zero day', created_at: '2026-11-21 15:00:00',
}])
await database.admin.query(`SET SESSION sql_mode = DEFAULT`)

const servicePort = await findFreePort()
const prismPort = await findFreePort()

function start(command: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: string[] } {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  const output: string[] = []
  const keep = (chunk: Buffer) => { for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) output.push(line) }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  return { child, output }
}

async function waitFor(what: string, ready: () => Promise<boolean>, child: ChildProcess, output: string[]): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited during start-up:\n${output.slice(-20).join('\n')}`)
    if (await ready()) return
    await sleep(200)
  }
  throw new Error(`${what} did not start within ${START_TIMEOUT_MS / 1000} s:\n${output.slice(-20).join('\n')}`)
}

const service = start(process.execPath, ['--import', 'tsx', `${root}server/main.ts`], {
  ...process.env,
  DATABASE_URL: `mysql://bc_reader:${readerPassword}@127.0.0.1:${mariadb.port}/${database.name}`,
  TABLE_PREFIX: database.prefix, PORT: String(servicePort), WORKERS: '1', LOG_LEVEL: 'warn', EXPOSE_CUSTOMER_DATA: 'true',
})
await waitFor('the service', () => fetch(`http://127.0.0.1:${servicePort}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((res) => res.ok, () => false), service.child, service.output)

// Prism forwards its path below the upstream's path, so /slots goes to the service's
// /wp-json/booking-calendar/v1/slots. --cors false: OPTIONS and the CORS headers are the service's own.
async function startPrism(document: string, port: number): Promise<{ child: ChildProcess; output: string[] }> {
  const started = start(prismBin, [
    'proxy', document, `http://127.0.0.1:${servicePort}${NAMESPACE}`, '--errors', '--port', String(port), '--host', '127.0.0.1', '--cors', 'false',
  ], { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' })
  const listening = () => new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
  await waitFor('Prism', listening, started.child, started.output)
  return started
}

// First a check that Prism's verdicts can fail at all: a copy of the document
// that says `total` is a string must make Prism report the answer.
const scratch = mkdtempSync(join(tmpdir(), 'bc-prism-'))
let canaryCaught: boolean
try {
  const broken = JSON.parse(readFileSync(`${root}openapi.json`, 'utf8')) as { components: { schemas: { SlotsAnswer: { properties: { total: unknown } } } } }
  broken.components.schemas.SlotsAnswer.properties.total = { type: 'string' }
  writeFileSync(join(scratch, 'broken.json'), JSON.stringify(broken))
  const canaryPort = await findFreePort()
  const canary = await startPrism(join(scratch, 'broken.json'), canaryPort)
  const res = await fetch(`http://127.0.0.1:${canaryPort}/slots?flat&per_page=1`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  await res.arrayBuffer()
  const violations = res.headers.get('sl-violations') ?? ''
  canaryCaught = violations.includes('total')
  say(`[prism] self-check: a document saying total is a string -> ${res.status}, sl-violations: ${violations || 'none'}`)
  canary.child.kill('SIGTERM')
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
if (!canaryCaught) throw new Error('Prism did not report a document that contradicts the answers: its verdicts below would prove nothing')

const prism = await startPrism(`${root}openapi.json`, prismPort)

interface Case { method: 'GET' | 'HEAD' | 'OPTIONS'; path: string; accept?: string }
const get = (path: string, accept?: string): Case => ({ method: 'GET', path, accept })

// Paths are the document's (Prism adds the namespace). The issue's cases first.
const VALID: Case[] = [
  get('/slots?flat=1'), get('/slots?flat=TRUE'), get('/slots?flat=0'), get('/slots?flat'), get('/slots?flat='),
  get('/slots?status=Pending'), get('/slots?status=pending,%20booked&flat'), get('/slots?status[]=booked&status[]=reject'),
  get('/slots?format=CSV'), get('/slots?format=csv&_fields=id,customer.email'),
  get('/slots/'), get('/slots/?flat'), get('/disabled-time/'), get('/summary/'), get('/openapi.json/'),
  { method: 'HEAD', path: '/slots' }, { method: 'HEAD', path: '/slots/?flat' }, { method: 'HEAD', path: '/slots?format=csv' }, { method: 'HEAD', path: '/disabled-time' }, { method: 'HEAD', path: '/' },
  { method: 'OPTIONS', path: '/slots' }, { method: 'OPTIONS', path: '/summary/' }, { method: 'OPTIONS', path: '/' }, { method: 'OPTIONS', path: '/openapi.json' },
  get('/slots?_fields=id,customer.email&flat'), get('/slots?_fields=id,customer'), get('/slots?_fields=nope&flat'),
  get('/slots'), get('/slots?flat&start=2026-11-24&end=2026-11-25'), get('/slots?start=24.11.2026&end=25/11/2026'),
  get('/slots?flat&filter_by=created_date&start=2026-11-21&end=2026-11-21'),
  get('/slots?service=haircut&per_page=2&page=2'), get('/slots?service=%D1%81%D1%82%D1%80%D0%B8%D0%B6%D0%BA%D0%B0&flat'),
  get('/slots?per_page=1000'), get('/slots', 'text/csv'), get('/slots', 'text/csv;q=0, application/json'),
  get('/slots?format=ics'), get('/slots?format=ICS&service=haircut'), get('/slots', 'text/calendar'),
  get('/disabled-time'), get('/disabled-time?service=haircut&start=2026-12-01&end=2026-12-31'), get('/disabled-time?_fields=rule_id,start'),
  get('/disabled-time?format=ics&start=2026-12-01&end=2026-12-31'),
  get('/summary'), get('/summary?group_by=week,service,status&start=2026-11-01&end=2026-11-30'), get('/summary?group_by=day&_fields=bookings&start=2026-11-24&end=2026-11-26'),
  get('/summary?format=csv&start=2026-11-01&end=2026-11-30'), get('/summary?filter_by=created_date&group_by=status&start=2026-11-01&end=2026-11-30'),
  get('/'), get('/openapi.json'),
]

// Requests the service refuses: some the document can refuse (Prism answers 422 itself),
// some only the service can (31.02.2026, start after end), answered 400 through Prism.
const INVALID: Case[] = [
  get('/slots?flat=yes'), get('/slots?per_page=1001'), get('/slots?status=booked,maybe'), get('/slots?format=xml'),
  get('/slots?start=31.02.2026'), get('/slots?start=2026-12-01&end=2026-11-01'), get('/slots?page=2'), get('/summary?group_by='),
  get('/disabled-time?start=x'),
]

interface Outcome { status: number | string; violations: string[]; logged: string[]; prismLimit?: string }

/** A request fails the run at once when the service or Prism is gone (a crash, or Ctrl-C reaching the process group). */
function assertRunning(): void {
  for (const [name, child] of [['the service', service.child], ['Prism', prism.child]] as const) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} stopped during the run (${child.signalCode ?? `exit ${child.exitCode}`})`)
  }
}

async function send(test: Case): Promise<Outcome> {
  assertRunning()
  const logFrom = prism.output.length
  const outcome = await sendThroughPrism(test)
  // Prism's own log of this request. In proxy mode it logs a refused request or an
  // answer it could not read as an error (✖); answer violations go to sl-violations only.
  await sleep(30)
  for (const logLine of prism.output.slice(logFrom)) {
    if (logLine.includes('✖')) outcome.logged.push(`log: ${logLine.replace(/^.*?✖\s+error\s+/, '')}`)
  }
  return outcome
}

async function sendThroughPrism(test: Case): Promise<Outcome> {
  try {
    const res = await fetch(`http://127.0.0.1:${prismPort}${test.path}`, {
      method: test.method, headers: test.accept ? { accept: test.accept } : {}, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    const body = await res.text()
    const header = res.headers.get('sl-violations')
    const violations = header ? (JSON.parse(header.replace(/^Too many violations! /, '')) as { location?: string[]; message: string }[])
      .map((v) => `${(v.location ?? []).join('.')}: ${v.message}`) : []
    // Prism's own refusal (422) lists what it refused in the body rather than the header.
    if (res.status === 422 && res.headers.get('content-type')?.includes('problem+json')) {
      const problem = JSON.parse(body) as { detail?: string; validation?: { location?: string[]; message: string }[] }
      for (const v of problem.validation ?? []) violations.push(`${(v.location ?? []).join('.')}: ${v.message}`)
      if (violations.length === 0 && problem.detail) violations.push(problem.detail)
    }
    // Prism reads a JSON answer's body even for HEAD, where HTTP sends none, and
    // answers 500 (its utils/parseResponse.js). Then the service is asked directly.
    if (test.method === 'HEAD' && res.status === 500) {
      const direct = await fetch(`http://127.0.0.1:${servicePort}${NAMESPACE}${test.path}`, { method: 'HEAD', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
      return { status: res.status, violations, logged: [], prismLimit: `Prism cannot proxy HEAD of a JSON answer; the service itself: ${direct.status} ${direct.headers.get('content-type')}` }
    }
    return { status: res.status, violations, logged: [] }
  } catch (error) {
    return { status: error instanceof Error ? error.name : 'error', violations: [], logged: [] }
  }
}

const violated = (outcome: Outcome) => outcome.violations.length > 0 || outcome.logged.length > 0
const verdict = (outcome: Outcome) => (outcome.prismLimit ? 'PRISM-BUG' : violated(outcome) ? 'VIOLATION' : 'clean    ')
const line = (test: Case, outcome: Outcome) =>
  `${String(outcome.status).padEnd(4)} ${verdict(outcome)} ${test.method.padEnd(7)} ${test.path}${test.accept ? `  [Accept: ${test.accept}]` : ''}` +
  [...outcome.violations, ...outcome.logged, ...(outcome.prismLimit ? [outcome.prismLimit] : [])].map((v) => `\n           ${v}`).join('')

let exitCode = 0
try {
  say(`[prism] Prism ${prismVersion()} on 127.0.0.1:${prismPort} -> the service on 127.0.0.1:${servicePort}${NAMESPACE}`)
  say('')
  say('valid requests (status through Prism, Prism\'s verdict):')
  let passed = 0
  let prismBugs = 0
  for (const test of VALID) {
    const outcome = await send(test)
    const ok = typeof outcome.status === 'number' && outcome.status < 300 && !violated(outcome)
    if (ok) passed++
    if (outcome.prismLimit) prismBugs++
    say(line(test, outcome))
  }
  say('')
  say('invalid requests:')
  let answered400 = 0
  let refusedByPrism = 0
  for (const test of INVALID) {
    const outcome = await send(test)
    if (outcome.status === 400 && !violated(outcome)) answered400++
    if (outcome.status === 422) refusedByPrism++
    say(line(test, outcome))
  }
  say('')
  say(`Prism's log holds ${prism.output.filter((l) => l.includes('✖')).length} error line(s) in all.`)
  say('')
  say(`${passed} of ${VALID.length} valid requests passed Prism, ${answered400} invalid requests answered 400` +
    ` (${refusedByPrism} more refused by Prism itself with 422, of ${INVALID.length} invalid)` +
    (prismBugs > 0 ? `; ${prismBugs} HEAD requests of JSON answers Prism cannot proxy (500 from Prism itself)` : ''))
  // A HEAD Prism cannot proxy is Prism's failure, not the document's or the service's.
  if (passed + prismBugs !== VALID.length || answered400 + refusedByPrism !== INVALID.length) exitCode = 1
} finally {
  await stopChildren()
  await mariadb.stop()
}
process.exit(exitCode)

function prismVersion(): string {
  const result = spawnSync(prismBin, ['--version'], { encoding: 'utf8' })
  return result.stdout.trim()
}
