// Disabled-time rules for unit tests: a site-wide weekly rule unless told otherwise.
import type { RuleRow } from '../../db/disabled-times.ts'
import { readRule, type ValidRule } from '../../server/domain/rules.ts'

export function ruleRow(overrides: Partial<RuleRow>): RuleRow {
  return { id: 1, service_id: 0, rule_type: 'weekly', weekday: 1, date_from: null, date_to: null, time_from: null, time_to: null, note: '', ...overrides }
}

/** The rule as the domain reads it; a row it would refuse fails the test. */
export function rule(overrides: Partial<RuleRow>): ValidRule {
  const read = readRule(ruleRow(overrides))
  if ('problem' in read) throw new Error(read.problem)
  return read
}
