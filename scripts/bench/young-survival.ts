// How much of V8's young generation survives each scavenge, for one route
// asked one request at a time: Express 5 as it is (app.listen), the service's
// createAppServer (server/http/app-server.ts), and node:http alone. Express
// gives each request and response its prototypes with Object.setPrototypeOf;
// what V8 then keeps alive is promoted, and only a mark-compact frees it
// (scripts/bench/README.md, tenth pass). Prints a Markdown table.
// Run after `npm run build`: npx tsx scripts/bench/young-survival.ts
import { fork } from 'node:child_process'
import { Agent, get } from 'node:http'
import { fileURLToPath } from 'node:url'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const SERVER = fileURLToPath(new URL('./young-survival-server.mjs', import.meta.url))
const KINDS = [
  ['express', 'Express 5, app.listen'],
  ['app-server', 'Express 5, createAppServer'],
  ['http', 'node:http alone'],
] as const

async function serialLoad(port: number, seconds: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const deadline = Date.now() + seconds * 1000
  let requests = 0
  while (Date.now() < deadline) {
    await new Promise<void>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/ok', agent }, (res) => res.resume().on('end', resolve).on('error', reject)).on('error', reject)
    })
    requests++
  }
  agent.destroy()
  return requests
}

console.log(`| server | requests in ${SECONDS} s | scavenges | young generation surviving each (median) | mark-compacts |`)
console.log('|---|---:|---:|---:|---:|')
for (const [kind, label] of KINDS) {
  const child = fork(SERVER, [], {
    env: { ...process.env, SERVER_KIND: kind },
    execArgv: ['--max-semi-space-size=4', '--trace-gc-nvp'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  let trace = ''
  child.stdout!.on('data', (chunk: Buffer) => { trace += chunk.toString('latin1') })
  const port = await new Promise<number>((resolve) => child.once('message', (message: { port: number }) => resolve(message.port)))
  await serialLoad(port, 1)
  const from = trace.length
  const requests = await serialLoad(port, SECONDS)
  const measured = trace.slice(from)
  child.kill()
  const scavenges = measured.split('\n').filter((line) => line.includes(' gc=s '))
  const survival = scavenges.map((line) => Number(/new_space_survive_rate_=([\d.]+)%/.exec(line)?.[1] ?? NaN)).sort((a, b) => a - b)
  const median = survival.length ? `${survival[survival.length >> 1]!.toFixed(1)} %` : '—'
  const markCompacts = measured.split('\n').filter((line) => line.includes(' gc=mc ')).length
  console.log(`| ${label} | ${requests} | ${scavenges.length} | ${median} | ${markCompacts} |`)
}
