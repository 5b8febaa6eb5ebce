// The floor of a full export: mysql2 alone streaming the rows of a
// query, counting them and keeping none, with no HTTP, JSON or dates. Used by
// the bench's raw-SQL child process and by profile-export.ts.
import type { Pool } from 'mysql2'
import type { CompiledQuery } from 'kysely'

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
