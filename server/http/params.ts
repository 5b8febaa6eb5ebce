// Query parameters as WordPress reads them: unknown ones are ignored, `name[]`
// and a repeated name give a list, and each route validates its own with one zod
// schema whose failures become 400 rest_invalid_param with a sentence per parameter.
import { z } from 'zod'
import { invalidParams } from '../errors.ts'
import { isBeforeYear1000, parseDateParam } from '../domain/date-param.ts'
import { parseBooleanWord, parseWholeNumber } from '../parse-text.ts'

/** Every value of every parameter, `status[]` and `status[0]` folded into `status`. */
export type RawQuery = Record<string, string[]>

/** The parameter a decoded name stands for: `status[]` and `status[0]` are `status`. */
export function parameterName(key: string): string {
  // Only a name ending in `]` can be a `name[]` form: the others skip the expression.
  // Stryker disable next-line StringLiteral,ConditionalExpression: the expression itself needs the `]` at the end; skipping it is only faster
  return key.endsWith(']') ? /^([^[\]]+)\[[^\]]*\]$/.exec(key)?.[1] ?? key : key
}

/**
 * The parameter a name in nested brackets stands for (`service[x][y]`, which
 * PHP reads as an array of arrays); undefined for any other name. collectQuery
 * leaves such a pair out, and parseParams refuses it for a parameter of the route.
 */
export function nestedParameterName(key: string): string | undefined {
  // Stryker disable next-line StringLiteral,ConditionalExpression: the expression itself needs the `]` at the end; skipping it is only faster
  return key.endsWith(']') ? /^([^[\]]+)(?:\[[^\]]*\]){2,}$/.exec(key)?.[1] : undefined
}

/** The name of a raw `name=value` pair of a query string, decoded as the query parser decodes it (`+` a space). */
export function decodedPairName(pair: string): string {
  const name = pair.split('=', 1)[0]!.replace(/\+/g, ' ')
  try {
    return decodeURIComponent(name)
  } catch {
    return name
  }
}

export function collectQuery(query: Record<string, unknown>): RawQuery {
  // No prototype: a parameter named `toString`, `constructor` or `__proto__` is one more unknown name, not a list already there.
  const out: RawQuery = Object.create(null) as RawQuery
  for (const key of Object.keys(query)) {
    if (nestedParameterName(key) !== undefined) continue
    const value = query[key]
    const list = (out[parameterName(key)] ??= [])
    if (typeof value === 'string') list.push(value)
    else if (Array.isArray(value)) for (const v of value) if (typeof v === 'string') list.push(v)
  }
  return out
}

/**
 * Parses a route's parameters with its schema; the first problem of each
 * parameter is reported. A parameter of the route given in nested brackets
 * (`service[x][y]=haircut`) is refused, as WordPress refuses the array of
 * arrays PHP makes of it: left out, it would drop its filter without a word.
 */
export function parseParams<S extends z.ZodObject>(schema: S, query: Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(collectQuery(query))
  const nested = nestedParams(schema, query)
  if (parsed.success && nested === undefined) return parsed.data
  const params: Record<string, string> = {}
  for (const name of nested ?? []) {
    params[name] ??= `${name} must be given as ${name}=…, not in nested brackets (${name}[…][…]).`
  }
  for (const issue of parsed.error?.issues ?? []) {
    const name = String(issue.path[0] ?? 'query')
    params[name] ??= issue.code === 'custom' ? issue.message : `${name} is not valid.`
  }
  throw invalidParams(params)
}

/** The parameters of `schema` that `query` gives in nested brackets, if any. */
function nestedParams(schema: z.ZodObject, query: Record<string, unknown>): string[] | undefined {
  let found: string[] | undefined
  for (const key of Object.keys(query)) {
    const name = nestedParameterName(key)
    if (name !== undefined && Object.hasOwn(schema.shape, name)) (found ??= []).push(name)
  }
  return found
}

