// WordPress's `_fields` parameter: which fields of an answer's records are sent.
/**
 * WordPress's `_fields`: keeps only the named fields of a record, in the
 * record's own order. `customer.email` keeps one field of a nested object, as
 * rest_filter_response_fields() does. Unknown names are ignored.
 */
export function pickFields<T extends object>(record: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields) return record
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(record)) {
    if (fields.includes(key)) {
      out[key] = value
      continue
    }
    const nested = fields.filter((field) => field.startsWith(`${key}.`)).map((field) => field.slice(key.length + 1))
    if (nested.length > 0) out[key] = value !== null && typeof value === 'object' ? pickFields(value as object, nested) : value
  }
  return out as Partial<T>
}
