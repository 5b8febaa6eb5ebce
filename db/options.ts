// Every query on {prefix}options.
import type { Db } from './connect.ts'
import { isOldTlsOnly, type SslMode } from './connection-options.ts'

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

/** Node's sentence for a refused certificate, on one line and short. */
function tlsReason(error: unknown): string {
  const message = error instanceof Error ? error.message : 'no reason given'
  return message.replace(/\s+/g, ' ').trim().slice(0, 200)
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
export function setupProblem(error: unknown, sslMode?: SslMode): string | undefined {
  switch ((error as { code?: unknown } | undefined)?.code) {
    case 'ER_ACCESS_DENIED_ERROR':
      // MariaDB refuses a connection without TLS under require_secure_transport as it refuses a wrong password.
      if (sslMode === 'DISABLED') return 'The database refused the account with ssl-mode DISABLED: a server that requires TLS (require_secure_transport, as on RDS, Azure and most managed databases) refuses every connection without it, so set ssl-mode to REQUIRED or stricter; otherwise check the user, the password and the database name.'
      return 'The database refused the account: check the user, the password and the database name (DATABASE_URL, or WORDPRESS_DB_USER, WORDPRESS_DB_PASSWORD and WORDPRESS_DB_NAME).'
    case 'ER_SECURE_TRANSPORT_REQUIRED':
      return 'The database requires TLS (require_secure_transport) and ssl-mode is DISABLED: set ssl-mode to REQUIRED or stricter (docs/managed-databases.md).'
    case 'ER_DBACCESS_DENIED_ERROR':
      return 'The database refused the account: check the user, the password and the database name (DATABASE_URL, or WORDPRESS_DB_USER, WORDPRESS_DB_PASSWORD and WORDPRESS_DB_NAME).'
    case 'HANDSHAKE_SSL_ERROR':
      if (isOldTlsOnly(error)) return 'The database offers only TLS 1.0 or 1.1, which this service does not take (TLS 1.2 or later): turn TLS 1.2 on at the server, or set ssl-mode to PREFERRED, which then reads in plain text as the mysql client does.'
      // Node's reason (an unknown CA, a name the certificate does not hold): no secret, and what to fix.
      return `The database's TLS certificate was refused (${tlsReason(error)}): give the CA that signed it as ssl-ca (DB_SSL_CA), and as the host a name the certificate holds, or lower ssl-mode to VERIFY_CA, which does not check the name (docs/managed-databases.md).`
    case 'HANDSHAKE_NO_SSL_SUPPORT':
      return 'The database offers no TLS, and ssl-mode asks for it: turn TLS on at the server, or set ssl-mode to PREFERRED or DISABLED.'
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
