// The `start` and `end` parameters (API.md, "Parameters"): three written forms, read strictly.
import { dayToMs } from './day-arithmetic.ts'

const DATE_FORMATS: { pattern: RegExp; order: [year: number, month: number, day: number] }[] = [
  { pattern: /^(\d{2})\.(\d{2})\.(\d{4})$/, order: [3, 2, 1] },
  { pattern: /^(\d{2})\/(\d{2})\/(\d{4})$/, order: [3, 2, 1] },
  { pattern: /^(\d{4})-(\d{2})-(\d{2})$/, order: [1, 2, 3] },
]

/**
 * A `start`/`end` parameter as `YYYY-MM-DD`, or undefined when it is not a real
 * date in one of API.md's three forms, checked strictly: `31.02.2026`,
 * `2026-2-3` and `13/13/2026` are not dates. Years before 1000 are refused:
 * MariaDB's DATE range starts there.
 */
export function parseDateParam(value: string): string | undefined {
  const written = readDateForm(value)
  if (written === undefined || written.year < 1000) return undefined
  return Number.isNaN(dayToMs(written.iso)) ? undefined : written.iso
}

/** Whether `value` has one of the three forms but a year before 1000, which parseDateParam refuses: its sentence says so. */
export function isBeforeYear1000(value: string): boolean {
  const written = readDateForm(value)
  return written !== undefined && written.year < 1000
}

/** `value` in one of the three forms, as `YYYY-MM-DD` (not checked as a date) and its year; undefined in none. */
function readDateForm(value: string): { iso: string; year: number } | undefined {
  for (const { pattern, order } of DATE_FORMATS) {
    const m = pattern.exec(value)
    if (m) return { iso: `${m[order[0]]}-${m[order[1]]}-${m[order[2]]}`, year: Number(m[order[0]]) }
  }
  return undefined
}
