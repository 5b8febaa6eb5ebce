// A client of changes/ as API.md describes it (docs/changes.md): it keeps a
// copy of the bookings, applies every operation of every page, and keeps the
// last page's next. The tests compare its copy with what slots/ answers.
import { expect } from 'chai'
import type { Express } from 'express'
import request from './request.ts'

export type Booking = { id: number; booking_date: string } & Record<string, unknown>
export type Operation =
  | { op: 'upsert'; id: number; booking: Booking }
  | { op: 'delete'; id: number }
  | { op: 'replace'; start: string; end: string; bookings: Booking[] }

export interface ChangesPage { changes: Operation[]; more: boolean; next: string }

export const CHANGES_URL = '/wp-json/booking-calendar/v1/changes'
export const SLOTS_URL = '/wp-json/booking-calendar/v1/slots'

/** Applies one page's operations to a client's copy, and checks that no booking comes twice on a page. */
export function applyPage(copy: Map<number, Booking>, page: ChangesPage): void {
  const seen = new Set<number>()
  const once = (id: number) => {
    expect(seen.has(id), `booking ${id} twice on one page`).to.equal(false)
    seen.add(id)
  }
  for (const operation of page.changes) {
    if (operation.op === 'upsert') {
      once(operation.id)
      copy.set(operation.id, operation.booking)
    } else if (operation.op === 'delete') {
      once(operation.id)
      copy.delete(operation.id)
    } else {
      for (const [id, booking] of copy) if (booking.booking_date >= operation.start && booking.booking_date <= operation.end) copy.delete(id)
      for (const booking of operation.bookings) {
        once(booking.id)
        expect(booking.booking_date >= operation.start && booking.booking_date <= operation.end, `booking ${booking.id} outside its replace`).to.equal(true)
        copy.set(booking.id, booking)
      }
    }
  }
}

export interface SyncOptions {
  /** The filters and per_page, as a query string without since (`status=booked&per_page=5`). */
  query?: string
  /** Sent with each request (credentials). */
  headers?: Record<string, string>
  /** Called between pages: writes while the client pages. */
  betweenPages?: (page: number) => Promise<void>
}

/** Follows next from `since` (a new sync without it) until more is false; the pages and the token to keep. */
export async function followChanges(app: Express, copy: Map<number, Booking>, since: string | undefined, options: SyncOptions = {}): Promise<{ token: string; pages: ChangesPage[] }> {
  const pages: ChangesPage[] = []
  let token = since
  for (let page = 0; ; page++) {
    const query = [options.query, token === undefined ? undefined : `since=${encodeURIComponent(token)}`].filter(Boolean).join('&')
    const res = await request(app).get(`${CHANGES_URL}${query ? `?${query}` : ''}`).set(options.headers ?? {})
    expect(res.status, JSON.stringify(res.body)).to.equal(200)
    expect(res.headers['x-wp-total']).to.equal(undefined)
    const body = res.body as ChangesPage
    pages.push(body)
    applyPage(copy, body)
    token = body.next
    if (!body.more) return { token, pages }
    await options.betweenPages?.(page)
    expect(page, 'a delta that never ends').to.be.below(10_000)
  }
}

/** slots/'s flat list for the same filters (without per_page), by id. */
export async function slotsNow(app: Express, query = '', headers: Record<string, string> = {}): Promise<Map<number, Booking>> {
  const filters = query.split('&').filter((pair) => pair !== '' && !pair.startsWith('per_page=')).join('&')
  const res = await request(app).get(`${SLOTS_URL}?flat${filters ? `&${filters}` : ''}`).set(headers).expect(200)
  return new Map((res.body.booked_slots as Booking[]).map((booking) => [booking.id, booking]))
}

/** The copy equals slots/: the same ids, each record deep-equal. */
export function expectSameBookings(copy: Map<number, Booking>, slots: Map<number, Booking>): void {
  const sorted = (map: Map<number, Booking>) => [...map.values()].sort((a, b) => a.id - b.id)
  expect(sorted(copy)).to.deep.equal(sorted(slots))
}

/** One write a property test makes to the bookings table (as root), while a client pages or between syncs. */
export type BookingWrite =
  | { kind: 'insert'; id: number; serviceId: number; status: string; day: string }
  | { kind: 'move'; id: number; day: string }
  | { kind: 'status'; id: number; status: string }
  | { kind: 'note'; id: number; note: string }
  | { kind: 'delete'; id: number }

export interface WriteTarget {
  admin: { query(sql: string, values?: unknown[]): Promise<unknown> }
  table: string
}

export async function applyWrite(target: WriteTarget, write: BookingWrite): Promise<void> {
  const { admin, table } = target
  if (write.kind === 'insert') {
    await admin.query(`INSERT IGNORE INTO ${table} (id, service_id, status, booking_date, time_from, time_to, customer_name, customer_email, customer_phone, note, created_at)
      VALUES (?, ?, ?, ?, '10:00:00', '11:00:00', 'Property', 'p@example.com', '+1', NULL, '2026-01-01 00:00:00')`, [write.id, write.serviceId, write.status, write.day])
  } else if (write.kind === 'move') {
    await admin.query(`UPDATE ${table} SET booking_date = ? WHERE id = ?`, [write.day, write.id])
  } else if (write.kind === 'status') {
    await admin.query(`UPDATE ${table} SET status = ? WHERE id = ?`, [write.status, write.id])
  } else if (write.kind === 'note') {
    await admin.query(`UPDATE ${table} SET note = ? WHERE id = ?`, [write.note, write.id])
  } else {
    await admin.query(`DELETE FROM ${table} WHERE id = ?`, [write.id])
  }
}
