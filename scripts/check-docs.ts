// npm run check-docs (and npm test, before the tests): the docs against the code.
// Links, anchors and length of every Markdown file, CHANGELOG.md against package.json's
// version, configuration.md against server/config.ts's
// schema, api.md against openapi.json, file and section names in code comments, and
// each docs/ page's kind line (scripts/docs-rules.ts holds the rules). One line per
// problem, file:line, what and how to fix it; exit 1 when there is any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { CONFIG_VARIABLES } from '../server/config.ts'
import {
  anchorsOf, sectionNamesOf, checkApiPage, checkChangelog, checkCommentReferences, checkConfigurationPage, checkKindLine, checkLinks, checkPageLength, formatProblem,
  type Comment, type Problem, type RepoView, type SharedView,
} from './docs-rules.ts'

const root = resolve(new URL('..', import.meta.url).pathname)
const SKIPPED_FOLDERS = new Set(['node_modules', '.git', 'dist', 'reports', '.stryker-tmp', '.scratch', 'tools'])

function filesUnder(folder: string, keep: (name: string) => boolean): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    if (!existsSync(dir)) return
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) walk(full)
      } else if (keep(entry.name)) {
        out.push(relative(root, full).split('\\').join('/'))
      }
    }
  }
  walk(join(root, folder))
  return out.sort()
}

const pageCache = new Map<string, { anchors: Set<string>; sections: Set<string> } | undefined>()
function page(full: string) {
  if (!pageCache.has(full)) {
    const text = existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined
    pageCache.set(full, text === undefined ? undefined : { anchors: anchorsOf(text), sections: sectionNamesOf(text) })
  }
  return pageCache.get(full)
}

const repo: RepoView = {
  exists: (path) => existsSync(join(root, path)),
  anchorsOf: (path) => page(join(root, path))?.anchors,
  sectionsOf: (path) => page(join(root, path))?.sections,
}

/** ../shared beside the clone (as CI has it), else the session's /work/shared. */
const sharedFolder = [resolve(root, '../shared'), '/work/shared'].find((dir) => existsSync(join(dir, 'API.md')))
const shared: SharedView = {
  present: sharedFolder !== undefined,
  anchorsOf: (name) => sharedFolder === undefined ? undefined : page(join(sharedFolder, name))?.anchors,
  sectionsOf: (name) => sharedFolder === undefined ? undefined : page(join(sharedFolder, name))?.sections,
}

/** A source file's comments, consecutive `//` lines joined into one. */
function commentsOf(text: string): Comment[] {
  const source = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false)
  const ranges = new Map<number, ts.CommentRange>()
  const visit = (node: ts.Node) => {
    for (const range of [...ts.getLeadingCommentRanges(text, node.pos) ?? [], ...ts.getTrailingCommentRanges(text, node.end) ?? []]) ranges.set(range.pos, range)
    ts.forEachChild(node, visit)
  }
  visit(source)
  const sorted = [...ranges.values()].sort((a, b) => a.pos - b.pos)
  const comments: Comment[] = []
  let previous: ts.CommentRange | undefined
  for (const range of sorted) {
    const body = text.slice(range.pos, range.end)
    const joinable = previous && previous.kind === ts.SyntaxKind.SingleLineCommentTrivia && range.kind === ts.SyntaxKind.SingleLineCommentTrivia &&
      /^\s*$/.test(text.slice(previous.end, range.pos)) && (text.slice(previous.end, range.pos).match(/\n/g)?.length ?? 0) === 1
    if (joinable) comments[comments.length - 1]!.text += `\n${body}`
    else comments.push({ line: source.getLineAndCharacterOfPosition(range.pos).line + 1, text: body })
    previous = range
  }
  return comments
}

export function collectDocProblems(): { problems: Problem[]; notes: string[] } {
  const problems: Problem[] = []
  const notes: string[] = []
  const pages = filesUnder('.', (name) => name.endsWith('.md'))
  for (const page of pages) problems.push(...checkLinks(page, readFileSync(join(root, page), 'utf8'), repo))
  for (const page of pages) problems.push(...checkPageLength(page, readFileSync(join(root, page), 'utf8')))
  const packageVersion = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
  problems.push(...checkChangelog('CHANGELOG.md', readFileSync(join(root, 'CHANGELOG.md'), 'utf8'), packageVersion))
  for (const page of pages.filter((p) => p.startsWith('docs/'))) problems.push(...checkKindLine(page, readFileSync(join(root, page), 'utf8')))
  problems.push(...checkConfigurationPage('docs/configuration.md', readFileSync(join(root, 'docs/configuration.md'), 'utf8'), CONFIG_VARIABLES))
  const openApi = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as Parameters<typeof checkApiPage>[2]
  problems.push(...checkApiPage('docs/api.md', readFileSync(join(root, 'docs/api.md'), 'utf8'), openApi))
  let skipped = 0
  for (const file of ['server', 'db', 'scripts', 'tests'].flatMap((dir) => filesUnder(dir, (name) => /\.(ts|mjs|cjs)$/.test(name)))) {
    const result = checkCommentReferences(file, commentsOf(readFileSync(join(root, file), 'utf8')), repo, shared)
    problems.push(...result.problems)
    skipped += result.skipped
  }
  if (skipped > 0) notes.push(`${skipped} references to ../shared (API.md, PLUGIN_TABLES.md, STYLE.md) not checked: no ../shared/API.md beside the clone`)
  return { problems, notes }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const { problems, notes } = collectDocProblems()
  for (const note of notes) process.stdout.write(`[check-docs] ${note}\n`)
  for (const problem of problems) process.stdout.write(`${formatProblem(problem)}\n`)
  process.stdout.write(problems.length === 0 ? '[check-docs] the docs agree with the code\n' : `[check-docs] ${problems.length} problems\n`)
  process.exit(problems.length === 0 ? 0 : 1)
}
