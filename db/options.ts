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
  return { timezoneString: value('timezone_string'), gmtOffset: value('gmt_offset'),
  }
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

/** The tables the service reads, under the table prefix. */
const TABLES_READ = ['options', 'posts', 'booking_calendar_bookings', 'booking_calendar_disabled_times'] as const

/** Reads no row of each table the service reads: rejects with the database's error for the first it cannot (a refused account, a missing table). */
export async function checkTablesRead(db: Db): Promise<void> {
  for (const table of TABLES_READ) await db.selectFrom(table).select((eb) => eb.lit(1).as('ok')).limit(0).execute()
}

/**
 * What an operator should do about a database error that says the setup is
 * wrong (the log's `problem`); undefined for any other error (a timeout, a
 * lost connection), which may pass by itself.
 */
export function setupProblem(error: unknown): string | undefined {
  switch ((error as { code?: unknown } | undefined)?.code) {
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_DBACCESS_DENIED_ERROR':
      return 'The database refused the account: check the user, the password and the database name (DATABASE_URL, or WORDPRESS_DB_USER, WORDPRESS_DB_PASSWORD and WORDPRESS_DB_NAME).'
    case 'ER_BAD_DB_ERROR':
      return 'The database named does not exist: check the name in DATABASE_URL or WORDPRESS_DB_NAME.'
    case 'ER_NO_SUCH_TABLE':
      return 'A table the service reads is missing: check TABLE_PREFIX (the site\'s $table_prefix) and the database name.'
    case 'ER_TABLEACCESS_DENIED_ERROR':
      return 'The account may not read a table the service reads: grant it SELECT on the site\'s database.'
    default:
      return undefined
  }
}

/** What the REST API's root index shows of the site (WordPress's WP_REST_Server::get_index). */
export interface IndexOptions {
  blogname: string | undefined
  blogdescription: string | undefined
  siteurl: string | undefined
  home: string | undefined
  timezoneString: string | undefined
  gmtOffset: string | undefined
}

/** blogname, blogdescription, siteurl, home, timezone_string and gmt_offset, in one statement. */
export async function readIndexOptions(db: Db): Promise<IndexOptions> {
  const rows = await db
    .selectFrom('options')
    .select(['options.option_name', 'options.option_value'])
    .where('options.option_name', 'in', ['blogname', 'blogdescription', 'siteurl', 'home', 'timezone_string', 'gmt_offset'])
    .execute()
  const value = (name: string) => rows.find((row) => row.option_name === name)?.option_value
  return {
    blogname: value('blogname'), blogdescription: value('blogdescription'), siteurl: value('siteurl'), home: value('home'),
    timezoneString: value('timezone_string'), gmtOffset: value('gmt_offset'),
  }
}
