// Every query on {prefix}booking_calendar_disabled_times.
import type { CompiledQuery } from 'kysely'
import type { Db } from './connect.ts'
import { compiledShapesOf } from './compiled-shapes.ts'

export interface RuleRow {
  id: number
  service_id: number
  rule_type: string
  weekday: number | null
  date_from: string | null
  date_to: string | null
  time_from: string | null
  time_to: string | null
  note: string
}

/**
 * The rules of one service and the site-wide ones (service_id 0), or all rules.
 * A site has 5 to 500: they are read whole and expanded in memory.
 */
export async function findRules(db: Db, serviceId: number | undefined): Promise<RuleRow[]> {
  return (await db.executeQuery(compileRulesQuery(db, serviceId))).rows
}

/** findRules' query; asked by every disabled-time/ and summary/ answer, so compiled once per shape (db/compiled-shapes.ts). */
function compileRulesQuery(db: Db, serviceId: number | undefined): CompiledQuery<RuleRow> {
  return compiledShapesOf(db).compile(serviceId === undefined ? 'all rules' : 'rules of a service', serviceId === undefined ? [] : [serviceId], ([idSlot]) => {
    let rules = db
      .selectFrom('booking_calendar_disabled_times')
      .select([
        'booking_calendar_disabled_times.id', 'booking_calendar_disabled_times.service_id',
        'booking_calendar_disabled_times.rule_type', 'booking_calendar_disabled_times.weekday',
        'booking_calendar_disabled_times.date_from', 'booking_calendar_disabled_times.date_to',
        'booking_calendar_disabled_times.time_from', 'booking_calendar_disabled_times.time_to',
        'booking_calendar_disabled_times.note',
      ])
    if (idSlot !== undefined) rules = rules.where('booking_calendar_disabled_times.service_id', 'in', [idSlot as number, 0])
    return rules.orderBy('booking_calendar_disabled_times.id').compile()
  })
}

/** compileRulesQuery, for server/tools.ts (the bench) and the tests of compiled shapes. */
export const statementsForTools = { compileRulesQuery }
