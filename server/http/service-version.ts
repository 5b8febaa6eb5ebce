// What version of the service wrote an answer: package.json's version, and
// ANSWERS_REVISION for a change to how answers are written that comes
// between two releases. Entity tags name both (entity-tag.ts), so an upgrade
// that writes an answer differently never answers 304 for the old bytes.
import { readFileSync } from 'node:fs'

/**
 * Bumped by hand in the commit that changes any answer's bytes or what a tag
 * hashes (a field, an escape, a CSV column, the row tagger), as a release's
 * version is: docs/conditional-requests.md, "A tag names the service's version".
 */
export const ANSWERS_REVISION = 1

/** package.json's version: two folders up from server/http/ here, three from dist/server/http/ in the image. */
export function packageVersion(): string {
  for (const path of ['../../package.json', '../../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { version: string }).version
    } catch { /* try the next */ }
  }
  return '0.0.0'
}

/** What every tag of this service names: its version and its answers' revision. */
export const SERVICE_VERSION = `${packageVersion()}+answers.${ANSWERS_REVISION}`
