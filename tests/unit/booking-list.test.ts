// BookingList writes a streamed answer's rows straight from the bytes MariaDB
// sends (server/http/booking-list.ts). Whatever a row holds, the text must be
// byte for byte what the record's way makes of the same row: toBookingRecord,
// then bookingJson or bookingCsvRow. Rows here are encoded as MariaDB's text
// protocol encodes them, and decoded as mysql2 decodes them.
import { expect } from 'chai'
import fc from 'fast-check'
import { BookingList, type ListFormat } from '../../server/http/booking-list.ts'
import { Utf8Chunks } from '../../server/http/stream-body.ts'
import { wallClockFor } from '../../server/domain/wall-clock.ts'
import { createSlugDecoder } from '../../server/domain/slugs.ts'
import type { SiteZone } from '../../server/domain/zone-offsets.ts'
import { BOOKING_ROW_COLUMNS, type BookingRow } from '../../db/booking-queries.ts'
import { readCells, type ResultColumn } from '../../db/row-packets.ts'

/** A row's cells as MariaDB stores them: bytes, or null for SQL NULL. */
type Cells = Array<Buffer | null>

/** A row packet of the text protocol: each cell length-coded, 0xfb for NULL. */
function rowPacket(cells: Cells): Buffer {
  const parts: Buffer[] = []
  for (const cell of cells) {
    if (cell === null) {
      parts.push(Buffer.from([0xfb]))
    } else if (cell.length < 0xfb) {
      parts.push(Buffer.from([cell.length]), cell)
    } else if (cell.length < 0x10000) {
      parts.push(Buffer.from([0xfc, cell.length & 0xff, cell.length >> 8]), cell)
    } else {
      parts.push(Buffer.from([0xfd, cell.length & 0xff, (cell.length >> 8) & 0xff, cell.length >> 16]), cell)
    }
  }
  return Buffer.concat(parts)
}

/** The row as mysql2 reads these cells: numbers for the IDs, UTF-8 text (invalid bytes become U+FFFD) for the rest. */
function mysql2Row(cells: Cells, postName: string | null): BookingRow {
  const text = (i: number) => cells[i] === null ? null : cells[i]!.toString('utf8')
  return {
    id: Number(text(0)), service_id: Number(text(1)), status: text(2)!, booking_date: text(3)!, time_from: text(4), time_to: text(5),
    customer_name: text(6)!, customer_email: text(7)!, customer_phone: text(8)!, note: text(9), created_at: text(10)!,
    service_post_name: postName,
  }
}

const POST_NAMES = new Map<number, string>([[12, 'haircut'], [14, '%d1%81%d1%82%d1%80%d0%b8%d0%b6%d0%ba%d0%b0'], [15, 'old__trashed'], [16, 'say-"hi"']])

/**
 * The rows through BookingList.row (bytes), and through record (the record's
 * way), in one list each. `joined`: each row's service_post_name cell holds its
 * post's name (`joinedNames`), as a narrow answer's one statement joins it,
 * and the list is given no names; else the cell is NULL and the list is given POST_NAMES, as a streamed answer is.
 */
function writeBoth(rows: Cells[], options: { format: ListFormat; grouped: boolean; zone: SiteZone; exposeCustomer: boolean; joined?: boolean },
  joinedNames: ReadonlyMap<number, Buffer> = new Map([...POST_NAMES].map(([id, name]) => [id, cell(name)]))) {
  const mapping = () => ({ clock: wallClockFor(options.zone), exposeCustomer: options.exposeCustomer, slugOf: createSlugDecoder() })
  const bytesBody = new Utf8Chunks()
  const bytes = new BookingList(bytesBody, { format: options.format, head: '', grouped: options.grouped, mapping: mapping() })
  const columns: ResultColumn[] = BOOKING_ROW_COLUMNS.map((name, i) => ({ name, columnType: i < 2 ? 8 : 253, encoding: i < 11 || options.joined ? 'utf8' : 'binary' }))
  expect(bytes.accepts(columns)).to.equal(true)
  if (!options.joined) bytes.serviceNames(POST_NAMES)
  const recordsBody = new Utf8Chunks()
  const records = new BookingList(recordsBody, { format: options.format, head: '', grouped: options.grouped, mapping: mapping() })
  records.serviceNames(POST_NAMES)
  let parsedRows = 0
  for (const given of rows) {
    const serviceId = Number(given[1]!.toString())
    const postName = options.joined ? joinedNames.get(serviceId) ?? null : null
    const cells = [...given.slice(0, 11), postName]
    const packet = Buffer.concat([Buffer.from('junk before'), rowPacket(cells), Buffer.from('junk after')])
    const start = 'junk before'.length
    bytes.row(packet, start, packet.length - 'junk after'.length, {
      parsed: () => {
        parsedRows++
        return mysql2Row(cells, postName && postName.toString('utf8'))
      },
    })
    records.parsedRow(mysql2Row(cells, options.joined ? postName && postName.toString('utf8') : POST_NAMES.get(serviceId) ?? null))
  }
  const text = (body: Utf8Chunks, list: BookingList) => {
    if (options.format === 'json') body.write(list.jsonEnd())
    return Buffer.concat([...body.end()]).toString('utf8')
  }
  return { bytes: { text: text(bytesBody, bytes), parsedRows }, records: text(recordsBody, records) }
}

