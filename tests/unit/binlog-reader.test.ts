// The pure parts of the log source's reader (db/binlog-reader.ts,
// db/binlog-change-log.ts): which rows and statements matter, how errors are
// classified, and how remembered transactions answer (from, to].
import { expect } from 'chai'
import { BinlogReaderError, classifyReaderError, queryKind, rowsChange, statementReset, xaEnding, xaKey } from '../../db/binlog-reader.ts'
import { TransactionMemory } from '../../db/transaction-memory.ts'

describe('rowsChange: what a rows event of a watched table changes', () => {
  const cases: Array<[string, string, Array<Record<string, unknown>>, { bookingIds: number[]; relevant: boolean }]> = [
    ['a booking, by its id', 'wp_booking_calendar_bookings', [{ id: 7, status: 'booked' }], { bookingIds: [7], relevant: true }],
    ['an update: before and after images', 'wp_booking_calendar_bookings', [{ id: 7 }, { id: 8 }], { bookingIds: [7, 8], relevant: true }],
    ['a BIGINT id beyond 2^53 that zongji gives as a string', 'wp_booking_calendar_bookings', [{ id: '12' }], { bookingIds: [12], relevant: true }],
    ['a rule', 'wp_booking_calendar_disabled_times', [{ id: 1 }], { bookingIds: [], relevant: true }],
    ['a service post', 'wp_posts', [{ ID: 10, post_type: 'bc_service' }], { bookingIds: [], relevant: true }],
    ['a post that becomes a service (after image)', 'wp_posts', [{ ID: 1, post_type: 'post' }, { ID: 1, post_type: 'bc_service' }], { bookingIds: [], relevant: true }],
    ['a service post in another letter case, with trailing spaces (the collation)', 'wp_posts', [{ ID: 10, post_type: 'BC_Service  ' }], { bookingIds: [], relevant: true }],
    ['a non-service post', 'wp_posts', [{ ID: 1, post_type: 'post' }], { bookingIds: [], relevant: false }],
    ['timezone_string', 'wp_options', [{ option_name: 'timezone_string' }], { bookingIds: [], relevant: true }],
    ['gmt_offset', 'wp_options', [{ option_name: 'gmt_offset' }], { bookingIds: [], relevant: true }],
    ['start_of_week', 'wp_options', [{ option_name: 'start_of_week' }], { bookingIds: [], relevant: true }],
    ['another option (a transient)', 'wp_options', [{ option_name: '_transient_doing_cron' }], { bookingIds: [], relevant: false }],
    ['a table of another prefix', 'wp_2_booking_calendar_bookings', [{ id: 7 }], { bookingIds: [], relevant: false }],
  ]
  for (const [name, table, rows, expected] of cases) {
    it(name, () => expect(rowsChange('wp_', table, rows)).to.deep.equal(expected))
  }
})

describe('queryKind: a query event\'s place in a transaction', () => {
  const cases: Array<[string, string]> = [
    ['BEGIN', 'begin'], ['COMMIT', 'commit'], [' commit ', 'commit'], ['ROLLBACK', 'commit'],
    ["XA START 'x'", 'begin'], ["XA COMMIT 'x'", 'commit'],
    ['ALTER TABLE wp_posts ADD COLUMN x INT', 'statement'], ['SAVEPOINT a', 'statement'],
  ]
  for (const [query, kind] of cases) it(`${query.trim()} is ${kind}`, () => expect(queryKind(query)).to.equal(kind))
})

