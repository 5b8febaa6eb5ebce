// Day arithmetic for the replace operations of changes/ (API.md, "GET changes/"):
// booking_date as the database sends it, "YYYY-MM-DD". The zero date and the
// odd day a lenient SQL mode lets in (PLUGIN_TABLES.md) are kept as they are,
// never moved to a real day. Pure.

/** A real calendar day: the same string back from Date.UTC, or undefined. */
function realDay(day: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day)
  if (!match) return undefined
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
  if (Number(match[1]) < 1000 || date.toISOString().slice(0, 10) !== day) return undefined
  return date
}

function dayOf(date: Date): string {
  return date.toISOString().slice(0, 10)
}

/** The day after a real day; an unreal one is its own bound. */
export function dayAfter(day: string): string {
  const date = realDay(day)
  return date ? dayOf(new Date(date.getTime() + 86_400_000)) : day
}

/** The day before a real day, or undefined. */
export function dayBefore(day: string): string | undefined {
  const date = realDay(day)
  return date ? dayOf(new Date(date.getTime() - 86_400_000)) : undefined
}

/** A month's first and last calendar days ("YYYY-MM"); the zero date's month ("0000-00") is that one day. */
export function monthDays(month: string): { first: string; last: string } {
  const year = Number(month.slice(0, 4))
  const number = Number(month.slice(5, 7))
  if (year < 1000 || number < 1 || number > 12) return { first: `${month}-00`, last: `${month}-00` }
  const last = new Date(Date.UTC(year, number, 0)).getUTCDate()
  return { first: `${month}-01`, last: `${month}-${String(last).padStart(2, '0')}` }
}

/** The last day a replace of a month's tail covers: its last calendar day, or a later odd day read in it. */
export function lastDayOfMonth(month: string, rows: ReadonlyArray<{ booking_date: string }>): string {
  const { last } = monthDays(month)
  const latest = rows.at(-1)?.booking_date
  return latest !== undefined && latest > last ? latest : last
}

/** The first day a replace of a month's head covers: its first calendar day, or an earlier odd day read in it (a day 00). */
export function firstDayOfMonth(month: string, rows: ReadonlyArray<{ booking_date: string }>): string {
  const { first } = monthDays(month)
  const earliest = rows[0]?.booking_date
  return earliest !== undefined && earliest < first ? earliest : first
}
