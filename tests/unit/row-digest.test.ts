// The digest of a streamed answer's rows (db/row-digest.ts; decision 0034):
// the CRC-32 of a row's packet, of its cells as text, and of the joined
// bytes MariaDB hashes are one number; the sum is exact; the statement names
// every column. That MariaDB computes the same number is shown over a real
// server in tests/integration/conditional.test.ts.
import { crc32 as zlibCrc32 } from 'node:zlib'
import { expect } from 'chai'
import fc from 'fast-check'
import {
  CELL_SEPARATOR, crc32, NULL_CELL, readRowsDigest, RowCrcSum, rowCellsCrcs, rowPacketCrcs, rowsDigestSql, serviceNamesDigest, type RowCrcs,
} from '../../db/row-digest.ts'

/** MySQL's length-encoded integer, in all four of its forms. */
function lengthCode(length: number, form: 'least' | 'eight bytes' = 'least'): Buffer {
  if (form === 'eight bytes' || length >= 0x1000000) {
    const code = Buffer.alloc(9)
    code[0] = 0xfe
    code.writeBigUInt64LE(BigInt(length), 1)
    return code
  }
  if (length < 0xfb) return Buffer.from([length])
  if (length < 0x10000) return Buffer.from([0xfc, length & 0xff, length >> 8])
  return Buffer.from([0xfd, length & 0xff, (length >> 8) & 0xff, length >> 16])
}

/** A row packet of the text protocol: each cell length-coded, NULL as 0xFB. */
function rowPacket(cells: ReadonlyArray<string | null>, form: 'least' | 'eight bytes' = 'least'): Buffer {
  return Buffer.concat(cells.map((cell) => {
    if (cell === null) return Buffer.from([0xfb])
    const text = Buffer.from(cell, 'utf8')
    return Buffer.concat([lengthCode(text.length, form), text])
  }))
}

/** The bytes CRC32(CONCAT_WS(X'FF', IFNULL(CAST(cell AS BINARY), X'FE'), …)) hashes. */
function joined(cells: ReadonlyArray<string | null>): Buffer {
  const parts: Buffer[] = []
  cells.forEach((cell, index) => {
    if (index > 0) parts.push(Buffer.from([CELL_SEPARATOR]))
    parts.push(cell === null ? Buffer.from([NULL_CELL]) : Buffer.from(cell, 'utf8'))
  })
  return Buffer.concat(parts)
}

/** rowPacketCrcs' two CRCs, or undefined when it refuses the packet. */
function rowPacketCrc(bytes: Uint8Array, start: number, end: number, count: number): RowCrcs | undefined {
  const out = { crc: 0, reversed: 0 }
  return rowPacketCrcs(bytes, start, end, count, out) ? out : undefined
}

function rowCellsCrc(cells: ReadonlyArray<string | null>): RowCrcs {
  const out = { crc: 0, reversed: 0 }
  rowCellsCrcs(cells, out)
  return out
}

/** What MariaDB computes of the joined bytes: CRC32() of them, and of REVERSE() of them. */
function expectedCrcs(bytes: Buffer): RowCrcs {
  return { crc: crc32(bytes), reversed: crc32(Buffer.from(bytes).reverse()) }
}

const QUIRKY_ROW = ['1043', '12', 'Booked ', '0000-00-00', '22:00:00', '24:00:00', 'Ann', '', '+49 1', 'שלום 🎉, "quoted"\nline', '0000-00-00 00:00:00', null]

describe('crc32', () => {
  it('is the CRC-32 of zlib, MariaDB and MySQL (check value of "123456789": CBF43926)', () => {
    expect(crc32(Buffer.from('123456789'))).to.equal(0xcbf43926)
    expect(crc32(Buffer.alloc(0))).to.equal(0)
    // MariaDB: SELECT CRC32('MySQL') = 3259397556 (its manual's example).
    expect(crc32(Buffer.from('MySQL'))).to.equal(3259397556)
  })

  it('agrees with zlib on any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
      expect(crc32(bytes)).to.equal(zlibCrc32(bytes))
    }))
  })
})

describe('rowPacketCrcs and rowCellsCrcs', () => {
  it('give the CRC-32s of the cells joined by 0xFF, NULL as 0xFE, and of those bytes reversed, from the packet and from the text alike', () => {
    const expected = expectedCrcs(joined(QUIRKY_ROW))
    expect(rowPacketCrc(rowPacket(QUIRKY_ROW), 0, rowPacket(QUIRKY_ROW).length, QUIRKY_ROW.length)).to.deep.equal(expected)
    expect(rowCellsCrc(QUIRKY_ROW)).to.deep.equal(expected)
    expect(expected.crc).to.not.equal(expected.reversed)
  })

  it('agree for any cells, in every form of length code, inside a larger buffer', () => {
    const cell = fc.option(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ minLength: 251, maxLength: 400 })), { nil: null })
    fc.assert(fc.property(fc.array(cell, { minLength: 1, maxLength: 14 }), fc.constantFrom('least' as const, 'eight bytes' as const), (cells, form) => {
      const packet = Buffer.concat([Buffer.from('before'), rowPacket(cells, form), Buffer.from('after')])
      const expected = expectedCrcs(joined(cells))
      expect(rowPacketCrc(packet, 6, packet.length - 5, cells.length)).to.deep.equal(expected)
      expect(rowCellsCrc(cells)).to.deep.equal(expected)
    }))
  })

  it('a cell of 65,536 bytes or more (three-byte length) reads whole', () => {
    const cells = ['1', 'x'.repeat(70_000), null]
    const packet = rowPacket(cells)
    expect(packet[2]).to.equal(0xfd)
    expect(rowPacketCrc(packet, 0, packet.length, 3)).to.deep.equal(expectedCrcs(joined(cells)))
  })

  it('tells apart what joining alone would not: NULL and empty, a cell boundary moved', () => {
    const crcs = [
      ['a', null], ['a', ''], ['a', 'b'], ['ab', ''], ['', 'ab'], [null, 'a'],
    ].map((cells) => rowCellsCrc(cells))
    expect(new Set(crcs.map((each) => each.crc)).size).to.equal(crcs.length)
    expect(new Set(crcs.map((each) => each.reversed)).size).to.equal(crcs.length)
  })

  it('is undefined for a packet that does not hold exactly that many cells', () => {
    const packet = rowPacket(['1', 'two', null])
    expect(rowPacketCrc(packet, 0, packet.length, 3)).to.not.equal(undefined)
    expect(rowPacketCrc(packet, 0, packet.length, 2), 'a cell left over').to.equal(undefined)
    expect(rowPacketCrc(packet, 0, packet.length, 4), 'a cell missing').to.equal(undefined)
    expect(rowPacketCrc(packet, 0, packet.length - 1, 3), 'a cell cut short').to.equal(undefined)
    expect(rowPacketCrc(Buffer.from([0xff, 0x01]), 0, 2, 1), 'an error packet').to.equal(undefined)
  })
})

