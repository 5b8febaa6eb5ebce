import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, mkdtempSync } from 'node:fs'
import { request, Agent } from 'node:http'
import { join } from 'node:path'
const size = process.argv[2]!, key = process.argv[3] ?? 'a', prof = process.argv[4] === 'prof'
const info = JSON.parse(readFileSync(`/work/scratch/db-${size}.json`, 'utf8'))
const paths: Record<string, string> = { a: 'slots?service=1001&start=2026-03-01&end=2026-03-31', b: 'slots?status=pending,booked&start=2025-01-01&end=2025-12-31&flat' }
const { BENCH_QUERIES } = await import('./scripts/bench/queries.ts')
const path = '/wp-json/booking-calendar/v1/' + BENCH_QUERIES.find((q: any) => q.key === key)!.path
const dir = mkdtempSync('/tmp/bc-prof-')
const port = 40000 + Math.floor(Math.random() * 1000)
const child = spawn(process.execPath, [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), 'scripts/bench/profile-server.mjs'], {
  env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', DB_POOL_SIZE: '10', DATABASE_URL: `mysql://${info.user}:${info.password}@${info.host}:${info.port}/${info.database}` }, stdio: ['ignore', 'inherit', 'inherit'] })
for (let i = 0; !(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100))
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const once = () => new Promise<number>((resolve, reject) => {
  const t = process.hrtime.bigint()
  request({ host: '127.0.0.1', port, path, agent }, (res) => { res.on('data', () => {}); res.on('end', () => resolve(Number(process.hrtime.bigint() - t) / 1e6)) }).on('error', reject).end()
})
for (let i = 0; i < 200; i++) await once()
const cpu0 = (() => { const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return [Number(f[11]), Number(f[12])] })()
const lat: number[] = []; const end = Date.now() + Number(process.env.SECS ?? 5) * 1000
while (Date.now() < end) lat.push(await once())
const cpu1 = (() => { const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return [Number(f[11]), Number(f[12])] })()
lat.sort((a, b) => a - b)
console.log(`${key} at ${size}: ${lat.length} requests, p50 ${lat[lat.length >> 1]!.toFixed(3)} ms, user ${((cpu1[0] - cpu0[0]) * 10 / lat.length).toFixed(3)} sys ${((cpu1[1] - cpu0[1]) * 10 / lat.length).toFixed(3)} ms/request`)
child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r))
if (prof) {
  const file = join(dir, readdirSync(dir)[0]!)
  const p = JSON.parse(readFileSync(file, 'utf8'))
  const self = new Map<number, number>(); p.samples.forEach((id: number, i: number) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)))
  const by = new Map<string, number>(); let total = 0
  for (const n of p.nodes) { const us = self.get(n.id) ?? 0; total += us; const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${n.callFrame.lineNumber + 1}`; by.set(k, (by.get(k) ?? 0) + us) }
  for (const [k, us] of [...by].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 40))) console.log((100 * us / total).toFixed(1).padStart(5), k)
  console.log(file)
}
