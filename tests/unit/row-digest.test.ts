// The digest of a streamed answer's rows (db/row-digest.ts; decision 0034):
// the CRC-32 of a row's packet, of its cells as text, and of the joined
// bytes MariaDB hashes are one number; the sum is exact; the statement names
// every column. That MariaDB computes the same number is shown over a real
// server in tests/integration/conditional.test.ts.
import { crc32 as zlibCrc32 } from 'node:zlib'
import { expect } from 'chai'
import fc from 'fast-check'
import {
  CELL_SEPARATOR, crc32, NULL_CELL, readRowsDigest, RowCrcSum, rowCellsCrc, rowPacketCrc, rowsDigestSql, serviceNamesDigest,
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

describe('rowPacketCrc and rowCellsCrc', () => {
  it('give the CRC-32 of the cells joined by 0xFF, NULL as 0xFE, from the packet and from the text alike', () => {
    const expected = crc32(joined(QUIRKY_ROW))
    expect(rowPacketCrc(rowPacket(QUIRKY_ROW), 0, rowPacket(QUIRKY_ROW).length, QUIRKY_ROW.length)).to.equal(expected)
    expect(rowCellsCrc(QUIRKY_ROW)).to.equal(expected)
  })

  it('agree for any cells, in every form of length code, inside a larger buffer', () => {
    const cell = fc.option(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ minLength: 251, maxLength: 400 })), { nil: null })
    fc.assert(fc.property(fc.array(cell, { minLength: 1, maxLength: 14 }), fc.constantFrom('least' as const, 'eight bytes' as const), (cells, form) => {
      const packet = Buffer.concat([Buffer.from('before'), rowPacket(cells, form), Buffer.from('after')])
      const expected = crc32(joined(cells))
      expect(rowPacketCrc(packet, 6, packet.length - 5, cells.length)).to.equal(expected)
      expect(rowCellsCrc(cells)).to.equal(expected)
    }))
  })

  it('a cell of 65,536 bytes or more (three-byte length) reads whole', () => {
    const cells = ['1', 'x'.repeat(70_000), null]
    const packet = rowPacket(cells)
    expect(packet[2]).to.equal(0xfd)
    expect(rowPacketCrc(packet, 0, packet.length, 3)).to.equal(crc32(joined(cells)))
  })

  it('tells apart what joining alone would not: NULL and empty, a cell boundary moved', () => {
    const crcs = [
      ['a', null], ['a', ''], ['a', 'b'], ['ab', ''], ['', 'ab'], [null, 'a'],
    ].map((cells) => rowCellsCrc(cells))
    expect(new Set(crcs).size).to.equal(crcs.length)
  })

  it('is undefined for a packet that does not hold exactly that many cells', () => {
    const packet = rowPacket(['1', 'two', null])
    expect(rowPacketCrc(packet, 0, packet.length, 3)).to.be.a('number')
    expect(rowPacketCrc(packet, 0, packet.length, 2), 'a cell left over').to.equal(undefined)
    expect(rowPacketCrc(packet, 0, packet.length, 4), 'a cell missing').to.equal(undefined)
    expect(rowPacketCrc(packet, 0, packet.length - 1, 3), 'a cell cut short').to.equal(undefined)
    expect(rowPacketCrc(Buffer.from([0xff, 0x01]), 0, 2, 1), 'an error packet').to.equal(undefined)
  })
})

describe('RowCrcSum', () => {
  it('counts the rows and adds their CRC-32s exactly, past 2^53', () => {
    const sum = new RowCrcSum()
    expect(sum.sum).to.equal('0')
    let expected = 0n
    // 2^21 + 5 CRCs of 0xFFFFFFFF pass 2^53: a sum kept in one number would round.
    for (let i = 0; i < 2 ** 21 + 5; i++) {
      sum.add(0xffffffff)
      expected += 0xffffffffn
    }
    sum.add(12345)
    expected += 12345n
    expect(sum.rows).to.equal(2 ** 21 + 6)
    expect(sum.sum).to.equal(expected.toString())
  })
})

describe('readRowsDigest', () => {
  it('reads the count and the sum as the server sends them; SUM() of no rows is NULL, taken as 0', () => {
    expect(readRowsDigest({ row_count: 2, row_crc_sum: '5000000000' })).to.deep.equal({ rows: 2, crcSum: '5000000000' })
    expect(readRowsDigest({ row_count: '3', row_crc_sum: 7 })).to.deep.equal({ rows: 3, crcSum: '7' })
    expect(readRowsDigest({ row_count: 0, row_crc_sum: null })).to.deep.equal({ rows: 0, crcSum: '0' })
    expect(readRowsDigest(undefined)).to.deep.equal({ rows: 0, crcSum: '0' })
  })
})

describe('rowsDigestSql', () => {
  it('reads the rows statement as a derived table and joins its columns in order by 0xFF: text as its bytes, NULL as 0xFE where it may be', () => {
    const text = rowsDigestSql('select `a`, `b`, `c` from `t`', [
      { name: 'a', text: false, nullable: false }, { name: 'we`ird', text: true, nullable: true }, { name: 'c', text: true, nullable: false },
      { name: 'd', text: false, nullable: true },
    ])
    expect(text).to.equal(
      "select count(*) as `row_count`, sum(crc32(concat_ws(_binary X'FF', " +
      "`digested`.`a`, IFNULL(CAST(`digested`.`we``ird` AS BINARY), _binary X'FE'), CAST(`digested`.`c` AS BINARY), IFNULL(`digested`.`d`, _binary X'FE')))) as `row_crc_sum` " +
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
