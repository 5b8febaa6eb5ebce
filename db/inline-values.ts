// A statement's values written into its text before mysql2 sees it, as
// mysql2's own format() would write them, without format()'s search for the
// placeholders on every call.
//
// mysql2 formats every statement on the client (text protocol): it scans the
// whole SQL for each `?`, skipping quotes and comments, then escapes each value
// into its place. The service sends the same few dozen statement texts again
// and again (db/compiled-shapes.ts), each about 800 characters, so that scan
// was most of the SQL's cost in a small request (docs/performance.md). Here each text is cut at its placeholders once, by
// format() itself, and a request only joins the pieces and its escaped values.
// The pool's queryFormat (db/connect.ts) then passes a statement without
// values through untouched, as format() would return it.
import { escape, format } from 'mysql2'

/** The values of a statement whose values are in its text already. */
export const NO_VALUES: unknown[] = []

/** What format() would write for `value` (a number as it is, text quoted and escaped); undefined for an object, which format() may expand (lists, SET assignments). */
function escapedValue(value: unknown): string | undefined {
  if (typeof value === 'object' && value !== null) return undefined
  return escape(value as string)
}

// Stands for placeholder i while a text is cut: no statement of ours holds this character.
const MARK = '\u0001'
const MARK_AT = new RegExp(`'${MARK}(\\d+)${MARK}'`)

/** The text cut at its placeholders, as format() finds them; null when format() finds fewer than `count` (or the text holds MARK). */
function cutAtPlaceholders(sql: string, count: number): string[] | null {
  if (sql.includes(MARK)) return null
  const marked = format(sql, Array.from({ length: count }, (_, i) => `${MARK}${i}${MARK}`))
  const pieces = marked.split(MARK_AT)
  // split() with a group: text, index, text, index, ..., text; the indexes must be 0, 1, 2, ... in order.
  if (pieces.length !== 2 * count + 1) return null
  const parts: string[] = []
  for (let i = 0; i < pieces.length; i++) {
    if (i % 2 === 0) parts.push(pieces[i]!)
    else if (pieces[i] !== String((i - 1) / 2)) return null
  }
  return parts
}

/** A text cut for `count` values: its pieces around the placeholders, or null where inlineValues gives the values back. */
export interface CutText {
  count: number
  parts: string[] | null
}

/** Texts already cut, each for the number of values it was last given; past `maxTexts`, all are forgotten at once. */
export class CutTexts {
  readonly #cuts = new Map<string, CutText>()
  readonly #maxTexts: number

  constructor(maxTexts: number) {
    this.#maxTexts = maxTexts
  }

  get size(): number { return this.#cuts.size }

  /** The text cut for `count` values: the one kept from an earlier call with the same count, else cut now (and kept). */
  cutFor(sql: string, count: number): CutText {
    let cut = this.#cuts.get(sql)
    if (cut === undefined || cut.count !== count) {
      cut = { count, parts: cutAtPlaceholders(sql, count) }
      if (this.#cuts.size >= this.#maxTexts) this.#cuts.clear()
      this.#cuts.set(sql, cut)
    }
    return cut
  }
}

/** A site sends a few dozen texts. */
const cutTexts = new CutTexts(1000)

/**
 * `sql` with `values` written in, byte for byte what mysql2's format(sql,
 * values) makes of it; undefined when a value is an object (format() may
 * expand it) or the text has fewer placeholders than values: send the values
 * to mysql2 then, which formats them itself.
 */
export function inlineValues(sql: string, values: readonly unknown[]): string | undefined {
  if (values.length === 0) return sql
  const parts = cutTexts.cutFor(sql, values.length).parts
  if (parts === null) return undefined
  let text = parts[0]!
  for (let i = 0; i < values.length; i++) {
    const value = escapedValue(values[i])
    if (value === undefined) return undefined
    text += value + parts[i + 1]!
  }
  return text
}

/**
 * What to hand mysql2 for `sql` and `values`: the text with the values in it
 * and NO_VALUES, or, where inlineValues cannot write them, both as given.
 */
export function withValuesInlined(sql: string, values: readonly unknown[]): { sql: string; values: unknown[] } {
  const text = inlineValues(sql, values)
  return text === undefined ? { sql, values: values as unknown[] } : { sql: text, values: NO_VALUES }
}

/**
 * The pool's queryFormat: a statement without values as it is (what format()
 * returns for it, without its scan), any other as format() writes it.
 */
export function formatStatement(sql: string, values: unknown, timezone?: string): string {
  // Stryker disable next-line ConditionalExpression: format() returns a text given no values unchanged too; this only skips its scan
  if (Array.isArray(values) && values.length === 0) return sql
  return format(sql, values as string[], false, timezone)
}
