// The fault scripts' site: a database `faults` on a private MariaDB, with the
// demo's services and rules, `bookings` bookings, the recommended indexes, and
// a SELECT-only account, as an operator would set one up.
import type { MariaDbServer } from '../mariadb.ts'
import { schemaSql } from '../../db/schema.ts'
import { demoDataSql } from '../../db/demo-data.ts'
import { recommendedIndexesSql } from '../bench/dataset.ts'

/** The account the service reads `faults` with. */
export const FAULTS_READER = { user: 'faults_reader', password: 'faults-reader' }

/** Creates and fills `faults`; resolves with how long it took, in ms. */
export async function seedFaultsDatabase(mariadb: MariaDbServer, bookings: number): Promise<number> {
  const started = Date.now()
  await mariadb.adminQuery(`
    CREATE DATABASE faults CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
    CREATE USER '${FAULTS_READER.user}'@'%' IDENTIFIED BY '${FAULTS_READER.password}';
    GRANT SELECT ON faults.* TO '${FAULTS_READER.user}'@'%';
    USE faults; ${schemaSql('wp_')}`)
  for (const statement of demoDataSql({ prefix: 'wp_', bookings })) await mariadb.adminQuery(`USE faults; ${statement}`)
  await mariadb.adminQuery(`USE faults; ${recommendedIndexesSql('wp_')} ANALYZE TABLE wp_booking_calendar_bookings;`)
  return Date.now() - started
}
