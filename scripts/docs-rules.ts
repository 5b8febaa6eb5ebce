// The rules of the docs check (scripts/check-docs.ts, run by npm test): pure
// functions over a page's text and what the repository holds, each giving one
// problem per line with the way to fix it. tests/unit/check-docs.test.ts shows
// each rule failing on a broken example.

export interface Problem {
  file: string
  line: number
  what: string
  fix: string
}

/** What the rules may ask of the repository: whether a path exists, and a Markdown file's anchors. */
export interface RepoView {
  /** Whether this path (relative to the repository's root, `/`-separated, no `..` left) is a file or folder. */
  exists(path: string): boolean
  /** The anchors of a Markdown file (GitHub's slugs of its headings, and explicit ids); undefined when it is not there. */
  anchorsOf(path: string): Set<string> | undefined
  /** A Markdown file's section names as a comment may give them (sectionNamesOf); undefined when it is not there. */
  sectionsOf(path: string): Set<string> | undefined
}

export const PAGE_KINDS = ['tutorial', 'how-to', 'reference', 'explanation'] as const

export function formatProblem(problem: Problem): string {
  return `${problem.file}:${problem.line}: ${problem.what} — ${problem.fix}`
}

/** `a/b/../c/./d` as `a/c/d`; undefined when it climbs above the root. */
export function normalisePath(path: string): string | undefined {
  const out: string[] = []
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (out.length === 0) return undefined
      out.pop()
    } else {
      out.push(part)
    }
  }
  return out.join('/')
}

const dirOf = (file: string) => file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : ''

/** A Markdown heading's text as GitHub renders it: code spans, links, emphasis and tags reduced to their text. */
function headingText(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*)/g, '')
    .trim()
}

/** GitHub's anchor for a heading's text (github-slugger): lower case, punctuation dropped, each space a hyphen. */
export function githubSlug(text: string): string {
  return headingText(text).toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

interface Line {
  number: number
  text: string
}

/** The lines of a Markdown page outside fenced code blocks. */
function proseLines(text: string): Line[] {
  const out: Line[] = []
  let fence: string | undefined
  text.split('\n').forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined
      return
    }
    if (fence === undefined) out.push({ number: index + 1, text: line })
  })
  return out
}

/** The headings of a Markdown page: level, text and line. */
export function headingsOf(text: string): { level: number; text: string; line: number }[] {
  return proseLines(text).flatMap(({ number, text: line }) => {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line)
    return match ? [{ level: match[1]!.length, text: match[2]!, line: number }] : []
  })
}

/** Every anchor of a page: its headings' slugs (a repeated one gets -1, -2, …) and explicit `id`/`name` attributes. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const heading of headingsOf(text)) {
    const slug = githubSlug(heading.text)
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!)
  return anchors
}

/**
 * The names a comment may give a page's sections by, as slugs: each heading's whole text,
 * and its text before a colon or a parenthesis ("Site settings" for "Site settings: `{prefix}options`").
 */
