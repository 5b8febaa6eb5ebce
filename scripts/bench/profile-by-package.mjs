// Self time of a `node --cpu-prof` profile per request, summed by where the
// code comes from: an npm package, a part of Node, a file of ours, the
// garbage collector, or V8's builtins and native code. Then the functions with
// the most self time. For two profiles of the same load (the service and the
// bench's floor, say) side by side: where one spends what the other does not
// (scripts/bench/README.md, thirteenth pass).
//
//   node scripts/bench/profile-by-package.mjs <file.cpuprofile> <requests> [functions to list]
//
// Startup (module loading, compiling) is in the profile too: run enough
// requests that it stays small, or subtract it.
import { readFileSync } from 'node:fs'

const [file, requestsText, topText = '30'] = process.argv.slice(2)
if (!file || !requestsText) {
  console.error('usage: node scripts/bench/profile-by-package.mjs <file.cpuprofile> <requests> [functions to list]')
  process.exit(2)
}
const profile = JSON.parse(readFileSync(file, 'utf8'))
const requests = Number(requestsText)
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))

// Each sample's time is the delta to the next sample's timestamp.
const selfTime = new Map()
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]
  selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0))
}

/** Where a function's code comes from. */
function originOf({ url, functionName }) {
  if (functionName === '(garbage collector)' || functionName === '(idle)' || functionName === '(program)') return functionName
  if (!url) return 'V8 builtins and native code (writev, ...)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return `npm ${pkg[1]}`
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/').slice(0, 2).join('/')}`
  return `ours ${url.split('/').slice(-2).join('/')}`
}

const byOrigin = new Map()
const byFunction = new Map()
for (const [id, micros] of selfTime) {
  const frame = nodes.get(id).callFrame
  const origin = originOf(frame)
  byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + micros)
  const name = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`
  if (origin !== '(idle)') byFunction.set(name, (byFunction.get(name) ?? 0) + micros)
}

const perRequest = (micros) => (micros / requests).toFixed(1).padStart(8)
const busy = [...byOrigin].reduce((sum, [origin, micros]) => (origin === '(idle)' ? sum : sum + micros), 0)
console.log(`${perRequest(busy)} µs a request busy (${requests} requests)`)
console.log()
console.log('µs a request, by origin:')
for (const [origin, micros] of [...byOrigin].sort((a, b) => b[1] - a[1])) {
  if (origin !== '(idle)' && micros / requests >= 1) console.log(`${perRequest(micros)}  ${origin}`)
}
console.log()
console.log('µs a request, by function:')
for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(topText))) console.log(`${perRequest(micros)}  ${name}`)
