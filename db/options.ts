// Every query on {prefix}options.
import type { Db } from './connect.ts'

export interface TimezoneOptions {
  timezoneString: string | undefined
  gmtOffset: string | undefined
}

/** timezone_string and gmt_offset, the two options WordPress's wp_timezone() reads. */
export async function readTimezoneOptions(db: Db): Promise<TimezoneOptions> {
  const rows = await db
    .selectFrom('options')
    .select(['options.option_name', 'options.option_value'])
    .where('options.option_name', 'in', ['timezone_string', 'gmt_offset'])
    .execute()
  const value = (name: string) => rows.find((row) => row.option_name === name)?.option_value
  return { timezoneString: value('timezone_string'), gmtOffset: value('gmt_offset') }
}

/** The stored start_of_week option (WordPress: 0 = Sunday … 6), or undefined when the site has none. */
export async function readStartOfWeek(db: Db): Promise<string | undefined> {
  const row = await db
    .selectFrom('options')
    .select('options.option_value')
    .where('options.option_name', '=', 'start_of_week')
    .executeTakeFirst()
  return row?.option_value
}

/** One trivial query, for /readyz. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.selectFrom('options').select((eb) => eb.lit(1).as('ok')).limit(1).execute()
}
