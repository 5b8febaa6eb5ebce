// Issue 3's measurement: expanding 500 disabled-time rules over 731 days for
// all services, in process (no database, no HTTP), and writing the JSON.
// npm run bench:rules
import { cpus, totalmem } from 'node:os'
import { expandRules, periodFields, readRule, WallClock, type RuleRow, type ValidRule } from '../server/tools.ts'

const RULES = 500
const SERVICES = 50
const rows: RuleRow[] = []
for (let i = 0; i < RULES; i++) {
  const service = i % 10 === 0 ? 0 : 10 + (i % SERVICES)
  const kind = i % 5
  if (kind <= 2) {
    // Weekly hours; a third of them past midnight, some whole days.
    const pastMidnight = kind === 1
    rows.push({
      id: i + 1, service_id: service, rule_type: 'weekly', weekday: i % 7, date_from: i % 4 === 0 ? '2026-06-01' : null, date_to: null,
      time_from: kind === 2 && i % 3 === 0 ? null : pastMidnight ? '19:00:00' : '12:00:00',
      time_to: kind === 2 && i % 3 === 0 ? null : pastMidnight ? '08:00:00' : '13:00:00', note: 'weekly',
    })
  } else {
    // Days off and hours off on a few days.
    const day = 1 + (i % 27)
    const month = 1 + (i % 12)
    const year = 2026 + (i % 2)
    const from = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`
    rows.push({
      id: i + 1, service_id: service, rule_type: 'date', weekday: null, date_from: from, date_to: null,
      time_from: kind === 3 ? null : '13:00:00', time_to: kind === 3 ? null : '24:00:00', note: 'date',
    })
  }
}
const rules = rows.map(readRule).filter((r): r is ValidRule => !('problem' in r))
const range = { start: '2026-01-01', end: '2027-12-31' } // 730 days
const range731 = { start: '2026-01-01', end: '2028-01-01' } // 731 days, counting both ends

function run() {
  const started = process.hrtime.bigint()
  const periods = expandRules(rules, range731, new WallClock({ kind: 'iana', name: 'Europe/Berlin' }), (id) => `service-${id}`)
  const expandedNs = process.hrtime.bigint()
  const json = JSON.stringify({ disabled_times: periods.map(periodFields), start: range.start, end: range.end, timezone: 'Europe/Berlin', total: periods.length })
  const done = process.hrtime.bigint()
  return { periods: periods.length, bytes: Buffer.byteLength(json), expandMs: Number(expandedNs - started) / 1e6, jsonMs: Number(done - expandedNs) / 1e6 }
}

const first = run() // cold: the zone look-ups of a fresh WallClock, as on every request
const runs = Array.from({ length: 20 }, run)
const sorted = (key: 'expandMs' | 'jsonMs') => runs.map((r) => r[key]).sort((a, b) => a - b)
const median = (values: number[]) => values[Math.floor(values.length / 2)]!
const expand = sorted('expandMs')
const json = sorted('jsonMs')
console.log(`machine: ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`)
console.log(`rules: ${rules.length} (all valid), range: ${range731.start} to ${range731.end} (731 days), zone Europe/Berlin`)
console.log(`periods: ${first.periods}, JSON: ${(first.bytes / 2 ** 20).toFixed(1)} MiB`)
console.log(`first run:      expand ${first.expandMs.toFixed(1)} ms, JSON ${first.jsonMs.toFixed(1)} ms`)
console.log(`20 runs, median: expand ${median(expand).toFixed(1)} ms, JSON ${median(json).toFixed(1)} ms; worst expand ${expand.at(-1)!.toFixed(1)} ms`)
