// npm test: typecheck, lint, the layering check, the docs check, start a private MariaDB (installing Debian's
// mariadb-server when mariadbd is missing), run every test against it with a
// SELECT-only account, and stop the server afterwards, also when tests fail.
// TEST_DATABASE_URL=mysql://root:pw@host:3306 runs them against that server instead
// (a MySQL of CI, say): the suites marked needsOwnDatabaseServer are skipped, and say so.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'
import { startMariaDb, stopOnExit } from './mariadb.ts'

const bin = (name: string) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname
const files = process.argv.slice(2)

/**
 * Test files that mostly wait (for timers, for processes they start) and that
 * no other test's general-log reading may see: they run beside the rest, in a
 * second mocha, with a reader account of their own (readerStatementsDuring and
 * readerQueries filter by the account). This keeps npm test under ten minutes.
 */
const SECOND_LANE = ['tests/integration/steady-readers.test.ts', 'tests/integration/shutdown.test.ts']

/** A command's exit code, its output kept and shown only when it fails (the checks run side by side). */
function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }))
  })
}

const CHECKS: Array<{ name: string; command: string; args: string[]; failed: string }> = [
  { name: 'typecheck', command: bin('tsc'), args: ['-p', 'tsconfig.json', '--noEmit'], failed: 'typecheck failed' },
  // Lint and format (eslint.config.mjs): typescript-eslint's type-checked rules and the house style.
  { name: 'lint', command: bin('eslint'), args: ['.'], failed: 'lint failed: npm run format fixes the style; the rest says what to change' },
  // The layering check (.dependency-cruiser.cjs): no import circle, no import against the floors.
  { name: 'layers', command: bin('depcruise'), args: ['server', 'db', 'scripts', 'tests', '--config', '.dependency-cruiser.cjs'], failed: 'layering check failed' },
  // The docs check (scripts/check-docs.ts): links, anchors, configuration.md, api.md and code comments against the code.
  { name: 'docs', command: bin('tsx'), args: ['scripts/check-docs.ts'], failed: 'docs check failed: each line above names the file, the line and the fix (npm run check-docs runs it alone)' },
]
// `npm test -- FILE…` runs those test files alone: the typecheck, then mocha, without lint, the layering check and the docs check.
const checks = files.length > 0 ? CHECKS.slice(0, 1) : CHECKS
if (files.length > 0) process.stderr.write('[test] only the named files: lint, the layering check and the docs check are skipped (the full `npm test` runs them)\n')
const results = await Promise.all(checks.map((check) => run(check.command, check.args)))
let checksFailed = false
results.forEach((result, i) => {
  if (result.code === 0) return
  process.stderr.write(`${result.output}${checks[i]!.failed}\n`)
  checksFailed = true
})
if (checksFailed) process.exit(1)
process.stderr.write(`[test] ${checks.map((check) => check.name).join(', ')}: passed\n`)

