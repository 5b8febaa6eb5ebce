// The DDL of db/schema.sql for a given table prefix (tests, the demo, the benchmark).
import { readFileSync } from 'node:fs'

export function schemaSql(prefix: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(prefix)) throw new Error(`not a table prefix: ${prefix}`)
  return readFileSync(new URL('./schema.sql', import.meta.url), 'utf8').replaceAll('{prefix}', prefix)
}

/** Only the plugin's two tables: beside a real WordPress, which creates posts and options itself. */
export function pluginTablesSql(prefix: string, options: { ifMissing?: boolean } = {}): string {
  const sql = schemaSql(prefix).split(';').filter((statement) => /CREATE TABLE \w*booking_calendar_/.test(statement)).join(';\n')
  return options.ifMissing ? sql.replaceAll('CREATE TABLE ', 'CREATE TABLE IF NOT EXISTS ') : sql
}