export function sectionNamesOf(text: string): Set<string> {
  const names = new Set<string>()
  for (const heading of headingsOf(text)) {
    const plain = headingText(heading.text)
    names.add(githubSlug(plain))
    const short = /^(.*?)\s*[:(]/.exec(plain)?.[1]
    if (short) names.add(githubSlug(short))
  }
  return names
}

const withoutCodeSpans = (line: string) => line.replace(/(`+)(?:(?!\1).)+\1/g, (span) => ' '.repeat(span.length))

/** The link targets of a page, outside code: inline links and images, reference definitions, href and src. */
export function linksOf(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = []
  for (const { number, text: raw } of proseLines(text)) {
    const line = withoutCodeSpans(raw)
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: number, target: match[1]! })
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line)
    if (definition) out.push({ line: number, target: definition[1]! })
    for (const match of line.matchAll(/\b(?:href|src)="([^"]*)"/g)) out.push({ line: number, target: match[1]! })
  }
  return out
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')

function decode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** Rule 1: every relative link and `#anchor` of a Markdown file resolves, with GitHub's slugs. */
export function checkLinks(file: string, text: string, repo: RepoView): Problem[] {
  const problems: Problem[] = []
  for (const { line, target } of linksOf(text)) {
    if (target === '' || isExternal(target)) continue
    const hash = target.indexOf('#')
    const pathPart = decode(hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '')
    const anchor = hash < 0 ? undefined : decode(target.slice(hash + 1))
    const path = pathPart === '' ? file : normalisePath(pathPart.startsWith('/') ? pathPart : `${dirOf(file)}/${pathPart}`)
    if (path !== file && (path === undefined || !repo.exists(path))) {
      problems.push({ file, line, what: `link to ${target}: no such file`, fix: 'point it at an existing file (paths are relative to this page), or create the page' })
      continue
    }
    if (path === undefined || anchor === undefined || anchor === '' || !path.endsWith('.md')) continue
    const anchors = path === file ? anchorsOf(text) : repo.anchorsOf(path)
    if (anchors && !anchors.has(anchor)) {
      problems.push({ file, line, what: `link to ${target}: ${path} has no heading #${anchor}`, fix: `use one of its anchors (GitHub's slug of a heading), or link to the page without #${anchor}` })
    }
  }
  return problems
}

/** Rule 5: a page under docs/ says its kind right under its title: `> Kind: tutorial|how-to|reference|explanation`. */
export function checkKindLine(file: string, text: string): Problem[] {
  const lines = text.split('\n')
  const title = lines.findIndex((line) => /^#\s/.test(line))
  const next = title < 0 ? undefined : lines.slice(title + 1).findIndex((line) => line.trim() !== '')
  const kindLine = title < 0 || next === undefined || next < 0 ? undefined : lines[title + 1 + next]
  const pattern = new RegExp(`^> Kind: (${PAGE_KINDS.join('|')})(?:$|\\s)`)
  if (kindLine !== undefined && pattern.test(kindLine)) return []
  return [{
    file, line: title < 0 ? 1 : title + 2 + Math.max(next ?? 0, 0),
    what: 'no kind line under the page\'s title',
    fix: `put "> Kind: ${PAGE_KINDS.join(' | ')}" (one of them) on the first line after the H1 (docs layout)`,
  }]
}

/**
 * The table rows of a page (outside code) with the backticked names in their first cell; with
 * `header`, only the rows of tables whose header's first cell is that word.
 */
function firstCellNames(lines: Line[], name: RegExp, header?: string): { line: number; names: string[] }[] {
  const out: { line: number; names: string[] }[] = []
  let previous: number | undefined
  let wanted = header === undefined
  for (const { number, text } of lines) {
    const isRow = /^\s*\|/.test(text)
    const startsTable = isRow && previous !== number - 1
    if (isRow) previous = number
    if (startsTable && header !== undefined) wanted = (text.split('|')[1] ?? '').trim().toLowerCase() === header
    if (!isRow || startsTable || /^\s*\|\s*:?-+/.test(text) || !wanted) continue
    const cell = text.split('|')[1] ?? ''
    const names = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((n) => name.test(n))
    if (names.length > 0) out.push({ line: number, names })
  }
  return out
}

/** Rule 2: docs/configuration.md's tables name every variable of server/config.ts's schema (first cell, backticked), and no other. */
export function checkConfigurationPage(file: string, text: string, schemaVariables: readonly string[]): Problem[] {
  const problems: Problem[] = []
  const documented = new Map<string, number>()
  for (const row of firstCellNames(proseLines(text), /^[A-Z][A-Z0-9_]*$/)) {
    for (const name of row.names) if (!documented.has(name)) documented.set(name, row.line)
  }
  for (const name of schemaVariables) {
    if (!documented.has(name)) {
      problems.push({ file, line: 1, what: `${name} is read by server/config.ts but not documented`, fix: `add a row for \`${name}\` (default, what it accepts) to a table of ${file}` })
    }
  }
  for (const [name, line] of documented) {
    if (!schemaVariables.includes(name)) {
      problems.push({ file, line, what: `${name} is documented but server/config.ts's schema does not read it`, fix: 'remove the row, or add the variable to the schema in server/config.ts' })
    }
  }
  return problems
}

interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>
  components?: { schemas?: Record<string, unknown> }
}

/** openapi.json's routes (trailing-slash aliases left out), each with its GET's parameter names. */
export function openApiRoutes(doc: OpenApiDocument): Map<string, string[]> {
  const routes = new Map<string, string[]>()
  for (const [path, item] of Object.entries(doc.paths)) {
    if ('$ref' in item) continue
    const get = item.get as { parameters?: { name: string }[] } | undefined
    if (get) routes.set(path, (get.parameters ?? []).map((p) => p.name))
  }
  return routes
}

/** openapi.json's error codes: those WP_Error's `code` lists, and every `rest_…` its answers' descriptions name. */
export function openApiErrorCodes(doc: OpenApiDocument): Set<string> {
  const codes = new Set<string>()
  const error = doc.components?.schemas?.WP_Error as { properties?: { code?: { examples?: string[]; enum?: string[] } } } | undefined
  for (const code of [...error?.properties?.code?.examples ?? [], ...error?.properties?.code?.enum ?? []]) codes.add(code)
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item)) {
      const responses = (operation as { responses?: Record<string, { description?: string }> }).responses ?? {}
      for (const response of Object.values(responses)) {
        for (const match of (response.description ?? '').matchAll(/\brest_[a-z_]+\b/g)) codes.add(match[0])
      }
    }
  }
  return codes
}