describe('RowCrcSum', () => {
  it('counts the rows and adds each of their CRC-32s exactly, past 2^53', () => {
    const sum = new RowCrcSum()
    expect(sum.sum).to.equal('0:0')
    let expected = 0n
    // 2^21 + 5 CRCs of 0xFFFFFFFF pass 2^53: a sum kept in one number would round.
    for (let i = 0; i < 2 ** 21 + 5; i++) {
      sum.add({ crc: 0xffffffff, reversed: 1 })
      expected += 0xffffffffn
    }
    sum.add({ crc: 12345, reversed: 7 })
    expected += 12345n
    expect(sum.rows).to.equal(2 ** 21 + 6)
    expect(sum.sum).to.equal(`${expected}:${2 ** 21 + 5 + 7}`)
  })

})

describe('the reversed CRC-32: 64 bits a row', () => {
  it('sees a change that CRC-32 cannot (its polynomial, XORed into a cell)', () => {
    // CRC-32's polynomial x^32 + 0x04C11DB7 as 40 bits sent lowest bit of each byte first: any
    // message XORed with it (at equal length) keeps its CRC-32.
    const bits = [1, ...(0x04c11db7).toString(2).padStart(32, '0').split('').map(Number), 0, 0, 0, 0, 0, 0, 0]
    const invisible = Buffer.alloc(5)
    bits.forEach((bit, i) => { invisible[i >> 3]! |= bit << (i & 7) })
    const row = joined(['1043', 'a note of some length', null])
    const changed = Buffer.from(row)
    for (let i = 0; i < 5; i++) changed[7 + i]! ^= invisible[i]!
    expect(changed.equals(row)).to.equal(false)
    expect(crc32(changed), 'CRC-32 misses it').to.equal(crc32(row))
    expect(expectedCrcs(changed).reversed, 'the reversed CRC-32 sees it').to.not.equal(expectedCrcs(row).reversed)
  })
})

describe('readRowsDigest', () => {
  it('reads the count and the sum as the server sends them; SUM() of no rows is NULL, taken as 0', () => {
    expect(readRowsDigest({ row_count: 2, row_crc_sum: '5000000000', row_crc_reversed_sum: '6000000000' })).to.deep.equal({ rows: 2, crcSum: '5000000000:6000000000' })
    expect(readRowsDigest({ row_count: '3', row_crc_sum: 7, row_crc_reversed_sum: 8 })).to.deep.equal({ rows: 3, crcSum: '7:8' })
    expect(readRowsDigest({ row_count: 0, row_crc_sum: null, row_crc_reversed_sum: null })).to.deep.equal({ rows: 0, crcSum: '0:0' })
    expect(readRowsDigest(undefined)).to.deep.equal({ rows: 0, crcSum: '0:0' })
  })
})

describe('rowsDigestSql', () => {
  it('reads the rows statement as a derived table and joins its columns in order by 0xFF: text as its bytes, NULL as 0xFE where it may be', () => {
    const text = rowsDigestSql('select `a`, `b`, `c` from `t`', [
      { name: 'a', text: false, nullable: false }, { name: 'we`ird', text: true, nullable: true }, { name: 'c', text: true, nullable: false },
      { name: 'd', text: false, nullable: true },
    ])
    const cells = "concat_ws(_binary X'FF', `digested`.`a`, IFNULL(CAST(`digested`.`we``ird` AS BINARY), _binary X'FE'), CAST(`digested`.`c` AS BINARY), IFNULL(`digested`.`d`, _binary X'FE'))"
    expect(text).to.equal(
      `select count(*) as \`row_count\`, sum(crc32(${cells})) as \`row_crc_sum\`, sum(crc32(reverse(${cells}))) as \`row_crc_reversed_sum\` ` +
      'from (select `a`, `b`, `c` from `t`) as `digested`',
    )
  })
})

describe('serviceNamesDigest', () => {
  it('names the services by ID whatever order they were read in, and changes with any name', () => {
    const a = serviceNamesDigest(new Map([[12, 'haircut'], [3, 'colouring']]))
    expect(serviceNamesDigest(new Map([[3, 'colouring'], [12, 'haircut']]))).to.equal(a)
    expect(serviceNamesDigest(new Map([[3, 'colouring'], [12, 'haircut-2']]))).to.not.equal(a)
    expect(serviceNamesDigest(new Map([[4, 'colouring'], [12, 'haircut']]))).to.not.equal(a)
    expect(serviceNamesDigest(new Map())).to.not.equal(a)
  })
})
