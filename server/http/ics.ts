// iCalendar (RFC 5545) bodies of `slots/` and `disabled-time/` (API.md, "Calendar
// feeds: format=ics"). Written line by line rather than with a library so that a
// feed of any size streams through the same batches as the JSON and CSV bodies;
// tests parse the output with ical.js and node-ical to prove it.
import type { Request } from 'express'
import { toBookingRecord, type BookingMapping, type BookingRecord } from '../domain/booking-record.ts'
import type { AnswerSink, SlotsAnswer } from '../domain/slots.ts'
import type { BookingRow } from '../../db/booking-queries.ts'
import type { ParsedRow } from '../../db/row-packets.ts'
import type { ExpandedPeriod } from '../domain/rules.ts'
import { addDays } from '../domain/day-arithmetic.ts'
import { Utf8Chunks } from './stream-body.ts'
import { publicBaseUrl } from './public-url.ts'

const CRLF = '\r\n'
/** RFC 5545, 3.1: lines longer than 75 octets (without the CRLF) are folded. */
const MAX_LINE_OCTETS = 75
/** How often a subscribed calendar app should fetch the feed again. */
export const REFRESH_INTERVAL = 'PT15M'

/** Whatever a feed's events share: the host of their UIDs and the DTSTAMP of the answer. */
export interface EventContext {
  host: string
  /** The time of the answer, as a UTC date-time (`20261124T070000Z`). */
  stamp: string
}

/**
 * The host of the public address (API.md, "Links and addresses": PUBLIC_URL,
 * else the host the client used, X-Forwarded-Host from a trusted proxy), for
 * UIDs that stay the same whichever way a calendar app reaches the service.
 */
export function publicHost(req: Request): string {
  return new URL(publicBaseUrl(req)).hostname.toLowerCase()
}

/**
 * A TEXT value (RFC 5545, 3.3.11): backslash, semicolon and comma escaped, any
 * line break (CRLF, CR or LF, and Unicode's NEL, line and paragraph separators)
 * as `\n`. node-ical dropped a DESCRIPTION holding U+2028 as it was. Other
 * control characters are not allowed in TEXT and are dropped; a tab stays.
 */
export function escapeText(text: string): string {
  /* eslint-disable no-control-regex -- control characters are what these find, to escape or drop (RFC 5545, 3.3.11) */
  if (!/[\\;,\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]/.test(text)) return text
  /* eslint-enable no-control-regex */
  return text.replace(/\r\n|[\\;,\r\n\x85\u2028\u2029]|[\x00-\x08\x0b-\x1f\x7f]/g, (match) => { // eslint-disable-line no-control-regex -- as above
    if (match === '\\') return '\\\\'
    if (match === ';') return '\\;'
    if (match === ',') return '\\,'
    return LINE_BREAKS.has(match) ? '\\n' : ''
  })
}

const LINE_BREAKS = new Set(['\r\n', '\r', '\n', '\x85', '\u2028', '\u2029'])

/** Octets of one code point in UTF-8 (a lone surrogate is written as U+FFFD, 3 octets). */
function utf8Octets(codePoint: number): number {
  if (codePoint < 0x80) return 1
  if (codePoint < 0x800) return 2
  if (codePoint < 0x10000) return 3
  return 4
}

/**
 * One content line with its CRLF, folded (RFC 5545, 3.1): no line longer than
 * 75 octets, continuation lines start with one space, and a fold never falls
 * inside a UTF-8 character (it falls between code points).
 */
export function foldLine(line: string): string {
  // At most 3 octets per UTF-16 unit: a short line cannot need folding.
  if (line.length * 3 <= MAX_LINE_OCTETS || Buffer.byteLength(line, 'utf8') <= MAX_LINE_OCTETS) return line + CRLF
  let out = ''
  let width = 0
  for (const char of line) {
    const octets = utf8Octets(char.codePointAt(0)!)
    if (width + octets > MAX_LINE_OCTETS) {
      out += `${CRLF} `
      width = 1
    }
    out += char
    width += octets
  }
  return out + CRLF
}

