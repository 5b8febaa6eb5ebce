// How tests/integration/doc-examples.test.ts reads a page's requests and compares
// the answers it shows (tests/support/doc-examples.ts): each rule passes a true
// answer and names what differs in a wrong one.
import { expect } from 'chai'
import { answerDifferences, examplesOf, parseShownJson, MORE } from '../support/doc-examples.ts'

const fence = '```'

describe('the examples of the docs', () => {
  describe('reading a page', () => {
    it('takes a curl block with the block right after it as its answer, and one followed by prose as a request without an answer', () => {
      const page = [
        '# P', '', `${fence}sh`, "curl -s 'http://localhost:8080/a'", fence, '', `${fence}json`, '{"a":1}', fence,
        '', 'Then:', '', `${fence}sh`, 'curl -s localhost:8080/b', fence, '', 'Prose.', '',
      ].join('\n')
      const examples = examplesOf('p.md', page)
      expect(examples).to.deep.equal([
        { file: 'p.md', line: 4, script: "curl -s 'http://localhost:8080/a'", answer: { line: 8, text: '{"a":1}' } },
        { file: 'p.md', line: 14, script: 'curl -s localhost:8080/b' },
      ])
    })

    it('reads `$ curl` with its output in one block, an indented block in a list item, inline spans, and <!-- not run: … -->', () => {
      const page = [
        fence, "$ curl 'localhost:8080/x' \\", '  -H "A: b"', 'a,b', '1,2', fence,
        '1. Download:', `   ${fence}sh`, '   curl -s -o x.csv localhost:8080/y', `   ${fence}`, `   ${fence}csv`, '   a', '   1', `   ${fence}`,
        '**Example**: `curl -s http://localhost:8080/`', '',
        '<!-- not run: needs a WordPress site -->', `${fence}sh`, "curl -u 'a:b' https://example.com/", fence,
      ].join('\n')
      const examples = examplesOf('p.md', page)
      expect(examples.map((e) => [e.line, e.script, e.answer?.text, e.notRun])).to.deep.equal([
        [2, "curl 'localhost:8080/x' \\\n  -H \"A: b\"", 'a,b\n1,2', undefined],
        [9, 'curl -s -o x.csv localhost:8080/y', 'a\n1', undefined],
        [15, 'curl -s http://localhost:8080/', undefined, undefined],
        [19, "curl -u 'a:b' https://example.com/", undefined, 'needs a WordPress site'],
      ])
    })
  })

  describe('comparing an answer', () => {
    it('JSON: equal values in any spacing agree; a wrong value, a missing member and an unshown one are each named', () => {
      expect(answerDifferences('{"a": 1,\n "b": [1, 2]}', '{"b":[1,2],"a":1}')).to.deep.equal([])
      expect(answerDifferences('{"a": 1, "b": [1, 2], "c": "x"}', '{"a":2,"b":[1,2],"d":0}')).to.deep.equal([
        '$.a: the page shows 1, the answer has 2',
        '$.c: the page shows it, the answer has no such member',
        '$.d: the answer has it, the page does not show it (end the object with …)',
      ])
    })

    it('JSON: … is any further items or members, and any text inside a string', () => {
      expect(parseShownJson('[1, …]')).to.deep.equal([1, MORE])
      expect(answerDifferences('{"groups": [{"id": 1, …}, …], "tag": "W/\\"v3-…\\""}', '{"groups":[{"id":1,"x":2},{"id":2}],"tag":"W/\\"v3-abc\\""}')).to.deep.equal([])
      expect(answerDifferences('{"groups": [{"id": 2, …}, …]}', '{"groups":[{"id":1}]}')).to.deep.equal(['$.groups[0].id: the page shows 2, the answer has 1'])
      expect(answerDifferences('{"tag": "W/\\"v3-…\\""}', '{"tag":"W/\\"v1-abc\\""}')).to.have.length(1)
      expect(answerDifferences('[1, 2]', '[1, 2, 3]')).to.deep.equal(['$: the page shows 2 items, the answer has 3'])
    })

    it('text: lines must agree, a line of … is any number of lines, … in a line any text; CRLF is a line end', () => {
      expect(answerDifferences('a,b\n1,2\n…', 'a,b\r\n1,2\r\n3,4\r\n5,6\r\n')).to.deep.equal([])
      expect(answerDifferences('a,b\n…\n5,…', 'a,b\r\n1,2\r\n5,6\r\n')).to.deep.equal([])
      expect(answerDifferences('a,b\n1,2', 'a,b\r\n1,3\r\n')).to.deep.equal(['line 2 of the answer: the page shows "1,2", the answer has "1,3"'])
      expect(answerDifferences('a,b\n1,2', 'a,b\r\n1,2\r\n3,4\r\n')).to.have.length(1)
    })

    it('HTTP: the status line, each header shown (any others may follow) and the body', () => {
      const actual = 'HTTP/1.1 200 OK\r\nX-WP-Total: 2\r\nETag: W/"v3-abc"\r\nContent-Type: application/json; charset=utf-8\r\n\r\n{"total":2}'
      expect(answerDifferences('HTTP/1.1 200 OK\nX-WP-Total: 2\nETag: W/"v3-…"\n\n{"total": 2}', actual)).to.deep.equal([])
      expect(answerDifferences('HTTP/1.1 304 Not Modified\nX-WP-Total: 3\nX-WP-TotalPages: 1\n\n{"total": 1}', actual)).to.deep.equal([
        'status line: the page shows "HTTP/1.1 304 Not Modified", the answer has "HTTP/1.1 200 OK"',
        'header X-WP-Total: the page shows "3", the answer has "2"',
        'header X-WP-TotalPages: the page shows it, the answer has none',
        '$.total: the page shows 1, the answer has 2',
      ])
    })
  })
})
