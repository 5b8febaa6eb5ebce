// The log source's requirements (db/binlog-requirements.ts; API.md, "GET
// changes/", Sources): checked in order, the first one missing named.
import { expect } from 'chai'
import { firstMissingRequirement, globalPrivileges, readVisibleLogPosition, type BinlogFacts } from '../../db/binlog-requirements.ts'

const MARIADB_GRANTS = [
  "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `reader`@`%` IDENTIFIED BY PASSWORD '*AB'",
  'GRANT SELECT ON `site`.* TO `reader`@`%`',
]
const ALL_HOLD: BinlogFacts = {
  grants: MARIADB_GRANTS,
  statusReadable: true,
  variables: { log_bin: 'ON', binlog_format: 'ROW', binlog_row_image: 'FULL', binlog_row_metadata: 'FULL' },
  snapshotPosition: true,
}

describe('globalPrivileges: what SHOW GRANTS gives ON *.*', () => {
  it('MariaDB 10.11 names', () => {
    expect([...globalPrivileges(MARIADB_GRANTS)]).to.deep.equal(['REPLICATION SLAVE', 'BINLOG MONITOR'])
  })

  it('MySQL 8 names, and grants on one database are not global', () => {
    expect([...globalPrivileges(['GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `r`@`%`', 'GRANT ALL PRIVILEGES ON `x`.* TO `r`@`%`'])])
      .to.deep.equal(['REPLICATION SLAVE', 'REPLICATION CLIENT'])
  })
})

describe('firstMissingRequirement, in order', () => {
  it('none when all hold', () => expect(firstMissingRequirement(ALL_HOLD)).to.equal(undefined))

  it('ALL PRIVILEGES ON *.* is enough', () => {
    expect(firstMissingRequirement({ ...ALL_HOLD, grants: ['GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION'] })).to.equal(undefined)
  })

  const cases: Array<[string, Partial<BinlogFacts>, RegExp]> = [
    ['an account with SELECT only: REPLICATION SLAVE, before anything else', { grants: ['GRANT SELECT ON `site`.* TO `r`@`%`'], variables: {} }, /REPLICATION SLAVE/],
    ['the log\'s status refused: BINLOG MONITOR or REPLICATION CLIENT', { statusReadable: false, variables: {} }, /BINLOG MONITOR.*REPLICATION CLIENT/],
    ['log_bin OFF, before the format', { variables: { log_bin: 'OFF', binlog_format: 'MIXED' }, snapshotPosition: false }, /log_bin is OFF/],
    // MySQL: its log runs ahead of what a read sees, and no statement an account without BACKUP_ADMIN may run says by how much.
    ['no consistent snapshot\'s position (MySQL), before the format', { variables: { ...ALL_HOLD.variables, binlog_format: 'MIXED' }, snapshotPosition: false }, /^the server names no binary log position of a consistent snapshot .*MySQL has not.*digest source/],
    ['binlog_format=MIXED', { variables: { ...ALL_HOLD.variables, binlog_format: 'MIXED' } }, /^binlog_format is MIXED, not ROW/],
    ['binlog_row_image=MINIMAL', { variables: { ...ALL_HOLD.variables, binlog_row_image: 'MINIMAL' } }, /^binlog_row_image is MINIMAL, not FULL/],
    ['binlog_row_metadata=MINIMAL', { variables: { ...ALL_HOLD.variables, binlog_row_metadata: 'MINIMAL' } }, /^binlog_row_metadata is MINIMAL, not FULL/],
    ['a server without binlog_row_metadata (MariaDB 10.4)', { variables: { log_bin: 'ON', binlog_format: 'ROW', binlog_row_image: 'FULL' } }, /has no binlog_row_metadata/],
  ]
  for (const [name, facts, expected] of cases) {
    it(name, () => expect(firstMissingRequirement({ ...ALL_HOLD, ...facts })).to.match(expected))
  }
})

describe('readVisibleLogPosition: a consistent snapshot\'s position, or none', () => {
  // No MySQL server runs here (docs/databases.md): these are the answers its manual gives to the
  // statements asked, MySQL's having no Binlog_snapshot_* status. MariaDB's are run in
  // tests/integration/binlog-change-log.test.ts.
  const answering = (snapshot: Array<{ Variable_name: string; Value: string }>, status: Array<{ File: string; Position: number }>) => {
    const asked: string[] = []
    return {
      asked,
      connection: {
        query: (sql: string): Promise<[unknown, unknown]> => {
          asked.push(sql)
          if (sql.startsWith('SHOW STATUS')) return Promise.resolve([snapshot, undefined])
          if (sql === 'SHOW MASTER STATUS') return Promise.resolve([status, undefined])
          return Promise.resolve([[], undefined])
        },
      },
    }
  }
  const MARIADB_SNAPSHOT = [{ Variable_name: 'Binlog_snapshot_file', Value: 'bc-bin.000002' }, { Variable_name: 'Binlog_snapshot_position', Value: '1234' }]

  it('MariaDB, Percona Server: the snapshot\'s, read inside it, never SHOW MASTER STATUS\'s', async () => {
    const { asked, connection } = answering(MARIADB_SNAPSHOT, [{ File: 'bc-bin.000002', Position: 9999 }])
    expect(await readVisibleLogPosition(connection)).to.deep.equal({ file: 'bc-bin.000002', position: 1234 })
    expect(asked).to.deep.equal(['START TRANSACTION WITH CONSISTENT SNAPSHOT', "SHOW STATUS LIKE 'binlog_snapshot_%'", 'COMMIT'])
  })

  it('MariaDB, named so: one statement, outside a transaction (MariaDB gives its last visible commit\'s position there)', async () => {
    const { asked, connection } = answering(MARIADB_SNAPSHOT, [{ File: 'bc-bin.000002', Position: 9999 }])
    expect(await readVisibleLogPosition(connection, 'mariadb')).to.deep.equal({ file: 'bc-bin.000002', position: 1234 })
    expect(asked).to.deep.equal(["SHOW STATUS LIKE 'binlog_snapshot_%'"])
  })

  it('MySQL (no snapshot position, a log): refused, not answered from SHOW MASTER STATUS, which runs ahead of reads', async () => {
    const { connection } = answering([], [{ File: 'mysql-bin.000002', Position: 9999 }])
    let refused: unknown
    await readVisibleLogPosition(connection).catch((error: unknown) => { refused = error })
    expect(String(refused)).to.match(/names no binary log position of a consistent snapshot/)
  })

  it('no binary log at all: none', async () => {
    const { connection } = answering([{ Variable_name: 'Binlog_snapshot_file', Value: '' }, { Variable_name: 'Binlog_snapshot_position', Value: '0' }], [])
    expect(await readVisibleLogPosition(connection)).to.equal(undefined)
  })
})