describe('xaEnding: the xid an XA COMMIT or ROLLBACK ends, as the XA PREPARE event gives it', () => {
  const bc2 = xaKey(1, Buffer.from('bc2'), Buffer.alloc(0))
  it('writes the log\'s form: hex in lower case, the format id last', () => {
    expect(xaKey(7, Buffer.from([0xab, 0x01]), Buffer.from('3'))).to.equal("X'ab01',X'33',7")
    expect(bc2).to.equal("X'626332',X'',1")
  })
  const cases: Array<[string, ReturnType<typeof xaEnding>]> = [
    // As MariaDB and MySQL write it in the log.
    ["XA COMMIT X'626332',X'',1", { kind: 'commit', key: bc2, onePhase: false }],
    ["XA ROLLBACK X'6263',X'33',7", { kind: 'rollback', key: "X'6263',X'33',7", onePhase: false }],
    ["xa commit x'6263',x'',1", { kind: 'commit', key: "X'6263',X'',1", onePhase: false }],
    ["XA COMMIT X'AB',X'',1", { kind: 'commit', key: "X'ab',X'',1", onePhase: false }],
    // As a client writes it: a quoted gtrid, the bqual and format id left out (1), or given.
    ["XA COMMIT 'bc2'", { kind: 'commit', key: bc2, onePhase: false }],
    ["  XA  COMMIT 'bc2' , '' , 1 ", { kind: 'commit', key: bc2, onePhase: false }],
    ["XA COMMIT 'it''s','b',2", { kind: 'commit', key: xaKey(2, Buffer.from("it's"), Buffer.from('b')), onePhase: false }],
    ["XA COMMIT 'bc4' ONE PHASE", { kind: 'commit', key: xaKey(1, Buffer.from('bc4'), Buffer.alloc(0)), onePhase: true }],
    ["XA COMMIT X'626334',X'',1 one  phase", { kind: 'commit', key: xaKey(1, Buffer.from('bc4'), Buffer.alloc(0)), onePhase: true }],
    ['COMMIT', undefined],
    ["XA START 'bc2'", undefined],
    ["XA PREPARE 'bc2'", undefined],
    ['XA COMMIT bc2', undefined],
    ["XA COMMIT 'bc2' AND MORE", undefined],
  ]
  for (const [query, ending] of cases) it(query, () => expect(xaEnding(query)).to.deep.equal(ending))
})

describe('statementReset: a statement that expires every earlier position', () => {
  const expires: Array<[string, string]> = [
    ['ALTER TABLE wp_booking_calendar_bookings ADD KEY d (booking_date)', 'site'],
    ['TRUNCATE TABLE `wp_booking_calendar_disabled_times`', 'site'],
    ['DROP TABLE IF EXISTS wp_booking_calendar_bookings', 'site'],
    ['RENAME TABLE wp_options TO wp_options_old', 'site'],
    ['CREATE TABLE wp_booking_calendar_bookings (id INT)', 'site'],
    ["UPDATE wp_booking_calendar_bookings SET status = 'booked'", 'site'],
    ['ALTER TABLE site.wp_posts ENGINE=InnoDB', 'other'],
    ['alter table `site`.`wp_booking_calendar_bookings` add column z int', ''],
    ['DROP DATABASE site', 'other'],
  ]
  for (const [query, schema] of expires) {
    it(`${query} (session database ${schema || 'none'})`, () => expect(statementReset(query, schema, 'site', 'wp_')).to.be.a('string'))
  }
  const not: Array<[string, string]> = [
    ['ALTER TABLE wp_postmeta ADD KEY k (meta_key)', 'site'],
    ['ALTER TABLE wp_booking_calendar_bookings ADD KEY d (booking_date)', 'another_site'],
    ['ALTER TABLE wp_2_booking_calendar_bookings ADD KEY d (booking_date)', 'site'],
    ['CREATE TABLE wp_users (id INT)', 'site'],
    ['SAVEPOINT wp_posts', 'site'],
    ['FLUSH TABLES wp_posts', 'site'],
    ['ANALYZE TABLE wp_booking_calendar_bookings', 'site'],
    ['OPTIMIZE TABLE `wp_posts`', 'site'],
    ['DROP DATABASE other_site', 'site_x'],
  ]
  for (const [query, schema] of not) {
    it(`not ${query} (session database ${schema})`, () => expect(statementReset(query, schema, 'site', 'wp_')).to.equal(undefined))
  }
})

