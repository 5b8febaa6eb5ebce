// Entity tags (API.md, "Conditional requests"; RFC 9110, 8.8.3 and 13.1.2):
// how a tag is written, and whether an If-None-Match header names it. Pure.
import { createHash } from 'node:crypto'
import { SERVICE_VERSION } from './service-version.ts'

/**
 * The scheme: bumped whenever what goes into a tag, or how, changes (v2: a
 * streamed answer's rows hashed as read, the service's version in every tag;
 * v3: a streamed answer's rows as the sum of their CRC-32s, which the
 * database computes for a conditional request, decision 0034).
 */
export const TAG_VERSION = 'v3'

/**
 * A weak tag naming the data `parts` describe: the SHA-256 of their JSON.
 * JSON.stringify writes an object's keys in the order they were set, so the
 * callers build each part the same way every time; any difference in a part
 * (a digest from the database, a parameter, the zone) gives another tag.
 * Weak (W/): equal tags mean equal data, not equal bytes (a feed's DTSTAMP).
 */
export function weakTag(parts: readonly unknown[], version: string = SERVICE_VERSION): string {
  const digest = createHash('sha256').update(JSON.stringify([TAG_VERSION, version, ...parts])).digest('base64url')
  return `W/"${TAG_VERSION}-${digest}"`
}

/** What If-None-Match asks for: any current answer (`*`), or those whose tag is among `tags` (their opaque parts, quotes included). */
export interface IfNoneMatch {
  any: boolean
  tags: string[]
}

/**
 * The If-None-Match header (RFC 9110, 13.1.2: `*` or a list of entity tags,
 * given once or in several header lines). Each member is `"…"` or `W/"…"` of
 * etagc characters (0x21, 0x23–0x7E, 0x80–0xFF); a malformed member is left
 * out, the others still count. `*` counts only alone, as the grammar allows it.
 * Undefined when there is no header or nothing usable in it.
 */
export function parseIfNoneMatch(header: string | readonly string[] | undefined): IfNoneMatch | undefined {
  if (header === undefined) return undefined
  const text = typeof header === 'string' ? header : header.join(',')
  if (text.trim() === '*') return { any: true, tags: [] }
  const tags: string[] = []
  // Member by member: an entity tag (a comma may be inside its quotes), then a
  // comma or the end; anything else is skipped up to the next comma.
  const member = /[\t ]*(?:W\/)?("[\x21\x23-\x7E\x80-\xFF]*")[\t ]*(?:,|$)|[^,]*(?:,|$)/y
  while (member.lastIndex < text.length) {
    const match = member.exec(text)!
    if (match[1] !== undefined) tags.push(match[1])
  }
  return tags.length > 0 ? { any: false, tags } : undefined
}

/**
 * Whether `condition` holds for an answer tagged `tag`: weak comparison, the
 * opaque parts equal whatever W/ says on either side (RFC 9110, 8.8.3.2).
 */
export function noneMatchHits(condition: IfNoneMatch | undefined, tag: string): boolean {
  if (!condition) return false
  if (condition.any) return true
  const opaque = tag.startsWith('W/') ? tag.slice(2) : tag
  return condition.tags.includes(opaque)
}