const cell = (text: string) => Buffer.from(text, 'utf8')

/** An ordinary booking's cells, with some changed. */
function usual(change: Partial<Record<(typeof BOOKING_ROW_COLUMNS)[number], Buffer | null>> = {}): Cells {
  const cells: Record<(typeof BOOKING_ROW_COLUMNS)[number], Buffer | null> = {
    id: cell('101'), service_id: cell('12'), status: cell('booked'), booking_date: cell('2026-11-25'),
    time_from: cell('09:00:00'), time_to: cell('10:30:00'), customer_name: cell('Ann'), customer_email: cell('ann@example.com'),
    customer_phone: cell('+49 1'), note: cell('window seat'), created_at: cell('2026-11-01 10:00:00'), service_post_name: null,
    ...change,
  }
  return BOOKING_ROW_COLUMNS.map((name) => cells[name])
}

const BERLIN: SiteZone = { kind: 'iana', name: 'Europe/Berlin' }
const ZONES: SiteZone[] = [
  BERLIN, { kind: 'utc' }, { kind: 'fixed', offsetMinutes: -210 }, { kind: 'iana', name: 'Asia/Kolkata' },
  { kind: 'iana', name: 'America/St_Johns' }, { kind: 'iana', name: 'Australia/Lord_Howe' },
]
const VARIANTS = ZONES.flatMap((zone) => (['json', 'csv'] as const).flatMap((format) =>
  [true, false].flatMap((exposeCustomer) => (format === 'json' ? [false, true] : [false]).map((grouped) => ({ zone, format, exposeCustomer, grouped })))))

/** Texts a stored cell may hold, the awkward ones included. */
const TEXTS = [
  '', 'plain', 'say "hi"', 'back\\slash', 'line\nbreak', 'cr\r\nlf', 'tab\there', '\u0000\u0001\u001f\u007f', '\b\f', 'a,b', '=1+1', '+49 1',
  '-5', '@x', '\tlead', '\rlead', '🎉 стрижка שלום', '\u2028\u2029', "it's", 'ü', ' booked ', 'Booked', 'x'.repeat(300),
]
const BROKEN_UTF8 = [Buffer.from([0x41, 0xff, 0x42]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc3]), Buffer.from([0xe2, 0x82])]

