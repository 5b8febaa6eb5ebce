// The floor of a full export: mysql2 alone streaming the rows of a
// query, counting them and keeping none, with no HTTP, JSON or dates. Used by
// the bench's raw-SQL child process and by profile-export.ts.
import type { Pool } from 'mysql2'
import type { CompiledQuery } from 'kysely'
import { takeRowPackets } from '../../server/tools.ts'

/** Streams every row of `query` on one pooled connection; resolves to how many came. */
export function streamRowsWithMysql2(pool: Pool, query: CompiledQuery): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    pool.getConnection((error, connection) => {
      if (error) return reject(error)
      let n = 0
      const stream = connection.query({ sql: query.sql, values: query.parameters as unknown[] }).stream({ highWaterMark: 4000 })
      stream.on('readable', () => { while (stream.read() !== null) n++ })
      stream.on('end', () => { connection.release(); resolve(n) })
      stream.on('error', reject)
    })
  })
}

/**
 * Runs `count`, then streams every row of `query` as row packets, each
 * dropped as it comes (db/row-packets.ts), nothing decoded, both in one
 * transaction (one snapshot), as an unpaged answer must (its X-WP-Total comes
 * before the first byte); resolves to how many rows came. What MariaDB's side
 * of that whole answer allows any client: the service reads the same packets.
 */
export function dropRowPackets(pool: Pool, query: CompiledQuery, count: CompiledQuery): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    pool.getConnection((error, connection) => {
      if (error) return reject(error)
      const run = (sql: string, values: readonly unknown[] = []) => new Promise<void>((done, failed) => {
        connection.query(sql, values as unknown[], (failure) => (failure ? failed(failure) : done()))
      })
      const rows = () => new Promise<number>((done, failed) => {
        let n = 0
        const sent = connection.query({ sql: query.sql, values: query.parameters as unknown[] })
        takeRowPackets(sent, { accepts: () => true, row: () => { n++ } })
        const stream = sent.stream({ highWaterMark: 4000 })
        stream.on('readable', () => { while (stream.read() !== null); })
        stream.on('end', () => done(n))
        stream.on('error', failed)
      })
      const read = run('START TRANSACTION').then(() => run(count.sql, count.parameters)).then(rows).then(async (n) => { await run('COMMIT'); return n })
      read.then((n) => { connection.release(); resolve(n) }, reject)
    })
  })
}