/**
 * For a check across parameters (`.superRefine(check, whenValid('page', 'per_page'))`):
 * it runs when the parameters it reads are valid, even when others are not, so
 * `start=x&page=2` reports both problems at once.
 */
export function whenValid(...names: string[]): z.core.$ZodSuperRefineParams {
  return { when: (payload) => payload.issues.every((issue) => !names.includes(String(issue.path?.[0]))) }
}

/**
 * The check of start against end for a route that takes both; dates compare as
 * their `YYYY-MM-DD` text. Usage: `.superRefine(startNotAfterEnd)`.
 */
export function startNotAfterEnd<T extends { start?: string | undefined; end?: string | undefined }>(params: T, ctx: z.core.$RefinementCtx<T>): void {
  // Either missing, or in order: nothing to say.
  if (!params.start || !params.end || params.start <= params.end) return
  ctx.addIssue({ code: 'custom', path: ['start'], message: `start must not be after end (${params.start} is after ${params.end}).` })
}

/** What the namespace index and the OpenAPI document say of a parameter. */
export interface ParamMeta {
  type: 'string' | 'integer' | 'boolean' | 'array'
  description: string
  enum?: readonly string[]
  items?: { type: 'string'; enum?: readonly string[] }
  default?: unknown
  pattern?: string
  /** Words taken in any letter case (the OpenAPI document says so with a pattern; the index leaves it out). */
  caseInsensitive?: boolean
  minimum?: number
  maximum?: number
}

const values = z.array(z.string()).optional()
type Ctx = z.core.$RefinementCtx<string[] | undefined>

function fail(ctx: Ctx, message: string): never {
  ctx.addIssue({ code: 'custom', message })
  return z.NEVER
}

/** The one value of a parameter that takes one; given twice is an error (API.md, "Parameters"). */
function single(name: string, list: string[] | undefined, ctx: Ctx): string | undefined {
  if (list !== undefined && list.length > 1) fail(ctx, `${name} must be given only once.`)
  return list?.[0]
}

/** A comma-separated list, also as `name[]=a&name[]=b` or a repeated name; blanks dropped. */
function splitList(list: string[]): string[] {
  return list.flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value !== '')
}

/**
 * The three forms of a date as one regular expression, for the namespace index
 * and the OpenAPI document: `format: date` would deny DD.MM.YYYY and DD/MM/YYYY.
 */
export const DATE_PARAM_PATTERN = '^(\\d{4}-\\d{2}-\\d{2}|\\d{2}\\.\\d{2}\\.\\d{4}|\\d{2}/\\d{2}/\\d{4})$'

export function dateParam(name: string, description: string) {
  return values.transform((list, ctx) => {
    const value = single(name, list, ctx)
    if (value === undefined) return undefined
    return parseDateParam(value) ?? fail(ctx, isBeforeYear1000(value)
      ? `${name} must be 1000-01-01 or later: years before 1000 are outside the database's dates.`
      : `${name} must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.`)
  }).meta({ type: 'string', pattern: DATE_PARAM_PATTERN, description } satisfies ParamMeta)
}

/** One of a few words; `caseInsensitive` for those API.md says accept any letter case. */
export function enumParam<const T extends readonly string[]>(name: string, choices: T, fallback: T[number], description: string, caseInsensitive = false) {
  return values.transform((list, ctx): T[number] => {
    const value = single(name, list, ctx)
    if (value === undefined) return fallback
    const wanted = caseInsensitive ? value.toLowerCase() : value
    return choices.find((choice) => choice === wanted) ?? fail(ctx, `${name} must be one of: ${choices.join(', ')}.`)
  }).meta({ type: 'string', enum: choices, default: fallback, description, ...(caseInsensitive ? { caseInsensitive } : {}) } satisfies ParamMeta)
}

/**
 * A list of words from a fixed set; spaces and letter case ignored. An empty
 * list (`status=`) is as if not given, as WordPress reads an empty list parameter.
 */
