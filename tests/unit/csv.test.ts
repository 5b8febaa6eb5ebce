// One CSV cell (API.md, "GET slots/"): each rule on its own, so each would fail without it.
import { expect } from 'chai'
import { csvCell, csvLine } from '../../server/http/booking-text.ts'

describe('csvCell', () => {
  it('null is an empty cell; booleans and numbers as written', () => {
    expect(csvCell(null)).to.equal('')
    expect(csvCell(true)).to.equal('true')
    expect(csvCell(false)).to.equal('false')
    expect(csvCell(101)).to.equal('101')
  })

  it('quotes a cell with a quote, a comma, a CR or an LF, doubling quotes (RFC 4180)', () => {
    expect(csvCell('say "hi"')).to.equal('"say ""hi"""')
    expect(csvCell('a,b')).to.equal('"a,b"')
    expect(csvCell('line\nbreak')).to.equal('"line\nbreak"')
    expect(csvCell('line\r\nbreak')).to.equal('"line\r\nbreak"')
    expect(csvCell('plain text')).to.equal('plain text')
  })

  it('keeps UTF-8 text as it is: emoji, Cyrillic, right-to-left', () => {
    expect(csvCell('🎉 стрижка שלום')).to.equal('🎉 стрижка שלום')
  })

  it('guards every character a spreadsheet starts a formula with: = + - @ tab CR', () => {
    expect(csvCell('=1+1')).to.equal("'=1+1")
    expect(csvCell('+49 30 1')).to.equal("'+49 30 1")
    expect(csvCell('-5')).to.equal("'-5")
    expect(csvCell('@SUM(A1)')).to.equal("'@SUM(A1)")
    expect(csvCell('\tx')).to.equal("'\tx")
    expect(csvCell('\rx')).to.equal("\"'\rx\"")
    expect(csvCell('=HYPERLINK("http://evil")')).to.equal('"\'=HYPERLINK(""http://evil"")"')
    expect(csvCell('a=b')).to.equal('a=b')
  })
})

describe('csvLine', () => {
  it('ends every line with CRLF, and writes a line of one empty cell as "" (an empty line is no row to pandas)', () => {
    expect(csvLine(['a', '', 'b'])).to.equal('a,,b\r\n')
    expect(csvLine(['', ''])).to.equal(',\r\n')
    expect(csvLine(['x'])).to.equal('x\r\n')
    expect(csvLine([''])).to.equal('""\r\n')
  })
})