/** A route heading of api.md: `## \`GET /slots\`` (the path as openapi.json writes it, under the namespace's prefix). */
const ROUTE_HEADING = /^`GET (\/[^`\s]*)`$/

/**
 * Rule 3: docs/api.md and openapi.json name the same routes, parameters and error codes.
 * In api.md a route is a heading `` `GET /path` ``; its parameters are the backticked names in
 * the first cell of the tables in its section headed "parameter"; the error codes are the backticked `rest_…`
 * names in the table rows of the section headed "Errors".
 */
export function checkApiPage(file: string, text: string, doc: OpenApiDocument): Problem[] {
  const problems: Problem[] = []
  const lines = proseLines(text)
  const headings = headingsOf(text)
  const sectionLines = (index: number) => {
    const heading = headings[index]!
    const end = headings.slice(index + 1).find((h) => h.level <= heading.level)?.line ?? Infinity
    return lines.filter((l) => l.number > heading.line && l.number < end)
  }
  const routes = openApiRoutes(doc)
  const documented = new Map<string, { line: number; params: Map<string, number> }>()
  headings.forEach((heading, index) => {
    const path = ROUTE_HEADING.exec(heading.text.trim())?.[1]
    if (path === undefined) return
    const params = new Map<string, number>()
    for (const row of firstCellNames(sectionLines(index), /^[a-z_][a-z0-9_[\]]*$/, 'parameter')) for (const name of row.names) if (!params.has(name)) params.set(name, row.line)
    documented.set(path, { line: heading.line, params })
  })
  for (const [path, params] of routes) {
    const page = documented.get(path)
    if (!page) {
      problems.push({ file, line: 1, what: `route GET ${path} is in openapi.json but has no section`, fix: `add a heading "## \`GET ${path}\`" with its parameter table, answer, errors and an example` })
      continue
    }
    for (const name of params) {
      if (!page.params.has(name)) problems.push({ file, line: page.line, what: `parameter ${name} of GET ${path} is in openapi.json but not in its table`, fix: `add a row \`${name}\` (type, default, range) to the parameter table of GET ${path}` })
    }
    for (const [name, line] of page.params) {
      if (!params.includes(name)) problems.push({ file, line, what: `parameter ${name} of GET ${path} is not in openapi.json`, fix: 'remove the row, or add the parameter to the route\'s schema (then npm run openapi)' })
    }
  }
  for (const [path, page] of documented) {
    if (!routes.has(path)) problems.push({ file, line: page.line, what: `route GET ${path} is not in openapi.json`, fix: 'remove the section, or add the route (server/openapi.ts, then npm run openapi)' })
  }
  const codes = openApiErrorCodes(doc)
  const errorsIndex = headings.findIndex((h) => headingText(h.text) === 'Errors')
  const listed = new Map<string, number>()
  if (errorsIndex < 0) {
    problems.push({ file, line: 1, what: 'no section headed "Errors"', fix: 'add "## Errors" with a table of status, code and when' })
  } else {
    for (const { number, text: row } of sectionLines(errorsIndex)) {
      if (!/^\s*\|/.test(row)) continue
      for (const match of row.matchAll(/`(rest_[a-z_]+)`/g)) if (!listed.has(match[1]!)) listed.set(match[1]!, number)
    }
  }
  for (const code of codes) {
    if (errorsIndex >= 0 && !listed.has(code)) problems.push({ file, line: headings[errorsIndex]!.line, what: `error code ${code} is in openapi.json but not in the Errors table`, fix: `add a row for \`${code}\` (status, when) to the Errors table` })
  }
  for (const [code, line] of listed) {
    if (!codes.has(code)) problems.push({ file, line, what: `error code ${code} is not in openapi.json`, fix: 'remove it, or list it in WP_Error\'s code examples (server/http/response-schemas.ts, then npm run openapi)' })
  }
  return problems
}

