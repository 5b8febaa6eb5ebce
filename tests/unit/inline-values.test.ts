// db/inline-values.ts: a statement with its values written in must be, byte
// for byte, what mysql2's format() makes of it, for every statement text the
// service sends and for values that need escaping; where it cannot be, the
// values go to mysql2 as before.
import { expect } from 'chai'
import { Kysely, MysqlDialect } from 'kysely'
import { createPool, format } from 'mysql2'
import { TablePrefixPlugin } from '../../db/connect.ts'
import type { Database } from '../../db/database.ts'
import type { BookingFilter } from '../../db/booking-filter.ts'
import { compileBookingsPage, compileBookingsQuery, compileCountQuery, compileRulesQuery } from '../../server/tools.ts'
import { CutTexts, formatStatement, inlineValues, NO_VALUES, withValuesInlined } from '../../db/inline-values.ts'

// Compiling never connects: the pool points nowhere and is never asked for a connection.
const db = new Kysely<Database>({
  dialect: new MysqlDialect({ pool: createPool({ host: '127.0.0.1', port: 9 }) }),
  plugins: [new TablePrefixPlugin('wp_')],
})

const filters: BookingFilter[] = [
  {},
  { serviceId: 10, bookingDate: { from: '2026-03-01', to: '2026-03-31' } },
  { statuses: ['pending', 'booked'], bookingDate: { from: '2025-01-01', to: '2025-12-31' } },
  { createdAt: { from: '2026-01-01 00:00:00', to: '2026-01-31 23:59:59' } },
]

/** Values that escaping changes: quotes, backslashes, control characters, text beyond ASCII. */
const AWKWARD = ["it's", 'back\\slash', 'nul\0byte', 'line\nbreak', 'tab\tand\x1a', '"double"', 'ünïcödé ✓', '?', "'?'", '', 'Ctrl-A \u0001 inside']

describe('inlineValues', () => {
  const statements = filters.flatMap((filter) => [
    compileBookingsQuery(db, filter, 'booking'),
    compileBookingsQuery(db, filter, 'service', { customer: false }, false),
    compileCountQuery(db, filter),
    compileBookingsPage(db, filter, 50, 100),
  ])
  statements.push(compileRulesQuery(db, 10))

  it('writes each statement the service sends as mysql2 formats it', () => {
    expect(statements.filter((statement) => statement.parameters.length > 0)).to.have.length.greaterThan(12)
    for (const statement of statements) {
      expect(inlineValues(statement.sql, statement.parameters)).to.equal(format(statement.sql, statement.parameters as string[]))
    }
  })

  it('writes values that need escaping as mysql2 escapes them, the same text given other values', () => {
    const sql = compileBookingsQuery(db, { statuses: ['a', 'b'], bookingDate: { from: 'x', to: 'y' } }, 'booking').sql
    for (let i = 0; i + 4 <= AWKWARD.length; i++) {
      const values = AWKWARD.slice(i, i + 4)
      expect(inlineValues(sql, values)).to.equal(format(sql, values))
    }
  })

  it('writes numbers, booleans and NULL as mysql2 does', () => {
    const sql = 'SELECT ?, ?, ?, ?, ?, ?'
    const values = [0, -1.5, 12345678901234, true, false, null]
    expect(inlineValues(sql, values)).to.equal('SELECT 0, -1.5, 12345678901234, true, false, NULL')
    expect(inlineValues(sql, values)).to.equal(format(sql, values))
    expect(inlineValues('SELECT ?', [10n])).to.equal('SELECT 10')
  })

  it('skips a question mark in quotes, backticks or comments, as mysql2 does', () => {
    const sql = "SELECT '?' AS `a?`, ? /* ? */ FROM t -- ?\nWHERE x = ? AND y = \"?\""
    expect(inlineValues(sql, [1, 'two'])).to.equal("SELECT '?' AS `a?`, 1 /* ? */ FROM t -- ?\nWHERE x = 'two' AND y = \"?\"")
    expect(inlineValues(sql, [1, 'two'])).to.equal(format(sql, [1, 'two'] as never))
  })

  it('cuts a text it has not met before (drawn at random: the cut texts are kept for the whole process)', () => {
    const sql = `SELECT ? AS \`c${Math.random().toString(36).slice(2)}\`, ?`
    expect(inlineValues(sql, [7, 'x'])).to.equal(format(sql, [7, 'x'] as never))
  })

  it('leaves a statement without values as it is, even one holding the character it cuts with', () => {
    expect(inlineValues('SELECT ? FROM t', [])).to.equal('SELECT ? FROM t')
    expect(inlineValues("SELECT '\u0001'", [])).to.equal("SELECT '\u0001'")
  })

  it('gives the values back to mysql2 when one is an object, which mysql2 may expand', () => {
    expect(inlineValues('SELECT * FROM t WHERE id IN (?)', [[1, 2]])).to.equal(undefined)
    expect(inlineValues('UPDATE t SET ?', [{ a: 1 }])).to.equal(undefined)
    expect(inlineValues('SELECT ?', [new Date(0)])).to.equal(undefined)
  })

  it('gives them back when the text has fewer placeholders than values, or holds the character it cuts with', () => {
    expect(inlineValues('SELECT ?', [1, 2])).to.equal(undefined)
    expect(inlineValues('SELECT 1', [1])).to.equal(undefined)
    expect(inlineValues("SELECT '\u0001', ?", [1])).to.equal(undefined)
  })

  it('writes as many values as given where the text has more placeholders, as mysql2 does', () => {
    expect(inlineValues('SELECT ?, ?, ?', [1])).to.equal(format('SELECT ?, ?, ?', [1] as never))
    // The same text with another number of values afterwards.
    expect(inlineValues('SELECT ?, ?, ?', [1, 2, 3])).to.equal('SELECT 1, 2, 3')
    expect(inlineValues('SELECT ?, ?, ?', [4])).to.equal('SELECT 4, ?, ?')
  })

  it('a double question mark is an identifier to mysql2: given back, never written as a value', () => {
    expect(inlineValues('SELECT ?? FROM t WHERE a = ?', ['col', 1])).to.equal(undefined)
  })
})

