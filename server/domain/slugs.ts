// Service slugs as WordPress stores them in post_name, and as a person types them.
import { remember } from './remember.ts'

const TRASHED_SUFFIX = '__trashed'

/**
 * A stored post_name as the slug a person typed: WordPress stores non-ASCII
 * slugs percent-encoded, and appends `__trashed` when a post goes to the trash.
 */
export function decodeSlug(postName: string): string {
  const name = postName.endsWith(TRASHED_SUFFIX) ? postName.slice(0, -TRASHED_SUFFIX.length) : postName
  try {
    return decodeURIComponent(name)
  } catch {
    // A stray "%" that is no escape: the stored text is the best answer.
    return name
  }
}

/**
 * The forms a `service` slug may be stored in: as given, and lower-cased then
 * percent-encoded in lower case the way WordPress's sanitize_title() stores
 * non-ASCII slugs (`стрижка` → `%d1%81%d1%82…`). ASCII characters stay as they are.
 */
export function storedSlugForms(slug: string): string[] {
  const lower = slug.toLowerCase()
  let encoded = ''
  for (const char of lower) {
    if (char.charCodeAt(0) < 0x80) {
      encoded += char
    } else {
      // Its UTF-8 bytes (Buffer.from's encoding), each 0x80 or more: two hex digits.
      for (const byte of Buffer.from(char)) encoded += `%${byte.toString(16)}`
    }
  }
  return [...new Set([slug, encoded])]
}

/** decodeSlug, remembered per post_name: a million bookings name at most a few hundred services. */
export function createSlugDecoder(): (postName: string | null) => string | null {
  const cache = new Map<string, string>()
  return (postName) => (postName === null ? null : remember(cache, 10_000, postName, decodeSlug))
}
