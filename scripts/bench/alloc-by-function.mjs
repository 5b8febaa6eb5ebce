// Bytes allocated per request, by the function that allocated them, from a
// sampling heap profile that counted collected objects too (alloc-sampling.mjs).
// V8 credits what an inlined function allocates to the function it was inlined
// into, so read the names as "in or under".
//
//   node scripts/bench/alloc-by-function.mjs <file.heapprofile> <requests> [functions to list]
import { readFileSync } from 'node:fs'

const [file, requestsText, topText = '30'] = process.argv.slice(2)
if (!file || !requestsText) {
  console.error('usage: node scripts/bench/alloc-by-function.mjs <file.heapprofile> <requests> [functions to list]')
  process.exit(2)
}
const requests = Number(requestsText)
const bytes = new Map()
let total = 0
const walk = (node) => {
  const frame = node.callFrame
  const name = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`
  bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize)
  total += node.selfSize
  for (const child of node.children) walk(child)
}
walk(JSON.parse(readFileSync(file, 'utf8')).head)
console.log(`${Math.round(total / requests).toLocaleString('en')} bytes allocated a request (${requests} requests)`)
for (const [name, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, Number(topText))) {
  console.log(`${Math.round(size / requests).toLocaleString('en').padStart(8)}  ${name}`)
}
