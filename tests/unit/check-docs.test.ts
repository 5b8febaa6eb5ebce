// The docs check's rules (scripts/docs-rules.ts): each passes a sound example and
// fails on a broken one, naming the file, the line and the fix.
import { expect } from 'chai'
import {
  anchorsOf, checkApiPage, checkChangelog, checkCommentReferences, checkConfigurationPage, checkKindLine, checkLinks, checkPageLength, formatProblem,
  githubSlug, sectionNamesOf, type RepoView, type SharedView,
} from '../../scripts/docs-rules.ts'

/** A repository of these files only. */
function repoOf(files: Record<string, string>): RepoView {
  const folders = new Set(Object.keys(files).flatMap((path) => path.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))))
  return {
    exists: (path) => path in files || folders.has(path),
    anchorsOf: (path) => path in files ? anchorsOf(files[path]!) : undefined,
    sectionsOf: (path) => path in files ? sectionNamesOf(files[path]!) : undefined,
  }
}

const sharedOf = (files: Record<string, string> | undefined): SharedView => ({
  present: files !== undefined,
  anchorsOf: (name) => files?.[name] === undefined ? undefined : anchorsOf(files[name]),
  sectionsOf: (name) => files?.[name] === undefined ? undefined : sectionNamesOf(files[name]),
})

