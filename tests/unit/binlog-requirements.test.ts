// The log source's requirements (db/binlog-requirements.ts; API.md, "GET
// changes/", Sources): checked in order, the first one missing named.
import { expect } from 'chai'
import { firstMissingRequirement, globalPrivileges, type BinlogFacts } from '../../db/binlog-requirements.ts'

const MARIADB_GRANTS = [
  "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `reader`@`%` IDENTIFIED BY PASSWORD '*AB'",
  'GRANT SELECT ON `site`.* TO `reader`@`%`',
]
const ALL_HOLD: BinlogFacts = {
  grants: MARIADB_GRANTS,
  statusReadable: true,
  variables: { log_bin: 'ON', binlog_format: 'ROW', binlog_row_image: 'FULL', binlog_row_metadata: 'FULL' },
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
    ['log_bin OFF, before the format', { variables: { log_bin: 'OFF', binlog_format: 'MIXED' } }, /log_bin is OFF/],
    ['binlog_format=MIXED', { variables: { ...ALL_HOLD.variables, binlog_format: 'MIXED' } }, /^binlog_format is MIXED, not ROW/],
    ['binlog_row_image=MINIMAL', { variables: { ...ALL_HOLD.variables, binlog_row_image: 'MINIMAL' } }, /^binlog_row_image is MINIMAL, not FULL/],
    ['binlog_row_metadata=MINIMAL', { variables: { ...ALL_HOLD.variables, binlog_row_metadata: 'MINIMAL' } }, /^binlog_row_metadata is MINIMAL, not FULL/],
    ['a server without binlog_row_metadata (MariaDB 10.4)', { variables: { log_bin: 'ON', binlog_format: 'ROW', binlog_row_image: 'FULL' } }, /has no binlog_row_metadata/],
  ]
  for (const [name, facts, expected] of cases) {
    it(name, () => expect(firstMissingRequirement({ ...ALL_HOLD, ...facts })).to.match(expected))
  }
})
