// The site's zone (API.md, "The site's time zone"): SITE_TIMEZONE when set, else
// read from {prefix}options and refreshed every minute (the contract asks for at
// least every five). When a refresh fails, the last known zone is kept for another minute.
import type { Logger } from 'pino'
import type { Db } from '../db/connect.ts'
import { readTimezoneOptions } from '../db/options.ts'
import { zoneFromOptions, zoneLabel, type SiteZone } from './domain/zone-offsets.ts'

/**
 * The site's zone. `known()` gives it at once while the last read is fresh,
 * so a request needs no await for it (an await is a turn of the microtask
 * queue, about 8 µs of a one-month report's 1.2 ms measured in the service:
 * docs/performance.md); undefined when it must be read or
 * refreshed, which calling the function does.
 */
export interface SiteTimezone {
  (): Promise<SiteZone>
  known(): SiteZone | undefined
}

export function createSiteTimezone(options: {
  db: Db
  override: SiteZone | undefined
  log: Logger
  refreshMs?: number
  now?: () => number
}): SiteTimezone {
  const { db, override, log, refreshMs = 60_000, now = Date.now } = options
  if (override) return Object.assign(async () => override, { known: () => override })
  let known: { zone: SiteZone; readAt: number } | undefined
  let reading: Promise<SiteZone> | undefined
  const read = async () => {
    try {
      const { timezoneString, gmtOffset } = await readTimezoneOptions(db)
      const zone = zoneFromOptions(timezoneString, gmtOffset)
      if (!known || zoneLabel(known.zone) !== zoneLabel(zone)) log.info({ timezone: zoneLabel(zone) }, 'site time zone')
      known = { zone, readAt: now() }
      return zone
    } finally {
      reading = undefined
    }
  }
  const fresh = () => (known && now() - known.readAt < refreshMs ? known.zone : undefined)
  return Object.assign(async () => {
    const zone = fresh()
    if (zone) return zone
    if (!known) return (reading ??= read())
    if (!reading) {
      // Stale but known: answer with it and refresh beside. A failed refresh keeps
      // the zone for another period and is logged once, not once per waiting request.
      const stale = known
      reading = read()
      reading.catch((error: unknown) => {
        if (known === stale) known = { zone: stale.zone, readAt: now() }
        log.warn({ err: { message: (error as Error)?.message } }, 'could not refresh the site time zone')
      })
    }
    return known.zone
  }, { known: fresh })
}
