// Two builds of the service (or any two URLs) timed one request at a time, in
// pairs: A then B, then B then A, and so on, each on its own keep-alive
// connection. The machine's speed here moves by up to 2× within minutes; two
// runs taken one after the other differ by more than a change worth 30 µs,
// while the two requests of a pair see the same machine. Prints each side's
// p50 and the median and quartiles of B - A over the pairs, in µs.
//
//   node scripts/bench/paired-serial.mjs <url A> <url B> [seconds]
//
// Start the two services first (scripts/bench/README.md, eleventh pass, has the commands).
import http from 'node:http'

const [urlA, urlB, secondsText = '6'] = process.argv.slice(2)
if (!urlA || !urlB) {
  console.error('usage: node scripts/bench/paired-serial.mjs <url A> <url B> [seconds]')
  process.exit(2)
}
const agents = [new http.Agent({ keepAlive: true, maxSockets: 1 }), new http.Agent({ keepAlive: true, maxSockets: 1 })]

/** One GET to its last byte, in µs; a status other than 200 fails the run. */
function timed(url, agent) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    http.get(url, { agent }, (res) => {
      res.on('data', () => {})
      res.on('end', () => (res.statusCode === 200
        ? resolve(Number(process.hrtime.bigint() - started) / 1e3)
        : reject(new Error(`${url}: ${res.statusCode}`))))
      res.on('error', reject)
    }).on('error', reject)
  })
}

for (let i = 0; i < 300; i++) {
  await timed(urlA, agents[0])
  await timed(urlB, agents[1])
}
const a = []
const b = []
const differences = []
const deadline = Date.now() + Number(secondsText) * 1000
for (let pair = 0; Date.now() < deadline; pair++) {
  // Each side goes first in every other pair, so neither always follows the other.
  let timeA
  let timeB
  if (pair % 2 === 0) {
    timeA = await timed(urlA, agents[0])
    timeB = await timed(urlB, agents[1])
  } else {
    timeB = await timed(urlB, agents[1])
    timeA = await timed(urlA, agents[0])
  }
  a.push(timeA)
  b.push(timeB)
  differences.push(timeB - timeA)
}
for (const agent of agents) agent.destroy()

const quantile = (values, p) => [...values].sort((x, y) => x - y)[Math.floor(values.length * p)]
console.log(JSON.stringify({
  pairs: a.length,
  p50A: Math.round(quantile(a, 0.5)),
  p50B: Math.round(quantile(b, 0.5)),
  medianBminusA: Math.round(quantile(differences, 0.5) * 10) / 10,
  q25: Math.round(quantile(differences, 0.25)),
  q75: Math.round(quantile(differences, 0.75)),
}))
