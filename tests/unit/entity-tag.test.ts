// Entity tags (API.md, "Conditional requests"; RFC 9110, 8.8.3 and 13.1.2):
// how If-None-Match is read, weak comparison, and how a tag is written.
import { createHash } from 'node:crypto'
import { expect } from 'chai'
import { noneMatchHits, parseIfNoneMatch, TAG_VERSION, weakTag } from '../../server/http/entity-tag.ts'
import { ANSWERS_REVISION, packageVersion, SERVICE_VERSION } from '../../server/http/service-version.ts'

describe('parseIfNoneMatch', () => {
  const cases: Array<[string | string[] | undefined, ReturnType<typeof parseIfNoneMatch>]> = [
    [undefined, undefined],
    ['', undefined],
    ['   ', undefined],
    [',,', undefined],
    ['*', { any: true, tags: [] }],
    [' * ', { any: true, tags: [] }],
    ['"a"', { any: false, tags: ['"a"'] }],
    ['W/"a"', { any: false, tags: ['"a"'] }],
    ['""', { any: false, tags: ['""'] }],
    ['W/"a", "b" ,\tW/"c"', { any: false, tags: ['"a"', '"b"', '"c"'] }],
    // A comma is an etagc: it may stand inside the quotes.
    ['"a,b", W/"c"', { any: false, tags: ['"a,b"', '"c"'] }],
    // Malformed members are left out; the others count.
    ['W/"a", bad"tag, "b"', { any: false, tags: ['"a"', '"b"'] }],
    ['W/"x" junk, "y"', { any: false, tags: ['"y"'] }],
    ['"a" "b"', undefined],
    ['"unterminated', undefined],
    ['w/"lower-case weak"', undefined],
    ['a', undefined],
    ['W/a', undefined],
    ['"with space"', undefined],
    ['"with\\"quote"', undefined],
    ['"\x7F"', undefined],
    ['"\x80\xFF"', { any: false, tags: ['"\x80\xFF"'] }],
    ['W/"a",', { any: false, tags: ['"a"'] }],
    // * counts only alone, as the grammar has it.
    ['*, "a"', { any: false, tags: ['"a"'] }],
    ['"*"', { any: false, tags: ['"*"'] }],
    // Several header lines are one list.
    [['"a"', 'W/"b"'], { any: false, tags: ['"a"', '"b"'] }],
    [['*'], { any: true, tags: [] }],
  ]
  for (const [header, expected] of cases) {
    it(`reads ${JSON.stringify(header)}`, () => {
      expect(parseIfNoneMatch(header)).to.deep.equal(expected)
    })
  }
})

describe('noneMatchHits (weak comparison)', () => {
  const tag = 'W/"v1-abc"'
  const cases: Array<[string | undefined, string, boolean]> = [
    [undefined, tag, false],
    ['*', tag, true],
    ['W/"v1-abc"', tag, true],
    ['"v1-abc"', tag, true],
    ['W/"v1-abc"', '"v1-abc"', true],
    ['"other", W/"v1-abc"', tag, true],
    ['"v1-abd"', tag, false],
    ['"v1-ab"', tag, false],
    ['W/"V1-ABC"', tag, false],
    ['v1-abc', tag, false],
  ]
  for (const [header, current, hits] of cases) {
    it(`${JSON.stringify(header)} against ${current}: ${hits ? '304' : '200'}`, () => {
      expect(noneMatchHits(parseIfNoneMatch(header), current)).to.equal(hits)
    })
  }
})

describe('weakTag', () => {
  it('is W/"<version>-<43 base64url characters>"', () => {
    expect(weakTag([])).to.match(new RegExp(`^W/"${TAG_VERSION}-[A-Za-z0-9_-]{43}"$`))
    expect(TAG_VERSION).to.equal('v3')
  })

  it('is the same for the same parts', () => {
    expect(weakTag(['slots', { a: 1 }, null])).to.equal(weakTag(['slots', { a: 1 }, null]))
  })

  it('is the SHA-256 of the scheme, the service\'s version and the parts as JSON', () => {
    const digest = createHash('sha256').update(JSON.stringify(['v3', SERVICE_VERSION, 'x', { a: 1 }])).digest('base64url')
    expect(weakTag(['x', { a: 1 }])).to.equal(`W/"v3-${digest}"`)
    expect(SERVICE_VERSION).to.equal(`${packageVersion()}+answers.${ANSWERS_REVISION}`).and.match(/^\d+\.\d+\.\d+.*\+answers\.\d+$/)
  })

  it('a changed version (package.json\'s, or ANSWERS_REVISION) changes every tag', () => {
    const parts = [['slots', 'json', true, null, false, 'UTC', 'rows', {}, 3, 3, 'abc'], ['summary', 'csv', null, { groups: [] }], ['availability', []]]
    for (const part of parts) {
      expect(weakTag(part, '0.1.0+answers.1')).to.not.equal(weakTag(part, '0.1.1+answers.1'))
      expect(weakTag(part, '0.1.0+answers.1')).to.not.equal(weakTag(part, '0.1.0+answers.2'))
      expect(weakTag(part)).to.equal(weakTag(part, SERVICE_VERSION))
    }
  })

  it('differs for any difference in a part, its order or its kind', () => {
    const tags = [
      weakTag(['slots']), weakTag(['summary']), weakTag(['slots', null]), weakTag([null, 'slots']),
      weakTag(['1']), weakTag([1]), weakTag([[1]]), weakTag([{ a: 1 }]), weakTag([{ a: 2 }]), weakTag([{ b: 1 }]),
      weakTag(['a', 'b']), weakTag(['ab']), weakTag(['a,b']), weakTag([true]), weakTag([false]),
    ]
    expect(new Set(tags).size).to.equal(tags.length)
  })
})
