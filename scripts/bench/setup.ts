// What the bench's smaller scripts (profile-export.ts)
// start with: the built service, a private MariaDB holding the bench's data and
// indexes, stopped on exit together with the children they start; and a wait
// for a started service to be ready; a process's CPU so far; the statement
// the service sends for one of the bench's queries.
import { spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startMariaDb, stopOnExit, type MariaDbServer } from '../mariadb.ts'
import { addRecommendedIndexes, createBenchDatabase, writeDirtyPages } from './dataset.ts'

const repo = new URL('../../', import.meta.url).pathname

export interface BenchDatabase {
  mariadb: MariaDbServer
  /** Processes to SIGKILL when the script ends, however it ends. */
  children: Set<ChildProcess>
  loadMs: number
}

export async function startBenchDatabase(): Promise<BenchDatabase> {
  if (spawnSync(join(repo, 'node_modules/.bin/tsc'), ['-p', join(repo, 'tsconfig.build.json')], { stdio: 'inherit' }).status !== 0) throw new Error('build failed')
  const mariadb = await startMariaDb({ bufferPoolMb: 1024 })
  const children = new Set<ChildProcess>()
  stopOnExit(mariadb, () => { for (const child of children) child.kill('SIGKILL') })
  const loadMs = await createBenchDatabase(mariadb)
  await addRecommendedIndexes(mariadb)
  await writeDirtyPages(mariadb)
  return { mariadb, children, loadMs }
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The statement (text and values) the service sends for the bench query `key`, as raw-sql.ts prints it. */
export function benchStatement(key: string, readerDb: object): { sql: string; values: unknown[] } {
  const raw = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'scripts/bench/raw-sql.ts'), key, 'sql'], {
    encoding: 'utf8', env: { ...process.env, BENCH_DB: JSON.stringify(readerDb) },
  })
  return JSON.parse(raw.stdout.trim().split('\n').at(-1)!) as { sql: string; values: unknown[] }
}

/** Polls `${url}/readyz` every 100 ms until it answers 200 and `also()` holds; gives up after 20 s. */
export async function waitUntilReady(url: string, also: () => boolean = () => true): Promise<void> {
  for (let i = 0; !(also() && await fetch(`${url}/readyz`).then((r) => r.ok, () => false)); i++) {
    if (i > 200) throw new Error('the service did not start')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