/** Files beside the repository (../shared: API.md, PLUGIN_TABLES.md, STYLE.md): their anchors, or undefined when that folder is absent. */
export interface SharedView {
  anchorsOf(name: string): Set<string> | undefined
  sectionsOf(name: string): Set<string> | undefined
  present: boolean
}

export interface Comment {
  line: number
  text: string
}

const SHARED_OR_ROOT = /^[A-Z][A-Z_]*\.md$/

/** Where a name in a comment points: a repository path, or a file of ../shared. */
function resolveNamed(name: string, repo: RepoView, shared: SharedView): { anchors?: Set<string>; sections?: Set<string>; missing: boolean; skipped: boolean; label: string } {
  const bare = name === 'README' || name === 'CONTRIBUTING' || name === 'CHANGELOG' ? `${name}.md` : name.replace(/^\.\.\/shared\//, '')
  if (name.startsWith('../shared/') || (SHARED_OR_ROOT.test(bare) && !repo.exists(bare))) {
    if (!shared.present) return { missing: false, skipped: true, label: `../shared/${bare}` }
    const anchors = shared.anchorsOf(bare)
    return { anchors, sections: shared.sectionsOf(bare), missing: anchors === undefined, skipped: false, label: `../shared/${bare}` }
  }
  const path = normalisePath(bare)
  if (path === undefined || !repo.exists(path)) return { missing: true, skipped: false, label: bare }
  const markdown = path.endsWith('.md')
  return { anchors: markdown ? repo.anchorsOf(path) : undefined, sections: markdown ? repo.sectionsOf(path) : undefined, missing: false, skipped: false, label: path }
}

const COMMENT_FILE = /(?<![\w/.*@-])((?:\.\.\/shared\/)?(?:(?:docs|db|server|scripts|tests|tools|docker)\/[\w./-]*[\w-]\.(?:md|ts|sql|json|mjs|cjs|yml|yaml|sh)|[A-Z][A-Z_]*\.md))(?:#([\w-]+))?/g
const COMMENT_SECTION = /(?<![\w/.-])((?:\.\.\/shared\/)?(?:[\w-]+\/)*[\w-]+\.md|README|CONTRIBUTING|CHANGELOG),?[ \t]*(?:\n[ \t]*(?:\*|\/\/)?[ \t]*)?"([^"]+)"/g

