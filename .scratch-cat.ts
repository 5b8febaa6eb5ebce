import { readFileSync } from 'node:fs'
const p = JSON.parse(readFileSync(process.argv[2]!, 'utf8'))
const self = new Map<number, number>(); p.samples.forEach((id: number, i: number) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)))
const by = new Map<string, number>(); let total = 0
for (const n of p.nodes) {
  const us = self.get(n.id) ?? 0; const u = n.callFrame.url as string; const f = n.callFrame.functionName
  if (['(idle)', 'writeBuffer', 'writev', '(program)'].includes(f)) continue
  total += us
  const m = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(u)
  const k = m ? m[1]! : u.includes('/dist/') ? u.replace(/^.*\/dist\//, 'dist/') : u.startsWith('node:') ? 'node:' + u.slice(5).split('/').slice(0, 2).join('/') : f.startsWith('(') ? f : 'native:' + f
  by.set(k, (by.get(k) ?? 0) + us)
}
for (const [k, us] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((100 * us / total).toFixed(1).padStart(5), k)
