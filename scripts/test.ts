// npm test: typecheck, lint, the layering check, the docs check, start a private MariaDB (installing Debian's
// mariadb-server when mariadbd is missing), run every test against it with a
// SELECT-only account, and stop the server afterwards, also when tests fail.
// TEST_DATABASE_URL=mysql://root:pw@host:3306 runs them against that server instead
// (a MySQL of CI, say): the suites marked needsOwnDatabaseServer are skipped, and say so.
import { spawn, spawnSync } from 'node:child_process'
import mysql from 'mysql2/promise'
import { startMariaDb, stopOnExit } from './mariadb.ts'

const bin = (name: string) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname
const files = process.argv.slice(2)

const typecheck = spawnSync(bin('tsc'), ['-p', 'tsconfig.json', '--noEmit'], { stdio: 'inherit' })
if (typecheck.status !== 0) {
  process.stderr.write('typecheck failed\n')
  process.exit(1)
}
if (files.length > 0) {
  // `npm test -- FILE…` runs those test files alone: the typecheck, then mocha, without lint, the layering check and the docs check.
  process.stderr.write('[test] only the named files: lint, the layering check and the docs check are skipped (the full `npm test` runs them)\n')
} else {
  // Lint and format (eslint.config.mjs): typescript-eslint's type-checked rules and the house style.
  const lint = spawnSync(bin('eslint'), ['.'], { stdio: 'inherit' })
  if (lint.status !== 0) {
    process.stderr.write('lint failed: npm run format fixes the style; the rest says what to change\n')
    process.exit(1)
  }
  // The layering check (.dependency-cruiser.cjs): no import circle, no import against the floors.
  const layers = spawnSync(bin('depcruise'), ['server', 'db', 'scripts', 'tests', '--config', '.dependency-cruiser.cjs'], { stdio: 'inherit' })
  if (layers.status !== 0) {
    process.stderr.write('layering check failed\n')
    process.exit(1)
  }
  // The docs check (scripts/check-docs.ts): links, anchors, configuration.md, api.md and code comments against the code.
  const docs = spawnSync(bin('tsx'), ['scripts/check-docs.ts'], { stdio: 'inherit' })
  if (docs.status !== 0) {
    process.stderr.write('docs check failed: each line above names the file, the line and the fix (npm run check-docs runs it alone)\n')
    process.exit(1)
  }
}

let mocha: ReturnType<typeof spawn> | undefined
const readerPassword = 'reader-password-for-tests'
const external = process.env.TEST_DATABASE_URL
/** Where the tests' databases live: the private MariaDB (root over its socket), or TEST_DATABASE_URL's server. */
let serverEnv: Record<string, string>
let stopServer = async () => {}
if (external) {
  // An account that may create databases and users (root of a CI service container): each test
  // file makes its database through it, and the service reads through a SELECT-only account made here.
  const url = new URL(external)
  process.stderr.write(`[test] TEST_DATABASE_URL: the data tests run against ${url.hostname}:${url.port || 3306}; the tests that stop, kill or freeze a server, or start their own, are skipped\n`)
  const admin = await mysql.createConnection({ uri: external, multipleStatements: true })
  try {
    const [[{ version }]] = await admin.query('SELECT VERSION() AS version') as unknown as [[{ version: string }]]
    process.stderr.write(`[test] the server says it is ${version}\n`)
    await admin.query("DROP USER IF EXISTS 'bc_reader'@'%'")
    await admin.query(`CREATE USER 'bc_reader'@'%' IDENTIFIED BY '${readerPassword}'`)
    await admin.query("GRANT SELECT ON *.* TO 'bc_reader'@'%'")
  } finally {
    await admin.end()
  }
  serverEnv = { TEST_DB_HOST: url.hostname, TEST_DB_PORT: url.port || '3306', TEST_DB_ADMIN_URL: external }
} else {
  const server = await startMariaDb()
  stopOnExit(server, () => { mocha?.kill('SIGTERM') })
  await server.adminQuery(`
    CREATE USER 'bc_reader'@'%' IDENTIFIED BY '${readerPassword}';
    GRANT SELECT ON *.* TO 'bc_reader'@'%';
  `)
  serverEnv = { TEST_DB_HOST: server.host, TEST_DB_PORT: String(server.port), TEST_DB_SOCKET: server.socketPath }
  stopServer = () => server.stop()
}
function runMocha(args: string[], env: Record<string, string> = {}): Promise<number> {
  mocha = spawn(bin('mocha'), args, {
    stdio: 'inherit',
    env: {
      ...process.env,
      ...serverEnv,
      TEST_DB_READER_USER: 'bc_reader',
      TEST_DB_READER_PASSWORD: readerPassword,
      // Every compiled query is also built afresh and compared (db/compiled-shapes.ts).
      BC_VERIFY_COMPILED_SHAPES: '1',
      ...env,
    },
  })
  return new Promise((resolve) => mocha!.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))))
}

// One run: the answers under the fast paths' switches (ROWS_AS_BYTES, SQL_SHAPE_CACHE) and every other
// setting are compared with the reference's by tests/integration/differential.test.ts.
const code = await runMocha(files.length > 0 ? files : ['tests/unit/**/*.test.ts', 'tests/integration/**/*.test.ts'])
await stopServer()
process.exit(code)
