// addVary (server/http/negotiate.ts): the Vary header as Express's res.vary leaves it.
import { expect } from 'chai'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { addVary } from '../../server/http/negotiate.ts'

function responseWith(vary?: string | string[]): ServerResponse {
  const res = new ServerResponse(new IncomingMessage(new Socket()))
  if (vary !== undefined) res.setHeader('Vary', vary)
  return res
}

describe('addVary', () => {
  const cases: [string, string | string[] | undefined, string, string | string[]][] = [
    ['no Vary yet: the field alone', undefined, 'Origin', 'Origin'],
    ['an empty Vary: the field alone', '', 'Accept', 'Accept'],
    ['another field: appended after a comma', 'Origin', 'Accept', 'Origin, Accept'],
    ['the field already there, in another case: unchanged', 'Origin, accept', 'Accept', 'Origin, accept'],
    ['the field among spaces: unchanged', ' Origin ,Accept ', 'Origin', ' Origin ,Accept '],
    ['*: unchanged, it covers every field', '*', 'Accept', '*'],
    ['a list of values: joined, then appended', ['Origin', 'Accept-Encoding'], 'Accept', 'Origin, Accept-Encoding, Accept'],
    ['a field whose name contains the new one: appended', 'Accept-Encoding', 'Accept', 'Accept-Encoding, Accept'],
  ]
  for (const [name, before, field, after] of cases) {
    it(`${name} (${JSON.stringify(before)} + ${field})`, () => {
      const res = responseWith(before)
      addVary(res as never, field)
      expect(res.getHeader('Vary')).to.deep.equal(after)
    })
  }
})