describe('CutTexts: each text cut once, a bounded number kept', () => {
  it('gives back the cut it kept for the same text and number of values, and cuts anew for another number', () => {
    const cuts = new CutTexts(10)
    const first = cuts.cutFor('SELECT ?, ?', 2)
    expect(first).to.deep.equal({ count: 2, parts: ['SELECT ', ', ', ''] })
    expect(cuts.cutFor('SELECT ?, ?', 2)).to.equal(first)
    expect(cuts.cutFor('SELECT ?, ?', 1)).to.deep.equal({ count: 1, parts: ['SELECT ', ', ?'] })
    expect(cuts.cutFor('SELECT ?, ?', 2)).to.not.equal(first)
    expect(cuts.cutFor('SELECT ?', 2)).to.deep.equal({ count: 2, parts: null })
    expect(cuts.size).to.equal(2)
  })

  it('keeps up to maxTexts texts, each kept as it was; one more forgets them all and keeps that one', () => {
    const cuts = new CutTexts(3)
    const texts = ['SELECT ?', 'SELECT ? + 1', 'SELECT ? + 2']
    const kept = texts.map((sql) => cuts.cutFor(sql, 1))
    expect(cuts.size).to.equal(3)
    texts.forEach((sql, i) => expect(cuts.cutFor(sql, 1), sql).to.equal(kept[i]))
    const fourth = cuts.cutFor('SELECT ? + 3', 1)
    expect(cuts.size).to.equal(1)
    expect(cuts.cutFor('SELECT ? + 3', 1)).to.equal(fourth)
    expect(cuts.cutFor('SELECT ?', 1)).to.not.equal(kept[0])
    expect(cuts.size).to.equal(2)
  })
})

describe('withValuesInlined', () => {
  it('hands mysql2 the text with its values and NO_VALUES, or both as given when they cannot be written in', () => {
    expect(withValuesInlined('SELECT ?', [1])).to.deep.equal({ sql: 'SELECT 1', values: [] })
    expect(withValuesInlined('SELECT ?', [1]).values).to.equal(NO_VALUES)
    const list = [[1, 2]]
    expect(withValuesInlined('SELECT * FROM t WHERE id IN (?)', list)).to.deep.equal({ sql: 'SELECT * FROM t WHERE id IN (?)', values: list })
  })
})

describe('formatStatement (the pools\' queryFormat)', () => {
  it('sends a statement without values as it is, placeholders and all', () => {
    expect(formatStatement('SELECT ? FROM t', [])).to.equal('SELECT ? FROM t')
    expect(formatStatement('SELECT ?', undefined)).to.equal('SELECT ?')
  })

  it('sends a statement whose values are in its text already (NO_VALUES) as it is', () => {
    expect(formatStatement('SELECT ? FROM t', NO_VALUES)).to.equal('SELECT ? FROM t')
  })

  it('formats any other as mysql2 does, objects as mysql2 writes them', () => {
    expect(formatStatement('SELECT ?, ?', [1, "it's"])).to.equal("SELECT 1, 'it\\'s'")
    expect(formatStatement('SELECT ?', 5)).to.equal(format('SELECT ?', 5))
    expect(formatStatement('UPDATE t SET ?', [{ a: 1 }])).to.equal('UPDATE t SET `a` = 1')
  })
})