/**
 * Rule 4: a code comment that names a file (a page of docs/, a module of db/), an anchor (a
 * page's name, a hash and a slug) or a section (a page's name, a comma and a heading in double
 * quotes; README may go without .md) points to one that exists. Files of
 * ../shared are checked when that folder is there; `skipped` counts those that could not be.
 */
export function checkCommentReferences(file: string, comments: readonly Comment[], repo: RepoView, shared: SharedView): { problems: Problem[]; skipped: number } {
  const problems: Problem[] = []
  let skipped = 0
  for (const comment of comments) {
    const lineAt = (offset: number) => comment.line + (comment.text.slice(0, offset).match(/\n/g)?.length ?? 0)
    for (const match of comment.text.matchAll(COMMENT_FILE)) {
      const [, name, anchor] = match
      const target = resolveNamed(name!, repo, shared)
      if (target.skipped) {
        skipped++
      } else if (target.missing) {
        problems.push({ file, line: lineAt(match.index), what: `comment names ${name}, which does not exist`, fix: 'point it at the file that holds this now, or drop the reference' })
      } else if (anchor !== undefined && target.anchors && !target.anchors.has(anchor)) {
        problems.push({ file, line: lineAt(match.index), what: `comment points to ${name}#${anchor}, a heading ${target.label} does not have`, fix: 'use an anchor the page has (GitHub\'s slug of a heading)' })
      }
    }
    for (const match of comment.text.matchAll(COMMENT_SECTION)) {
      const name = match[1]!
      const section = match[2]!.replace(/\s*\n[ \t]*(?:\*|\/\/)?[ \t]*/g, ' ').trim()
      const target = resolveNamed(name, repo, shared)
      // A skipped or missing file is counted or reported once, by the file names above.
      if (!target.skipped && !target.missing && target.sections && !target.sections.has(githubSlug(section))) {
        problems.push({ file, line: lineAt(match.index), what: `comment points to ${name}, "${section}", a section ${target.label} does not have`, fix: `name a heading ${target.label} has, or point to where this is explained now` })
      }
    }
  }
  return { problems, skipped }
}

/** CONTRIBUTING, "Documentation": no Markdown file over 600 lines; the README, a front door, at most 150. */
export const LINE_CAPS = { default: 600, 'README.md': 150 } as const

/** Rule 6: a Markdown file stays within its cap of lines (LINE_CAPS). */
export function checkPageLength(file: string, text: string): Problem[] {
  const cap = file === 'README.md' ? LINE_CAPS['README.md'] : LINE_CAPS.default
  const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length
  if (lines <= cap) return []
  return [{
    file, line: cap + 1, what: `${lines} lines, over the cap of ${cap}`,
    fix: file === 'README.md'
      ? 'keep the README to what it is, the two commands, three examples and the map of the docs; move the rest to docs/'
      : 'split the page, or move measurements to the bench\'s results files and history to git (CONTRIBUTING, "Documentation")',
  }]
}

/**
 * Rule 7: CHANGELOG.md's last release (its first `## x.y.z` heading) is the version in
 * package.json, and no link holds a placeholder (`OWNER`).
 */
export function checkChangelog(file: string, text: string, packageVersion: string): Problem[] {
  const problems: Problem[] = []
  const release = headingsOf(text).find((heading) => heading.level === 2 && /^\[?\d+\.\d+\.\d+/.test(heading.text))
  const version = release === undefined ? undefined : /^\[?(\d+\.\d+\.\d+)/.exec(release.text)![1]
  if (version !== packageVersion) {
    problems.push({
      file, line: release?.line ?? 1, what: `the last release is ${version ?? 'missing'}, package.json says ${packageVersion}`,
      fix: 'set package.json\'s version to the last release (and package-lock.json\'s), or add the release to the changelog',
    })
  }
  text.split('\n').forEach((line, index) => {
    if (/\bOWNER\b/.test(line)) problems.push({ file, line: index + 1, what: 'a placeholder (OWNER)', fix: 'name the real address, or name the release\'s commit instead of a link' })
  })
  return problems
}