/** `20261124T070000Z`: an ISO 8601 instant with any offset, in UTC. */
export function utcDateTime(instantMs: number): string {
  const iso = new Date(instantMs).toISOString()
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`
}

/** `20261124` of `2026-11-24`. */
export function icsDate(day: string): string {
  return day.slice(0, 4) + day.slice(5, 7) + day.slice(8, 10)
}

/** API.md: pending is tentative, booked and completed confirmed, reject and expired cancelled; other values none. */
export function bookingStatus(status: string): 'TENTATIVE' | 'CONFIRMED' | 'CANCELLED' | undefined {
  switch (status) {
    case 'pending': return 'TENTATIVE'
    case 'booked':
    case 'completed': return 'CONFIRMED'
    case 'reject':
    case 'expired': return 'CANCELLED'
    default: return undefined
  }
}

/** The DESCRIPTION of a booking: the note, then the customer's name, email and phone where shown, one per line; blanks left out. */
export function bookingDescription(record: Pick<BookingRecord, 'note' | 'customer'>): string {
  const parts = [record.note, record.customer?.name, record.customer?.email, record.customer?.phone]
  return parts.filter((part): part is string => typeof part === 'string' && part.trim() !== '').join('\n')
}

/**
 * One VEVENT of a booking. A booking without a readable day (its `start` is
 * null) has no DTSTART, which every calendar app requires: it is left out ('').
 */
export function bookingEvent(record: BookingRecord, context: EventContext): string {
  if (record.start === null) return ''
  // A long host name can make even the UID line pass 75 octets: it is folded like any other.
  let out = `BEGIN:VEVENT${CRLF}${foldLine(`UID:booking-${record.id}@${context.host}`)}DTSTAMP:${context.stamp}${CRLF}`
  if (record.all_day) {
    out += `DTSTART;VALUE=DATE:${icsDate(record.booking_date)}${CRLF}DTEND;VALUE=DATE:${icsDate(addDays(record.booking_date, 1))}${CRLF}`
  } else {
    const start = Date.parse(record.start)
    out += `DTSTART:${utcDateTime(start)}${CRLF}`
    // RFC 5545 wants DTEND later than DTSTART: an end not after the start (equal, in a legacy
    // row; or before it, when a start in a spring-forward gap moved forward past the end) is
    // left out, which makes the event end when it starts (§3.6.1), as an unknown end does.
    if (record.end !== null && Date.parse(record.end) > start) out += `DTEND:${utcDateTime(Date.parse(record.end))}${CRLF}`
  }
  out += foldLine(`SUMMARY:${escapeText(record.service_slug ?? `service ${record.service_id}`)}`)
  const status = bookingStatus(record.status)
  if (status) out += `STATUS:${status}${CRLF}`
  // A cancelled booking does not make anyone busy.
  if (status === 'CANCELLED') out += `TRANSP:TRANSPARENT${CRLF}`
  if (record.status !== '') out += foldLine(`CATEGORIES:${escapeText(record.status)}`)
  const description = bookingDescription(record)
  if (description !== '') out += foldLine(`DESCRIPTION:${escapeText(description)}`)
  return `${out}END:VEVENT${CRLF}`
}

/**
 * One VEVENT of a disabled period; whole days as DATE values, the rest in UTC.
 * Its UID takes the day its window starts, not its start cut to the range
 * (see ExpandedPeriod): a rule has one window a day, so the UID is unique.
 */
export function disabledEvent(period: ExpandedPeriod, context: EventContext): string {
  let out = `BEGIN:VEVENT${CRLF}${foldLine(`UID:disabled-${period.rule_id}-${icsDate(period.windowDay)}@${context.host}`)}DTSTAMP:${context.stamp}${CRLF}`
  if (period.all_day) {
    out += `DTSTART;VALUE=DATE:${icsDate(period.start)}${CRLF}DTEND;VALUE=DATE:${icsDate(period.end)}${CRLF}`
  } else {
    out += `DTSTART:${utcDateTime(Date.parse(period.start))}${CRLF}DTEND:${utcDateTime(Date.parse(period.end))}${CRLF}`
  }
  out += foldLine(`SUMMARY:${escapeText(period.note.trim() === '' ? 'Disabled' : period.note)}`)
  // Which service is closed; a site-wide period has none.
  if (period.service_id !== null) out += foldLine(`DESCRIPTION:${escapeText(period.service_slug ?? `service ${period.service_id}`)}`)
  return `${out}TRANSP:OPAQUE${CRLF}END:VEVENT${CRLF}`
}

/** `BEGIN:VCALENDAR` and the calendar's properties; `timezone` only when it is an IANA name. */
export function calendarStart(name: string, timezone: string | undefined): string {
  return `BEGIN:VCALENDAR${CRLF}VERSION:2.0${CRLF}PRODID:-//booking-calendar-api//Calendar feed//EN${CRLF}` +
    `CALSCALE:GREGORIAN${CRLF}METHOD:PUBLISH${CRLF}` +
    foldLine(`X-WR-CALNAME:${escapeText(name)}`) +
    (timezone === undefined ? '' : foldLine(`X-WR-TIMEZONE:${escapeText(timezone)}`)) +
    `REFRESH-INTERVAL;VALUE=DURATION:${REFRESH_INTERVAL}${CRLF}X-PUBLISHED-TTL:${REFRESH_INTERVAL}${CRLF}`
}