describe('classifyReaderError', () => {
  const cases: Array<[string, unknown, string]> = [
    ['1236, a purged file', { errno: 1236, message: 'Could not find first log file name in binary log index file' }, 'purged'],
    ['1236, a bad offset', { errno: 1236, message: "bogus data in log event; the first event 'x' at 5" }, 'purged'],
    ['MariaDB 4052, the same server id', { errno: 4052, code: 'ER_INVALID_MFA_PLUGIN_SPECIFIED', message: 'A slave with the same server_uuid/server_id is already connected' }, 'duplicate-server-id'],
    ['MySQL 1236, the same server id', { errno: 1236, message: 'A slave with the same server_uuid/server_id as this slave has connected to the master' }, 'duplicate-server-id'],
    ['refused', { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:3306' }, 'lost'],
    ['lost', { code: 'PROTOCOL_CONNECTION_LOST', fatal: true, message: 'Connection lost: The server closed the connection.' }, 'lost'],
    ['a handshake timed out', { code: 'ETIMEDOUT', message: 'connect ETIMEDOUT' }, 'lost'],
    ['killed', { errno: 1927, message: 'Connection was killed' }, 'lost'],
    ['no REPLICATION SLAVE', { errno: 1227, message: 'Access denied; you need (at least one of) the REPLICATION SLAVE privilege(s)' }, 'denied'],
    ['anything else', new Error('strange'), 'other'],
  ]
  for (const [name, error, kind] of cases) it(`${name}: ${kind}`, () => expect(classifyReaderError(error).kind).to.equal(kind))

  it('keeps a BinlogReaderError as it is', () => {
    const stalled = new BinlogReaderError('stalled', 'no event')
    expect(classifyReaderError(stalled)).to.equal(stalled)
  })
})

describe('TransactionMemory: answering (from, to] from what the reader remembers', () => {
  const at = (file: number, position: number) => ({ file: `bc-bin.${String(file).padStart(6, '0')}`, position })
  const filled = () => {
    const memory = new TransactionMemory(at(1, 4))
    memory.push(at(1, 100), [1, 2])
    memory.push(at(1, 200), [3])
    memory.push(at(2, 50), [1])
    memory.push(at(2, 300), [], 'a statement on wp_booking_calendar_bookings outside row events')
    memory.push(at(2, 400), [4, 3])
    return memory
  }

  it('takes the transactions ending after from, up to to included, each id once by its last change', () => {
    expect(filled().between(at(1, 100), at(2, 50))).to.deep.equal({ ids: [3, 1], changed: true })
    expect(filled().between(at(1, 4), at(1, 200))).to.deep.equal({ ids: [1, 2, 3], changed: true })
    expect(filled().between(at(2, 400), at(2, 400))).to.deep.equal({ ids: [], changed: false })
  })

  it('orders a later file after an earlier one whatever the offsets', () => {
    expect(filled().between(at(1, 150), at(2, 60)).ids).to.deep.equal([3, 1])
  })

  it('names the first reset in the range, and a relevant transaction without bookings is a change', () => {
    expect(filled().between(at(1, 4), at(9, 0))).to.deep.equal({
      ids: [2, 1, 4, 3], changed: true,
      reset: { reason: 'a statement on wp_booking_calendar_bookings outside row events', at: at(2, 300) },
    })
    expect(filled().between(at(2, 50), at(2, 300))).to.deep.include({ ids: [], changed: true })
    expect(filled().between(at(2, 300), at(2, 400))).to.deep.equal({ ids: [4, 3], changed: true })
  })

  it('counts ids and one per transaction; forgetting the oldest moves start to its end', () => {
    const memory = filled()
    expect(memory.size).to.equal(11)
    memory.forgetOldest()
    expect(memory.start).to.deep.equal(at(1, 100))
    expect(memory.size).to.equal(8)
    expect(memory.oldestEnd()).to.deep.equal(at(1, 200))
    expect(memory.between(at(1, 100), at(9, 0)).ids).to.deep.equal([1, 4, 3])
  })

  it('stays right across the cut of forgotten transactions (compaction)', () => {
    const memory = new TransactionMemory(at(1, 0))
    for (let i = 1; i <= 5000; i++) memory.push(at(1 + Math.floor(i / 1000), i), i % 7 === 0 ? [] : [i, i + 1], i % 7 === 0 ? `reset ${i}` : undefined)
    for (let i = 0; i < 3000; i++) memory.forgetOldest()
    expect(memory.count).to.equal(2000)
    expect(memory.start).to.deep.equal(at(4, 3000))
    const between = memory.between(at(4, 3000), at(4, 3010))
    expect(between.ids).to.deep.equal(Array.from({ length: 10 }, (_, i) => 3001 + i))
    expect(between.reset).to.deep.equal({ reason: 'reset 3003', at: at(4, 3003) })
    while (memory.oldestEnd() !== undefined) memory.forgetOldest()
    expect(memory.size).to.equal(0)
    expect(memory.between(at(1, 0), at(9, 0))).to.deep.equal({ ids: [], changed: false })
  })
})
