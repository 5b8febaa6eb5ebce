// Runs before `npm run demo` and `npm test` (npm's pre-scripts), so each works on
// a fresh clone with nothing installed but Node: installs the locked
// dependencies when they are missing. Plain JavaScript: it runs before tsx exists.
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

const wanted = ['tsx', 'mocha', 'tsc'].map((name) => new URL(`../node_modules/.bin/${name}`, import.meta.url))
if (!wanted.every((bin) => existsSync(bin))) {
  process.stderr.write('[setup] installing dependencies (npm ci), once\n')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], {
    stdio: 'inherit', cwd: new URL('..', import.meta.url).pathname,
  })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