export const CALENDAR_END = `END:VCALENDAR${CRLF}`

/** The feed of `slots/?format=ics`, chunk by chunk as the batches arrive. */
export async function* slotsIcsChunks(
  answer: Pick<SlotsAnswer, 'batches'>,
  calendar: { name: string; timezone: string | undefined },
  context: EventContext,
): AsyncGenerator<Buffer> {
  const body = new Utf8Chunks()
  body.write(calendarStart(calendar.name, calendar.timezone))
  for await (const batch of answer.batches) {
    for (const record of batch) body.write(bookingEvent(record, context))
    yield* body.full()
  }
  body.write(CALENDAR_END)
  yield* body.end()
}

/**
 * The feed of a streamed `slots/` answer made as its rows are read
 * (SlotsAnswer.rowsInto, through the RowTagger that makes its tag in the same
 * pass): the calendar's start, an event per booking, its end. It takes rows
 * parsed and maps them to records as the JSON's way does: an event is text of
 * its own, never the database's bytes.
 */
export class IcsBody {
  readonly #chunks = new Utf8Chunks()
  readonly #start: string
  readonly #mapping: BookingMapping
  readonly #context: EventContext
  #names: ReadonlyMap<number, string> = new Map()
  /** Rows reach it parsed: the RowTagger before it hashes their bytes and hands them on. */
  readonly takesBytes = false
  /** A narrow feed is read as records, tagged by them (its bytes hold DTSTAMP, the time of the answer). */
  readonly sink = undefined
  readonly list: AnswerSink

  constructor(calendar: { name: string; timezone: string | undefined }, context: EventContext, mapping: BookingMapping) {
    this.#start = calendarStart(calendar.name, calendar.timezone)
    this.#mapping = mapping
    this.#context = context
    this.#chunks.write(this.#start)
    this.list = {
      accepts: () => false,
      serviceNames: (names) => { this.#names = names },
      row: (_bytes: Buffer, _start: number, _end: number, row: ParsedRow<BookingRow>) => this.#event(row.parsed()),
      parsedRow: (row) => this.#event(row),
    }
  }

  /** The body's chunks, its events written into it by `rows` (answer.rowsInto of a sink that hands them on to `list`). */
  async *chunksFrom(_answer: SlotsAnswer, rows: AsyncIterable<number>, onRows: (rows: number) => void): AsyncGenerator<Buffer> {
    for await (const count of rows) {
      onRows(count)
      yield* this.#chunks.full()
    }
    this.#chunks.write(CALENDAR_END)
    yield* this.#chunks.end()
  }

  #event(row: BookingRow): void {
    row.service_post_name ??= this.#names.get(row.service_id) ?? null
    this.#chunks.write(bookingEvent(toBookingRecord(row, this.#mapping), this.#context))
  }
}

/** The feed of `disabled-time/?format=ics` in pieces, for lineChunks (http/text-chunks.ts) to send: the calendar's start, an event per period, its end. The periods are in memory already, as for its JSON. */
export function* disabledTimeIcsLines(
  periods: readonly ExpandedPeriod[],
  calendar: { name: string; timezone: string | undefined },
  context: EventContext,
): Generator<string> {
  yield calendarStart(calendar.name, calendar.timezone)
  for (const period of periods) yield disabledEvent(period, context)
  yield CALENDAR_END
}