describe('docs check', () => {
  describe('GitHub anchors', () => {
    it('slugs headings as GitHub does: lower case, punctuation and code marks dropped, spaces as hyphens', () => {
      expect(githubSlug('`GET slots/`')).to.equal('get-slots')
      expect(githubSlug('The site\'s time zone and public address')).to.equal('the-sites-time-zone-and-public-address')
      expect(githubSlug('`openapi.json` and `docs`')).to.equal('openapijson-and-docs')
      expect(githubSlug('Calendar feeds: `format=ics`')).to.equal('calendar-feeds-formatics')
      expect(githubSlug('Stream permits & the queue')).to.equal('stream-permits--the-queue')
      expect(githubSlug('`_fields` and [links](x.md)')).to.equal('_fields-and-links')
    })

    it('numbers a repeated heading\'s anchor, and skips headings inside code blocks', () => {
      expect([...anchorsOf('# A\n## Example\n```\n# not a heading\n```\n## Example\n<a id="kept"></a>\n')]).to.deep.equal(['a', 'example', 'example-1', 'kept'])
    })
  })

  describe('rule 1: links and anchors', () => {
    const repo = repoOf({
      'README.md': '# R\n## Quick start\n',
      'docs/api.md': '# API\n## `GET slots/`\n## Errors\n',
      'docs/decisions/0001-x.md': '# One\n',
    })

    it('passes links that resolve: relative paths, anchors, the page\'s own anchors, folders, URLs', () => {
      const page = '# P\n## Here\n[a](api.md) [b](api.md#get-slots) [c](#here) [d](../README.md#quick-start) [e](decisions/) [f](https://x.test/y#z)\n' +
        '[g]: decisions/0001-x.md\n`[not a link](nowhere.md)`\n```\n[in code](nowhere.md)\n```\n'
      expect(checkLinks('docs/page.md', page, repo)).to.deep.equal([])
    })

    it('fails on a link to a missing page, naming the file and line', () => {
      const problems = checkLinks('docs/page.md', '# P\n\nSee [ops](operations.md).\n', repo)
      expect(problems.map(formatProblem)).to.deep.equal([
        'docs/page.md:3: link to operations.md: no such file — point it at an existing file (paths are relative to this page), or create the page',
      ])
    })

    it('fails on an anchor the target page does not have, and on one of its own', () => {
      const problems = checkLinks('docs/page.md', '# P\n[x](api.md#concurrent-reports)\n[y](#nowhere)\n', repo)
      expect(problems.map((p) => [p.line, p.what])).to.deep.equal([
        [2, 'link to api.md#concurrent-reports: docs/api.md has no heading #concurrent-reports'],
        [3, 'link to #nowhere: docs/page.md has no heading #nowhere'],
      ])
    })

    it('fails on a path that climbs out of the repository', () => {
      expect(checkLinks('README.md', '[up](../elsewhere.md)\n', repo)).to.have.length(1)
    })
  })

  describe('rule 2: configuration.md against the schema', () => {
    const page = '# Configuration\n\n| variable | default |\n|---|---|\n| `PORT` | `8080` |\n| `DB_USER`, `DB_NAME` | |\n'

    it('passes when the tables name exactly the schema\'s variables', () => {
      expect(checkConfigurationPage('docs/configuration.md', page, ['PORT', 'DB_USER', 'DB_NAME'])).to.deep.equal([])
    })

    it('fails on a variable the schema reads and the page does not name', () => {
      expect(checkConfigurationPage('docs/configuration.md', page, ['PORT', 'DB_USER', 'DB_NAME', 'LOG_LEVEL']).map((p) => p.what))
        .to.deep.equal(['LOG_LEVEL is read by server/config.ts but not documented'])
    })

    it('fails on a documented variable the schema does not read, at its row', () => {
      expect(checkConfigurationPage('docs/configuration.md', page, ['PORT', 'DB_USER']).map((p) => [p.line, p.what]))
        .to.deep.equal([[6, 'DB_NAME is documented but server/config.ts\'s schema does not read it']])
    })
  })

  describe('rule 3: api.md against openapi.json', () => {
    const doc = {
      paths: {
        '/slots': { get: { parameters: [{ name: 'start' }, { name: 'per_page' }], responses: { 400: { description: 'rest_invalid_param, or rest_invalid_page_number.' } } } },
        '/slots/': { $ref: '#/paths/~1slots' },
      },
      components: { schemas: { WP_Error: { properties: { code: { examples: ['rest_invalid_param', 'rest_no_route'] } } } } },
    }
    const page = (params: string[], codes: string[], route = '/slots') => [
      '# API', `## \`GET ${route}\``, '| parameter | type |', '|---|---|', ...params.map((p) => `| \`${p}\` | string |`),
      '## Errors', '| status | code |', '|---|---|', ...codes.map((c) => `| 400 | \`${c}\` |`), '',
    ].join('\n')
    const codes = ['rest_invalid_param', 'rest_invalid_page_number', 'rest_no_route']

    it('passes when routes, parameters and error codes agree', () => {
      expect(checkApiPage('docs/api.md', page(['start', 'per_page'], codes), doc)).to.deep.equal([])
    })

    it('reads parameters from the tables headed "parameter" only, not from a route\'s field tables', () => {
      const withFields = page(['start', 'per_page'], codes).replace('## Errors', '\n| field | type |\n|---|---|\n| `id` | integer |\n\n## Errors')
      expect(checkApiPage('docs/api.md', withFields, doc)).to.deep.equal([])
    })

    it('fails on a route openapi.json has and the page does not, and the other way round', () => {
      expect(checkApiPage('docs/api.md', page([], codes, '/bookings'), doc).map((p) => p.what)).to.deep.equal([
        'route GET /slots is in openapi.json but has no section',
        'route GET /bookings is not in openapi.json',
      ])
    })

    it('fails on a parameter missing from the route\'s table, and on one openapi.json does not have', () => {
      expect(checkApiPage('docs/api.md', page(['start', 'page'], codes), doc).map((p) => p.what)).to.deep.equal([
        'parameter per_page of GET /slots is in openapi.json but not in its table',
        'parameter page of GET /slots is not in openapi.json',
      ])
    })

    it('fails on an error code missing from the Errors table, and on one openapi.json does not name', () => {
      expect(checkApiPage('docs/api.md', page(['start', 'per_page'], ['rest_invalid_param', 'rest_no_route', 'rest_teapot']), doc).map((p) => p.what)).to.deep.equal([
        'error code rest_invalid_page_number is in openapi.json but not in the Errors table',
        'error code rest_teapot is not in openapi.json',
      ])
    })
  })

  describe('rule 4: files and sections named in code comments', () => {
    const repo = repoOf({
      'docs/performance.md': '# Performance\n## Indexes\n',
      'README.md': '# R\n## Quick start\n',
      'db/stream-gate.ts': '',
    })
    const shared = sharedOf({ 'API.md': '# API\n## Calendar feeds: `format=ics`\n## Errors\n' })
    const check = (text: string, sharedView = shared) => checkCommentReferences('server/x.ts', [{ line: 10, text }], repo, sharedView)

    it('passes names of files, anchors and sections that exist, here and in ../shared', () => {
      const result = check('// see db/stream-gate.ts, docs/performance.md#indexes, docs/performance.md, "Indexes", README, "Quick start",\n// API.md, "Calendar feeds" and API.md, "Errors"')
      expect(result).to.deep.equal({ problems: [], skipped: 0 })
    })

    it('fails on a file that does not exist, with the comment\'s line', () => {
      expect(check('/**\n * Callers come from server/http/caller.ts.\n */').problems.map((p) => [p.line, p.what]))
        .to.deep.equal([[11, 'comment names server/http/caller.ts, which does not exist']])
    })

    it('fails on an anchor and on a section the page does not have, a section split over two lines included', () => {
      expect(check('// docs/performance.md#concurrent-reports and README, "Sizing", API.md, "Under\n// load"').problems.map((p) => p.what)).to.deep.equal([
        'comment points to docs/performance.md#concurrent-reports, a heading docs/performance.md does not have',
        'comment points to README, "Sizing", a section README.md does not have',
        'comment points to API.md, "Under load", a section ../shared/API.md does not have',
      ])
    })

    it('fails on a shared page that is not there, and skips ../shared references when that folder is absent', () => {
      expect(check('// DEVELOPERS.md, "Quality bar"').problems.map((p) => p.what)).to.deep.equal(['comment names DEVELOPERS.md, which does not exist'])
      expect(check('// API.md, "Under load"', sharedOf(undefined))).to.deep.equal({ problems: [], skipped: 1 })
    })
  })

  describe('rule 5: the kind line of a docs page', () => {
    it('passes a page with its kind right under the title', () => {
      expect(checkKindLine('docs/api.md', '# API reference\n\n> Kind: reference — every route\n\nText.\n')).to.deep.equal([])
    })

    it('fails on a page without one, or with a kind the layout does not know', () => {
      expect(checkKindLine('docs/api.md', '# API reference\n\nEverything a client needs.\n').map((p) => [p.line, p.what]))
        .to.deep.equal([[3, 'no kind line under the page\'s title']])
      expect(checkKindLine('docs/api.md', '# API reference\n> Kind: guide\n')).to.have.length(1)
    })
  })
  describe('rule 6: a page\'s length (CONTRIBUTING, "Documentation")', () => {
    const page = (lines: number) => `${Array.from({ length: lines }, (_, i) => `line ${i + 1}`).join('\n')}\n`
    it('README.md may have 150 lines, not 151; a page of docs/ 600, not 601', () => {
      expect(checkPageLength('README.md', page(150))).to.deep.equal([])
      expect(checkPageLength('README.md', page(151))).to.deep.equal([{
        file: 'README.md', line: 151, what: '151 lines, over the cap of 150',
        fix: 'keep the README to what it is, the two commands, three examples and the map of the docs; move the rest to docs/',
      }])
      expect(checkPageLength('docs/performance.md', page(600))).to.deep.equal([])
      expect(checkPageLength('docs/performance.md', page(601)).map((p) => p.what)).to.deep.equal(['601 lines, over the cap of 600'])
      expect(checkPageLength('CONTRIBUTING.md', page(151))).to.deep.equal([])
    })
  })

  describe('rule 7: CHANGELOG.md against package.json', () => {
    const changelog = '# Changelog\n\n## Unreleased (since 0.2.0)\n\n## 0.2.0 - 2026-11-29 (commit 157e679)\n\n## 0.1.0 - 2026-11-25\n'
    it('passes when the last release is package.json\'s version; names the mismatch and every placeholder otherwise', () => {
      expect(checkChangelog('CHANGELOG.md', changelog, '0.2.0')).to.deep.equal([])
      expect(checkChangelog('CHANGELOG.md', changelog, '0.1.0').map((p) => [p.line, p.what])).to.deep.equal([[5, 'the last release is 0.2.0, package.json says 0.1.0']])
      const placeholder = `${changelog}[0.2.0]: https://github.com/OWNER/x/compare/a...b\n`
      expect(checkChangelog('CHANGELOG.md', placeholder, '0.2.0').map((p) => [p.line, p.what])).to.deep.equal([[8, 'a placeholder (OWNER)']])
      expect(checkChangelog('CHANGELOG.md', '# Changelog\n\n## [0.3.0] - 2027-01-01\n', '0.2.0')).to.have.length(1)
    })
  })
})
