// A read whose hinted index an operator dropped runs again without the hint
// (db/booking-indexes.ts, forgetHintedIndexes).
import type { Db } from './connect.ts'
import { forgetHintedIndexes } from './booking-indexes.ts'

/**
 * The batches of `read`; when MariaDB says the hinted index is gone before the
 * first batch (an operator dropped it), the query runs again without the hint,
 * in the same snapshot.
 */
export async function* withoutLostIndex<R>(db: Db, read: () => AsyncGenerator<R[]>): AsyncGenerator<R[]> {
  let batches = read()
  let first: IteratorResult<R[]>
  try {
    first = await batches.next()
  } catch (error) {
    if (!forgetHintedIndexes(db, error)) throw error
    batches = read()
    first = await batches.next()
  }
  if (first.done) return
  yield first.value
  yield* batches
}

/** One statement's rows, read again without the index hint when MariaDB says the hinted index is gone (withoutLostIndex). */
export async function readWithoutLostIndex<T>(db: Db, read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (!forgetHintedIndexes(db, error)) throw error
    return await read()
  }
}
