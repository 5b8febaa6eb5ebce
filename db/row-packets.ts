// Rows as MariaDB sends them, for a reader that writes them out itself.
//
// mysql2 turns each row packet into an object of strings, which the service
// then turned into a record, then into text, then back into UTF-8 bytes: most
// of the CPU of a large export (scripts/bench/README.md, "Rows as bytes"). A
// RowPacketSink gets the packet's bytes instead, and mysql2's own parser for
// any row it does not read itself.
//
// mysql2 has no public hook for this: the query's `_rowParser` property, which
// it sets once the result's columns are known, is replaced by one that hands
// each packet to the sink (takeRowPackets). Should a later mysql2 no longer
// use that property, its rows arrive as objects, as before: a sink is told
// about a result it takes (`accepts`), so a caller can tell the two apart.

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

/**
 * Makes `query` (a mysql2 Query, before its first row) hand its rows to
 * `sink` when the sink accepts the result's columns; its stream then holds
 * ROW_TAKEN for each. Call it right after `connection.query(...)`.
 */
export function takeRowPackets<Row>(query: object, sink: RowPacketSink<Row>): void {
  let mysql2Parser: Mysql2RowParser | null = null
  let taking: (Mysql2RowParser & ParsedRow<Row>) | null = null
  Object.defineProperty(query, '_rowParser', {
    configurable: true,
    get: () => taking ?? mysql2Parser,
    set(this: { _fields?: ResultColumn[][]; _resultIndex?: number }, parser: Mysql2RowParser | null) {
      mysql2Parser = parser
      taking = null
      const columns = this._fields?.[this._resultIndex ?? 0]
      if (parser === null || !columns || !sink.accepts(columns)) return
      // One object for every row: the packet of the row being read, and mysql2's parser for it.
      let packet: { buffer: Buffer; offset: number; end: number }
      let fields: unknown
      let options: unknown
      taking = {
        next(rowPacket, rowFields, rowOptions) {
          packet = rowPacket
          fields = rowFields
          options = rowOptions
          sink.row(rowPacket.buffer, rowPacket.offset, rowPacket.end, taking!)
          return ROW_TAKEN
        },
        parsed: () => parser.next(packet, fields, options) as Row,
      }
    },
  })
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
