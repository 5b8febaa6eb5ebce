// Rows as MariaDB sends them, for a reader that writes them out itself: a
// RowPacketSink gets each row packet's bytes instead of mysql2's object of
// strings, which cost most of a large export's CPU. mysql2 has no public hook:
// its Query's `_rowParser` is made an accessor of Query.prototype, once (per
// query, it kept each query alive in the old generation). mysql2 is pinned and
// tests/unit/mysql2-pin.test.ts fails loudly if the patch no longer fits;
// ROWS_AS_BYTES=false switches it off. Why and what it measured:
// docs/performance.md, "The bulk path"; docs/architecture.md, "The fast paths, and their switches".
import * as mysql2 from 'mysql2'

/** mysql2's own createQuery (index.js), which its type declarations leave out. */
const { createQuery } = mysql2 as unknown as { createQuery: (sql: string, values: unknown[], callback: undefined, config: object) => object }

/** A column of a result as mysql2 describes it (its ColumnDefinition). */
export interface ResultColumn {
  name: string
  /** MySQL's type code (mysql2's Types: 8 LONGLONG, 10 DATE, 11 TIME, 12 DATETIME, ...). */
  columnType: number
  /** mysql2's name of the column's character set: 'utf8' for utf8mb4, 'binary' for bytes. */
  encoding: string
}

/** What a row is as mysql2 would read it, for a row a sink leaves to mysql2. */
export interface ParsedRow<Row> {
  parsed(): Row
}

export interface RowPacketSink<Row> {
  /** Whether the sink reads rows of these columns; when not, mysql2 makes its objects as usual. */
  accepts(columns: readonly ResultColumn[]): boolean
  /**
   * One row of the result: its cells, length-coded (MySQL's text protocol),
   * from `start` to `end` of `bytes`. `row.parsed()` gives it as mysql2 reads it.
   * The bytes are the connection's and only valid during the call.
   */
  row(bytes: Buffer, start: number, end: number, row: ParsedRow<Row>): void
}

/** What a query's stream holds for a row a sink has taken. */
export const ROW_TAKEN = 1

/** The parts of mysql2's row parser and its packets that takeRowPackets uses. */
interface Mysql2RowParser {
  next(packet: { buffer: Buffer; offset: number; end: number }, fields: unknown, options: unknown): unknown
}

/** What a mysql2 Query holds, ours (`bc*`) as plain properties that every query has in the same order. */
interface TakenQuery {
  _fields?: ResultColumn[][]
  _resultIndex?: number
  /** mysql2's parser of the current result. */
  bcParser: Mysql2RowParser | null
  /** The parser that hands rows to the sink, when it takes the current result. */
  bcTaking: Mysql2RowParser | null
  /** Set by takeRowPackets. */
  bcSink?: RowPacketSink<unknown>
}

/**
 * Whether this mysql2 has what the accessor below relies on: its createQuery,
 * and a Query whose constructor assigns `_rowParser`. package.json pins mysql2
 * to one version; tests/unit/mysql2-pin.test.ts fails loudly when a new one
 * lacks these (docs/performance.md, "Moving the mysql2 pin").
 */
export function rowPacketSupport(): { ok: true } | { ok: false; missing: string } {
  if (typeof createQuery !== 'function') return { ok: false, missing: 'mysql2.createQuery' }
  const query = createQuery('SELECT 1', [], undefined, {}) as Record<string, unknown>
  if (!('_rowParser' in query)) return { ok: false, missing: 'Query#_rowParser' }
  return { ok: true }
}

let installed = false

/**
 * Makes `_rowParser` an accessor of mysql2's Query.prototype, once per process,
 * so that a query given a sink (takeRowPackets) hands it its row packets.
 * False, and nothing changed, when this mysql2 lacks what it relies on: rows
 * then arrive as objects, as they do with ROWS_AS_BYTES=false.
 */
export function installRowPacketTaking(): boolean {
  if (installed) return true
  if (!rowPacketSupport().ok) return false
  const prototype = Object.getPrototypeOf(createQuery('SELECT 1', [], undefined, {})) as object
  Object.defineProperty(prototype, '_rowParser', {
    configurable: true,
    get(this: TakenQuery) {
      return this.bcTaking ?? this.bcParser
    },
    // mysql2's Query constructor sets null, then readField the parser of each result.
    set(this: TakenQuery, parser: Mysql2RowParser | null) {
      this.bcParser = parser
      this.bcTaking = null
      const sink = this.bcSink
      if (sink === undefined || parser === null) return
      const columns = this._fields?.[this._resultIndex ?? 0]
      if (columns && sink.accepts(columns)) this.bcTaking = takingParser(parser, sink)
    },
  })
  // A query made now must have run the setter: its constructor assigns _rowParser.
  installed = 'bcParser' in (createQuery('SELECT 1', [], undefined, {}))
  return installed
}

/** Whether row packets reach sinks in this process. */
export function rowPacketsInstalled(): boolean {
  return installed
}

/** A row parser that hands each packet to `sink`, with mysql2's `parser` for the row's `parsed()`. */
function takingParser<Row>(parser: Mysql2RowParser, sink: RowPacketSink<Row>): Mysql2RowParser {
  // One object for every row: the packet of the row being read, and mysql2's parser for it.
  let packet: { buffer: Buffer; offset: number; end: number }
  let fields: unknown
  let options: unknown
  const taking: Mysql2RowParser & ParsedRow<Row> = {
    next(rowPacket, rowFields, rowOptions) {
      packet = rowPacket
      fields = rowFields
      options = rowOptions
      sink.row(rowPacket.buffer, rowPacket.offset, rowPacket.end, taking)
      return ROW_TAKEN
    },
    parsed: () => parser.next(packet, fields, options) as Row,
  }
  return taking
}

/**
 * Makes `query` (a mysql2 Query, before its first row) hand its rows to
 * `sink` when the sink accepts the result's columns; its stream then holds
 * ROW_TAKEN for each. Call it right after `connection.query(...)`.
 */
export function takeRowPackets<Row>(query: object, sink: RowPacketSink<Row>): void {
  // The service calls this only where the switch is on (a lease's rowPackets); a tool may call it first.
  if (!installed) installRowPacketTaking()
  ;(query as TakenQuery).bcSink = sink
}

/**
 * The cells of a row packet: for cell i, `start[i]` and `length[i]`, the
 * length -1 for SQL NULL. Returns false when the packet does not hold exactly
 * `count` cells.
 */
export function readCells(bytes: Buffer, start: number, end: number, count: number, cellStart: Int32Array, cellLength: Int32Array): boolean {
  let at = start
  for (let i = 0; i < count; i++) {
    if (at >= end) return false
    let length = bytes[at]!
    at++
    if (length === 0xfb) {
      cellStart[i] = at
      cellLength[i] = -1
      continue
    }
    if (length === 0xfc) {
      length = bytes[at]! | (bytes[at + 1]! << 8)
      at += 2
    } else if (length === 0xfd) {
      length = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)
      at += 3
    } else if (length >= 0xfe) {
      // 8-byte lengths (cells over 16 MiB) are left to mysql2.
      return false
    }
    cellStart[i] = at
    cellLength[i] = length
    at += length
  }
  return at === end
}
