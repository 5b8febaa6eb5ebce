// Runs before `npm start` (npm's prestart): builds dist/ when it is missing or
// older than the sources, so `npm start` works on a fresh clone after `npm ci`.
// Where the sources are absent (the image has dist/ only) it does nothing.
// Plain JavaScript: it runs before anything is built.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const main = join(root, 'dist/server/main.js')
const sources = ['server', 'db', 'scripts/seed.ts', 'tsconfig.json', 'tsconfig.build.json'].map((path) => join(root, path))

/** The newest modification time of a file, or of any file under a directory. */
function newest(path) {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

if (!existsSync(join(root, 'server'))) process.exit(0)
if (existsSync(main) && statSync(main).mtimeMs >= Math.max(...sources.map(newest))) process.exit(0)
if (!existsSync(join(root, 'node_modules/.bin/tsc'))) {
  process.stderr.write('booking-calendar-api: dist/ is missing or older than the sources; run `npm ci`, then `npm start` again.\n')
  process.exit(1)
}
process.stderr.write('[start] building dist/ (npm run build), as it is missing or older than the sources\n')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const build = spawnSync(npm, ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
process.exit(build.status ?? 1)