export function enumListParam<const T extends readonly string[]>(name: string, choices: T, description: string) {
  return values.transform((list, ctx): T[number][] | undefined => {
    const items = list && splitList(list).map((value) => value.toLowerCase())
    if (items === undefined || items.length === 0) return undefined
    const unknown = items.filter((item) => !choices.includes(item))
    if (unknown.length > 0) fail(ctx, `${name} must be one or more of ${choices.join(', ')}, comma-separated (got ${unknown.map((u) => `"${u}"`).join(', ')}).`)
    return [...new Set(items)] as T[number][]
  }).meta({ type: 'array', items: { type: 'string', enum: choices }, description } satisfies ParamMeta)
}

/** Free names, comma-separated (`_fields`); empty is as if not given, as WordPress's `_fields=` gives whole records. */
export function nameListParam(description: string) {
  return values.transform((list) => {
    const items = list && splitList(list)
    return items === undefined || items.length === 0 ? undefined : [...new Set(items)]
  }).meta({ type: 'array', items: { type: 'string' }, description } satisfies ParamMeta)
}

export function integerParam(name: string, min: number, max: number, description: string) {
  return values.transform((list, ctx) => {
    const value = single(name, list, ctx)
    if (value === undefined) return undefined
    const n = parseWholeNumber(value, min, max)
    if (n !== undefined) return n
    // "at least 1" alone would mislead a page number too large for the service.
    const tooLarge = Number(value) > max
    return fail(ctx, max === Number.MAX_SAFE_INTEGER && !tooLarge ? `${name} must be a whole number of at least ${min}.` : `${name} must be a whole number from ${min} to ${max}.`)
  }).meta({ type: 'integer', minimum: min, maximum: max, description } satisfies ParamMeta)
}

/** API.md's booleans: 1, true, 0, false in any case; present with no value (`?flat`, `flat=`) means true. */
export function booleanParam(name: string, description: string) {
  return values.transform((list, ctx) => {
    const value = single(name, list, ctx)
    if (value === undefined) return false
    return parseBooleanWord(value, { true: ['', '1', 'true'], false: ['0', 'false'] })
      ?? fail(ctx, `${name} must be true or false (1, true, 0 or false).`)
  }).meta({ type: 'boolean', default: false, description } satisfies ParamMeta)
}

/**
 * `bom` of the CSV exports (API.md, "Spreadsheets and BI tools"): a byte-order
 * mark before the header row, for Excel, which reads a downloaded CSV without
 * one in the local code page. On JSON it is ignored, as WordPress ignores a
 * parameter that does not apply, but still checked, as `flat` is on CSV.
 */
export function bomParam() {
  return booleanParam('bom', 'CSV only: start the file with a UTF-8 byte-order mark (EF BB BF), so that Excel reads a downloaded file as UTF-8. Ignored for JSON.')
}

/** One free text value, as given (a token); empty is as if not given. */
export function textParam(name: string, description: string) {
  return values.transform((list, ctx) => {
    const value = single(name, list, ctx)
    return value === undefined || value === '' ? undefined : value
  }).meta({ type: 'string', description } satisfies ParamMeta)
}

/** A service ID or slug; resolved against the database by the route. */
export function serviceParam(description: string) {
  return values.transform((list, ctx) => {
    const value = single('service', list, ctx)
    if (value === undefined) return undefined
    return value.trim() !== '' ? value.trim() : fail(ctx, 'service must be a service ID or slug.')
  }).meta({ type: 'string', description } satisfies ParamMeta)
}

/** The parameters of a route with what the index and OpenAPI say of each (from the schemas' meta). */
export function describeParams(schema: z.ZodObject): Record<string, ParamMeta> {
  const out: Record<string, ParamMeta> = {}
  for (const [name, field] of Object.entries(schema.shape)) {
    out[name] = (field as z.ZodType).meta() as unknown as ParamMeta
  }
  return out
}
