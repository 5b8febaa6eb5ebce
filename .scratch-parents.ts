import { readFileSync } from 'node:fs'
const [file, fn] = process.argv.slice(2)
const p = JSON.parse(readFileSync(file!, 'utf8'))
const parent = new Map<number, number>(); const byId = new Map<number, any>()
for (const n of p.nodes) { byId.set(n.id, n); for (const c of n.children ?? []) parent.set(c, n.id) }
const self = new Map<number, number>(); p.samples.forEach((id: number, i: number) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)))
const stacks = new Map<string, number>()
for (const n of p.nodes) {
  if (n.callFrame.functionName !== fn) continue
  const chain: string[] = []; let id = parent.get(n.id)
  while (id !== undefined && chain.length < 8) { const m = byId.get(id); chain.push(`${m.callFrame.functionName || 'anon'}@${m.callFrame.url.split('/').slice(-2).join('/')}:${m.callFrame.lineNumber + 1}`); id = parent.get(id) }
  const k = chain.join(' < '); stacks.set(k, (stacks.get(k) ?? 0) + (self.get(n.id) ?? 0))
}
for (const [k, us] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log((us / 1000).toFixed(0), 'ms', k)
