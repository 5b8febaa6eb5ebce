// npm test: typecheck, start a private MariaDB (installing Debian's
// mariadb-server when mariadbd is missing), run every test against it with a
// SELECT-only account, and stop the server afterwards, also when tests fail.
import { spawn, spawnSync } from 'node:child_process'
import { startMariaDb, stopOnExit } from './mariadb.ts'

const bin = (name: string) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname

const typecheck = spawnSync(bin('tsc'), ['-p', 'tsconfig.json', '--noEmit'], { stdio: 'inherit' })
if (typecheck.status !== 0) {
  process.stderr.write('typecheck failed\n')
  process.exit(1)
}

const server = await startMariaDb()
let mocha: ReturnType<typeof spawn> | undefined
stopOnExit(server, () => { mocha?.kill('SIGTERM') })

const readerPassword = 'reader-password-for-tests'
await server.adminQuery(`
  CREATE USER 'bc_reader'@'%' IDENTIFIED BY '${readerPassword}';
  GRANT SELECT ON *.* TO 'bc_reader'@'%';
`)

const files = process.argv.slice(2)
mocha = spawn(bin('mocha'), files.length > 0 ? files : ['tests/unit/**/*.test.ts', 'tests/integration/**/*.test.ts'], {
  stdio: 'inherit',
  env: {
    ...process.env,
    TEST_DB_HOST: server.host,
    TEST_DB_PORT: String(server.port),
    TEST_DB_SOCKET: server.socketPath,
    TEST_DB_READER_USER: 'bc_reader',
    TEST_DB_READER_PASSWORD: readerPassword,
  },
})
const code: number = await new Promise((resolve) => mocha!.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))))
await server.stop()
process.exit(code)