const mochas = new Set<ReturnType<typeof spawn>>()
const readerPassword = 'reader-password-for-tests'
/** The accounts the tests read through: the first lane's, and the second lane's own. */
const READERS = ['bc_reader', 'bc_reader_lane2']
/** An account that may also read the binary log (REPLICATION SLAVE, BINLOG MONITOR: no writes), for changes/'s log source. */
const LOG_READER = 'bc_log_reader'
const external = process.env.TEST_DATABASE_URL
/** Where the tests' databases live: the private MariaDB (root over its socket), or TEST_DATABASE_URL's server. */
let serverEnv: Record<string, string>
let stopServer = async () => {}
if (external) {
  // An account that may create databases and users (root of a CI service container): each test
  // file makes its database through it, and the service reads through SELECT-only accounts made here.
  const url = new URL(external)
  process.stderr.write(`[test] TEST_DATABASE_URL: the data tests run against ${url.hostname}:${url.port || 3306}; the tests that stop, kill or freeze a server, or start their own, are skipped\n`)
  const admin = await mysql.createConnection({ uri: external, multipleStatements: true })
  try {
    const [[{ version }]] = await admin.query('SELECT VERSION() AS version') as unknown as [[{ version: string }]]
    process.stderr.write(`[test] the server says it is ${version}\n`)
    for (const reader of READERS) {
      await admin.query(`DROP USER IF EXISTS '${reader}'@'%'`)
      await admin.query(`CREATE USER '${reader}'@'%' IDENTIFIED BY '${readerPassword}'`)
      await admin.query(`GRANT SELECT ON *.* TO '${reader}'@'%'`)
    }
  } finally {
    await admin.end()
  }
  serverEnv = { TEST_DB_HOST: url.hostname, TEST_DB_PORT: url.port || '3306', TEST_DB_ADMIN_URL: external }
} else {
  // With a binary log as changes/'s log source reads it (API.md, "GET changes/"): the differential suite
  // runs a service in that source beside the others, through an account that may read the log.
  const server = await startMariaDb({ serverOptions: ['--log-bin=bc-test-bin', '--server-id=1', '--binlog-format=ROW', '--binlog-row-image=FULL', '--binlog-row-metadata=FULL'] })
  stopOnExit(server, () => { for (const mocha of mochas) mocha.kill('SIGTERM') })
  for (const reader of READERS) {
    await server.adminQuery(`
      CREATE USER '${reader}'@'%' IDENTIFIED BY '${readerPassword}';
      GRANT SELECT ON *.* TO '${reader}'@'%';
    `)
  }
  await server.adminQuery(`
    CREATE USER '${LOG_READER}'@'%' IDENTIFIED BY '${readerPassword}';
    GRANT SELECT ON *.* TO '${LOG_READER}'@'%';
    GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '${LOG_READER}'@'%';
  `)
  serverEnv = { TEST_DB_HOST: server.host, TEST_DB_PORT: String(server.port), TEST_DB_SOCKET: server.socketPath, TEST_DB_LOG_READER_USER: LOG_READER }
  stopServer = () => server.stop()
}

/** One mocha over `args`, reading through `reader`; its output to ours, or to `outputFile` to be shown after. */
function runMocha(args: string[], reader: string, outputFile?: string): Promise<number> {
  const output = outputFile === undefined ? 'inherit' : 'pipe'
  const mocha = spawn(bin('mocha'), args, {
    stdio: ['ignore', output, output],
    env: {
      ...process.env,
      ...serverEnv,
      TEST_DB_READER_USER: reader,
      TEST_DB_READER_PASSWORD: readerPassword,
      // Every compiled query is also built afresh and compared (db/compiled-shapes.ts).
      BC_VERIFY_COMPILED_SHAPES: '1',
    },
  })
  mochas.add(mocha)
  if (outputFile !== undefined) {
    const chunks: Buffer[] = []
    mocha.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk))
    mocha.stderr!.on('data', (chunk: Buffer) => chunks.push(chunk))
    mocha.on('close', () => { writeFileSync(outputFile, Buffer.concat(chunks)) })
  }
  return new Promise((resolve) => mocha.on('close', (exitCode, signal) => {
    mochas.delete(mocha)
    resolve(exitCode ?? (signal ? 1 : 0))
  }))
}

// One run: the answers under the fast paths' switches (ROWS_AS_BYTES, SQL_SHAPE_CACHE) and every other
// setting are compared with the reference's by tests/integration/differential.test.ts.
let code: number
if (files.length > 0) {
  code = await runMocha(files, READERS[0]!)
} else {
  const laneDir = mkdtempSync(join(tmpdir(), 'bc-test-lane2-'))
  const laneOutput = join(laneDir, 'output.txt')
  const everyFile = ['tests/unit/**/*.test.ts', 'tests/integration/**/*.test.ts', ...SECOND_LANE.map((file) => `--ignore=${file}`)]
  const [first, second] = await Promise.all([runMocha(everyFile, READERS[0]!), runMocha(SECOND_LANE, READERS[1]!, laneOutput)])
  process.stdout.write(`\nThe second lane, run beside the first (${SECOND_LANE.join(', ')}):\n`)
  process.stdout.write(readFileSync(laneOutput, 'utf8'))
  rmSync(laneDir, { recursive: true, force: true })
  code = first || second
}
await stopServer()
process.exit(code)
