import { expect } from 'chai'
import { parseBooleanWord, parseWholeNumber } from '../../server/parse-text.ts'

describe('parse-text', () => {
  it('reads a whole number in plain digits within its bounds, and nothing else', () => {
    expect(parseWholeNumber('0042', 1, 100)).to.equal(42)
    expect(parseWholeNumber('1', 1, 100)).to.equal(1)
    expect(parseWholeNumber('100', 1, 100)).to.equal(100)
    for (const text of ['0', '101', '', ' 5', '5 ', '-5', '+5', '1e2', '5.0', '0x10', 'five']) {
      expect(parseWholeNumber(text, 1, 100), text).to.equal(undefined)
    }
  })

  it('reads a yes/no word of the given sets in any letter case, and no other', () => {
    const words = { true: ['', 'true', 'on'], false: ['false', '0'] }
    expect(parseBooleanWord('TRUE', words)).to.equal(true)
    expect(parseBooleanWord('', words)).to.equal(true)
    expect(parseBooleanWord('On', words)).to.equal(true)
    expect(parseBooleanWord('False', words)).to.equal(false)
    expect(parseBooleanWord('0', words)).to.equal(false)
    for (const text of ['yes', ' true', 'truee', '1']) expect(parseBooleanWord(text, words), text).to.equal(undefined)
  })
})