describe('BookingList: rows from their bytes, as the record\'s way writes them', () => {
  it('writes an ordinary row from its bytes alone, never asking mysql2 for it', () => {
    for (const variant of VARIANTS) {
      const { bytes, records } = writeBoth([usual(), usual({ id: cell('102'), service_id: cell('14'), time_from: null, time_to: null })], variant)
      expect(bytes.text, JSON.stringify(variant)).to.equal(records)
      expect(bytes.parsedRows, JSON.stringify(variant)).to.equal(0)
    }
  })

  it('writes the text of the usual form that needs escaping, quoting or the formula guard from its bytes too', () => {
    const rows = TEXTS.map((text, i) => usual({ id: cell(String(200 + i)), note: cell(text), customer_name: cell(text), customer_phone: cell(text) }))
    for (const variant of VARIANTS) {
      const { bytes, records } = writeBoth(rows, variant)
      expect(bytes.text, JSON.stringify(variant)).to.equal(records)
      expect(bytes.parsedRows).to.equal(0)
    }
  })

  it('writes times past midnight, 24:00:00, 10:75:00, whole days, NULL ends, days whose offset changes and created_at that is no date as the clock does', () => {
    const rows = [
      usual({ time_from: cell('22:00:00'), time_to: cell('01:30:00') }),
      usual({ time_from: cell('09:00:00'), time_to: cell('24:00:00') }),
      usual({ time_from: cell('09:00:00'), time_to: cell('09:00:00') }),
      usual({ time_from: cell('09:00:00'), time_to: null }),
      usual({ time_from: null, time_to: cell('10:00:00') }),
      usual({ booking_date: cell('2026-03-29'), time_from: cell('02:30:00'), time_to: cell('03:30:00') }),
      usual({ booking_date: cell('2026-10-25'), time_from: cell('02:30:00'), time_to: cell('03:30:00') }),
      usual({ booking_date: cell('2026-03-28'), time_from: null, time_to: null, created_at: cell('2026-03-29 02:30:00') }),
      usual({ created_at: cell('0000-00-00 00:00:00') }),
      usual({ created_at: cell('2026-10-25 02:30:00') }),
      usual({ time_from: cell('10:75:00'), time_to: cell('11:99:99') }),
      usual({ created_at: cell('2026-02-30 10:00:00') }),
    ]
    for (const variant of VARIANTS) {
      const { bytes, records } = writeBoth(rows, variant)
      expect(bytes.text, JSON.stringify(variant)).to.equal(records)
    }
  })

  it('leaves to mysql2 what it does not read itself, with the same text: other TIME forms, booking dates that are none, broken UTF-8, long IDs', () => {
    const rows = [
      usual({ time_to: cell('838:59:59') }),
      usual({ time_from: cell('09:00:00.5') }),
      usual({ booking_date: cell('2026-02-30') }),
      usual({ booking_date: cell('0000-00-00') }),
      usual({ id: cell('1234567890123456') }),
      usual({ id: cell('0101') }),
      ...BROKEN_UTF8.map((broken) => usual({ note: broken })),
      ...BROKEN_UTF8.map((broken) => usual({ customer_email: broken })),
    ]
    for (const variant of VARIANTS) {
      const { bytes, records } = writeBoth(rows, variant)
      expect(bytes.text, JSON.stringify(variant)).to.equal(records)
      // Broken customer text is read only where customer data is shown.
      expect(bytes.parsedRows).to.equal(variant.exposeCustomer ? rows.length : rows.length - BROKEN_UTF8.length)
    }
  })

  it('gives the record\'s text for any row (property)', () => {
    const digits = (min: number, max: number) => fc.integer({ min, max }).map((n) => cell(String(n)))
    const twoDigits = fc.integer({ min: 0, max: 99 }).map((n) => String(n).padStart(2, '0'))
    const time = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }))
        .map(([h, m, s]) => cell([h, m, s].map((n) => String(n).padStart(2, '0')).join(':'))),
      fc.tuple(twoDigits, twoDigits, twoDigits).map((parts) => cell(parts.join(':'))),
      fc.constantFrom(cell('24:00:00'), cell('-01:00:00'), cell('100:00:00')),
    )
    const date = fc.oneof(
      fc.date({ min: new Date('1970-01-01'), max: new Date('2040-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
      fc.constantFrom('2026-03-29', '2026-03-28', '2026-10-25', '2025-10-26', '2026-04-05', '0000-00-00', '2026-02-30', '2026-13-01'),
    )
    const text = fc.oneof(fc.constantFrom(...TEXTS.map(cell), ...BROKEN_UTF8), fc.string({ unit: 'binary' }).map(cell))
    const row = fc.record({
      id: fc.oneof(digits(1, 2 ** 40), fc.constantFrom(cell('0'), cell('99999999999999999'))),
      service_id: fc.oneof(fc.constantFrom(...[12, 14, 15, 16, 99].map((id) => cell(String(id))))),
      status: fc.oneof(fc.constantFrom('pending', 'booked', 'reject', 'completed', 'expired', 'Booked', 'booked  ', 'approved', '').map(cell), text),
      booking_date: date.map(cell),
      time_from: fc.option(time),
      time_to: fc.option(time),
      customer_name: text, customer_email: text, customer_phone: text,
      note: fc.option(text),
      created_at: fc.tuple(date, time).map(([day, at]) => cell(`${day} ${at.toString()}`)),
    }).map((cells) => usual(cells))
    fc.assert(fc.property(fc.array(row, { maxLength: 8 }), fc.constantFrom(...VARIANTS), fc.boolean(), (rows, variant, joined) => {
      const ordered = variant.grouped ? [...rows].sort((a, b) => Number(a[1]!.toString()) - Number(b[1]!.toString())) : rows
      const { bytes, records } = writeBoth(ordered, { ...variant, joined })
      expect(bytes.text).to.equal(records)
    }), { numRuns: 3000 })
  })

  it('writes the slug of the post joined to each row from its cell, given no names (a narrow answer\'s one statement)', () => {
    // 99: no post; 17: a post_name that is no valid UTF-8, which mysql2 decodes with U+FFFD.
    const joinedNames = new Map([...POST_NAMES].map(([id, name]) => [id, cell(name)])).set(17, Buffer.from([0x61, 0xff]))
    const rows = [12, 14, 15, 16, 99, 17, 12, 17].map((serviceId, i) => usual({ id: cell(String(300 + i)), service_id: cell(String(serviceId)) }))
    // A row left to mysql2 keeps its joined slug too.
    rows.push(usual({ id: cell('400'), service_id: cell('14'), time_to: cell('838:59:59') }))
    for (const variant of VARIANTS) {
      const { bytes, records } = writeBoth(rows, { ...variant, joined: true }, joinedNames)
      expect(bytes.text, JSON.stringify(variant)).to.equal(records)
      expect(bytes.parsedRows, JSON.stringify(variant)).to.equal(3)
    }
  })

  it('takes the columns of a bookings stream only, its text in UTF-8', () => {
    const list = new BookingList(new Utf8Chunks(), { format: 'json', head: '', grouped: false, mapping: { clock: wallClockFor(BERLIN), exposeCustomer: false, slugOf: createSlugDecoder() } })
    const columns: ResultColumn[] = BOOKING_ROW_COLUMNS.map((name, i) => ({ name, columnType: i < 2 ? 8 : 253, encoding: 'utf8' }))
    expect(list.accepts(columns)).to.equal(true)
    expect(list.accepts(columns.slice(1))).to.equal(false)
    expect(list.accepts(columns.map((column, i) => i === 9 ? { ...column, encoding: 'binary' } : column))).to.equal(false)
    expect(list.accepts(columns.map((column, i) => i === 0 ? { ...column, columnType: 246 } : column))).to.equal(false)
    expect(list.accepts(columns.map((column, i) => i === 3 ? { ...column, name: 'day' } : column))).to.equal(false)
    const fields = new BookingList(new Utf8Chunks(), {
      format: 'json', head: '', grouped: false, mapping: { clock: wallClockFor(BERLIN), exposeCustomer: false, slugOf: createSlugDecoder() }, recordText: () => '{}',
    })
    expect(fields.takesBytes).to.equal(false)
    expect(list.takesBytes).to.equal(true)
  })
})

describe('readCells: the cells of a row packet', () => {
  it('reads 1-, 3- and 4-byte lengths and NULL, and refuses a packet of another number of cells', () => {
    const cells = [cell('a'), null, Buffer.alloc(300, 0x62), Buffer.alloc(70_000, 0x63), cell('')]
    const packet = rowPacket(cells)
    const start = new Int32Array(5)
    const length = new Int32Array(5)
    expect(readCells(packet, 0, packet.length, 5, start, length)).to.equal(true)
    expect([...length]).to.deep.equal([1, -1, 300, 70_000, 0])
    expect(packet.subarray(start[3], start[3]! + 3).toString()).to.equal('ccc')
    expect(readCells(packet, 0, packet.length, 4, start, length)).to.equal(false)
    expect(readCells(packet, 0, packet.length, 6, start, length)).to.equal(false)
    expect(readCells(packet, 0, packet.length - 1, 5, start, length)).to.equal(false)
  })
})
