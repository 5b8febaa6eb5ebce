// Debian packages the tests, the demo and the benchmark need, installed when
// missing: CI machines have only Node and npm, and run as root.
import { spawnSync } from 'node:child_process'

/** apt-get update, then install `packages` without recommends; `why` names them in the messages. */
export function aptInstall(packages: string[], why: string): void {
  if (process.getuid?.() !== 0) {
    throw new Error(`${why} is missing; install it with: sudo apt-get install -y --no-install-recommends ${packages.join(' ')}`)
  }
  process.stderr.write(`[apt] ${why} is missing: installing Debian's ${packages.join(', ')} (once)\n`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...packages]]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env })
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed with exit code ${result.status}`)
  }
}
