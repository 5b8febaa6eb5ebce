// What the REST API's root index shows of the site (routes/root-index.ts): read
// from {prefix}options and kept for a minute, as the site's zone is
// (site-timezone.ts). The index is open in every access mode, so without this
// each anonymous call was a statement on the site's database.
import type { Logger } from 'pino'
import type { Db } from '../db/connect.ts'
import { readIndexOptions, type IndexOptions } from '../db/options.ts'

/** The site's index options: read once, then at most once a minute; a request waits only for the first read. */
export type SiteIndex = () => Promise<IndexOptions>

export function createSiteIndex(options: { db: Db; log: Logger; refreshMs?: number; now?: () => number }): SiteIndex {
  const { db, log, refreshMs = 60_000, now = Date.now } = options
  let known: { options: IndexOptions; readAt: number } | undefined
  let reading: Promise<IndexOptions> | undefined
  const read = async () => {
    try {
      const read = await readIndexOptions(db)
      known = { options: read, readAt: now() }
      return read
    } finally {
      reading = undefined
    }
  }
  return async () => {
    if (known && now() - known.readAt < refreshMs) return known.options
    if (!known) return (reading ??= read())
    if (!reading) {
      // Stale but known: answer with it and refresh beside. A failed refresh keeps
      // the options for another period and is logged once, not once per request.
      const stale = known
      reading = read()
      reading.catch((error: unknown) => {
        if (known === stale) known = { options: stale.options, readAt: now() }
        log.warn({ err: { message: (error as Error)?.message } }, 'could not refresh the site\'s name and addresses for the root index')
      })
    }
    return known.options
  }
}
