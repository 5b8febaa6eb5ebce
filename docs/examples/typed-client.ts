// A typed TypeScript client of booking-calendar-api: openapi-typescript makes
// the types from openapi.json, openapi-fetch sends the calls. Run by
// tests/integration/typed-client.test.ts: `tsc --strict` must pass, and its output is checked.
//
//   npx openapi-typescript https://shop.example.com/wp-json/booking-calendar/v1/openapi.json -o booking-calendar.d.ts
//   BOOKING_API_URL=https://shop.example.com/wp-json/booking-calendar/v1 BOOKING_API_TOKEN=... npx tsx typed-client.ts
import createClient from 'openapi-fetch'
import type { paths } from './booking-calendar.d.ts'

const baseUrl = process.env.BOOKING_API_URL ?? 'http://localhost:8080/wp-json/booking-calendar/v1'
const token = process.env.BOOKING_API_TOKEN
const start = process.env.BOOKING_START ?? '2026-11-01'
const end = process.env.BOOKING_END ?? '2026-11-30'

const client = createClient<paths>({ baseUrl, headers: token ? { Authorization: `Bearer ${token}` } : {} })

// flat: true, a boolean as the document types it: booked_slots is then one list.
const slots = await client.GET('/slots', { params: { query: { flat: true, start, end, status: ['booked', 'pending'] } } })
if (slots.error) throw new Error(`slots/: ${slots.error.code}: ${slots.error.message}`)
// The document lists JSON, CSV and iCalendar for a 200: without format, the answer is JSON.
if (typeof slots.data === 'string') throw new Error('slots/ answered with text, not JSON')
const bookings = Array.isArray(slots.data.booked_slots) ? slots.data.booked_slots : Object.values(slots.data.booked_slots).flat()

// The same bookings as CSV for Excel: bom: true puts a byte-order mark before the header row.
const csv = await client.GET('/slots', { params: { query: { format: 'csv', bom: true, start, end, status: ['booked', 'pending'] } }, parseAs: 'arrayBuffer' })
if (csv.error) throw new Error(`slots/ as CSV: ${csv.error.code}: ${csv.error.message}`)
const bytes = new Uint8Array(csv.data)

// How full the range was: occupancy counts the time that blocking bookings took.
const summary = await client.GET('/summary', { params: { query: { start, end, group_by: ['service'] } } })
if (summary.error) throw new Error(`summary/: ${summary.error.code}: ${summary.error.message}`)
if (typeof summary.data === 'string') throw new Error('summary/ answered with text, not JSON')

process.stdout.write(`${JSON.stringify({
  total: slots.data.total,
  ids: bookings.map((booking) => booking.id),
  csvStartsWithBom: bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf,
  csvHeader: new TextDecoder().decode(bytes).replace(/^\uFEFF/, '').split('\r\n')[0],
  occupancy: summary.data.totals.occupancy ?? null,
})}\n`)
