import { expect } from 'chai'
import {
  isStatementTimeout, limitedStatement, parseServerVersion, serverEndsStatements, sessionStatements,
  rowsInTableOrder, statementTimeLimit, TIMEOUT_ERRNOS, unlimitedStatement, versionRead, withOptimizerHints,
} from '../../db/server-dialect.ts'

// The version strings each server gives: in its handshake (MariaDB 10.x prefixes '5.5.5-'), or from SELECT VERSION().
const SERVERS = {
  'MariaDB 10.3': '5.5.5-10.3.39-MariaDB-0+deb10u2',
  'MariaDB 10.11': '5.5.5-10.11.6-MariaDB-0+deb12u1',
  'MariaDB 11.4': '11.4.2-MariaDB-ubu2404',
  'MySQL 5.5': '5.5.62-log',
  'MySQL 5.6': '5.6.51',
  'MySQL 5.7': '5.7.44-log',
  'MySQL 8.0': '8.0.36',
  'MySQL 8.4': '8.4.3',
} as const
const server = (name: keyof typeof SERVERS) => parseServerVersion(SERVERS[name])

const SELECT = 'select `id` from `wp_booking_calendar_bookings` where `id` > 1'

describe('the database server and its statements (db/server-dialect.ts)', () => {
  it('reads the kind and version from the handshake or VERSION()', () => {
    expect(server('MariaDB 10.11')).to.deep.include({ kind: 'mariadb', version: '10.11.6' })
    expect(parseServerVersion('10.11.6-MariaDB-0+deb12u1')).to.deep.include({ kind: 'mariadb', version: '10.11.6' })
    expect(server('MariaDB 11.4')).to.deep.include({ kind: 'mariadb', version: '11.4.2' })
    expect(server('MySQL 8.0')).to.deep.include({ kind: 'mysql', version: '8.0.36', major: 8, minor: 0, patch: 36 })
    expect(server('MySQL 5.5')).to.deep.include({ kind: 'mysql', version: '5.5.62' })
    // A MariaDB started with --version=8.0.36-fake (tests/integration/mysql-path.test.ts) says MySQL.
    expect(parseServerVersion('8.0.36-fake')).to.deep.include({ kind: 'mysql', version: '8.0.36' })
    expect(parseServerVersion('')).to.deep.include({ kind: 'mysql', version: '0.0.0' })
    // What a proxy may say, or a build that names no version: not read, so what every supported server takes.
    expect(versionRead(parseServerVersion('proxysql'))).to.equal(false)
    expect(versionRead(parseServerVersion('MariaDB build'))).to.equal(false)
    expect(versionRead(parseServerVersion('5.5.30'))).to.equal(true)
  })

  it('keeps the time limit the way each server can', () => {
    const limits = Object.fromEntries(Object.keys(SERVERS).map((name) => [name, statementTimeLimit(server(name as keyof typeof SERVERS))]))
    expect(limits).to.deep.equal({
      'MariaDB 10.3': 'max_statement_time',
      'MariaDB 10.11': 'max_statement_time',
      'MariaDB 11.4': 'max_statement_time',
      'MySQL 5.5': 'service_kill',
      'MySQL 5.6': 'service_kill',
      'MySQL 5.7': 'max_execution_time_hint',
      'MySQL 8.0': 'max_execution_time_hint',
      'MySQL 8.4': 'max_execution_time_hint',
    })
    expect(statementTimeLimit(parseServerVersion('5.7.7-rc'))).to.equal('service_kill')
    expect(statementTimeLimit(parseServerVersion('5.7.8-rc'))).to.equal('max_execution_time_hint')
    expect(statementTimeLimit(parseServerVersion('5.5.5-10.1.1-MariaDB'))).to.equal('service_kill')
    expect(statementTimeLimit(parseServerVersion('5.5.5-10.1.2-MariaDB'))).to.equal('max_statement_time')
    expect(statementTimeLimit(parseServerVersion('proxysql'))).to.equal('service_kill')
    expect(serverEndsStatements(server('MySQL 5.6'))).to.equal(false)
    expect(serverEndsStatements(server('MySQL 5.7'))).to.equal(true)
  })

  it('starts each session with statements its server takes', () => {
    const sessions = Object.fromEntries(Object.keys(SERVERS).map((name) => [name, sessionStatements(server(name as keyof typeof SERVERS), 10_000)]))
    // No NO_AUTO_CREATE_USER on any server: MySQL 8.0.11 and later refuse it, and it only ever concerned GRANT.
    const sqlMode = "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"
    const mariadb = [
      'SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY',
      'SET SESSION max_statement_time = 10.000',
      sqlMode,
    ]
    expect(sessions['MariaDB 10.3']).to.deep.equal(mariadb)
    expect(sessions['MariaDB 10.11']).to.deep.equal(mariadb)
    expect(sessions['MariaDB 11.4']).to.deep.equal(mariadb)
    // What every supported server takes: MySQL 5.5, MariaDB 5.5 (CentOS 7's, no READ ONLY), and a version not read.
    const everyServer = ['SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ', sqlMode, 'SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci']
    expect(sessions['MySQL 5.5']).to.deep.equal(everyServer)
    expect(sessionStatements(parseServerVersion('5.5.68-MariaDB'), 10_000)).to.deep.equal(everyServer)
    expect(sessionStatements(parseServerVersion('proxysql'), 10_000)).to.deep.equal(everyServer)
    expect(sessionStatements(parseServerVersion('not-a-version-MariaDB'), 10_000)).to.deep.equal(everyServer)
    // MariaDB 10.0 has READ ONLY, no max_statement_time; 10.1.1 has max_statement_time but no SET STATEMENT
    // to lift it for an export, so it is held by the service's timer, as 10.0 is.
    const readOnlyNoLimit = ['SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY', sqlMode]
    expect(sessionStatements(parseServerVersion('5.5.5-10.0.38-MariaDB'), 10_000)).to.deep.equal(readOnlyNoLimit)
    expect(sessionStatements(parseServerVersion('5.5.5-10.1.1-MariaDB'), 10_000)).to.deep.equal(readOnlyNoLimit)
    expect(sessionStatements(parseServerVersion('5.5.5-10.1.2-MariaDB'), 10_000)).to.deep.equal(mariadb)
    expect(sessions['MySQL 5.6']).to.deep.equal(readOnlyNoLimit)
    // MySQL 5.7.8 to 8.0.2: a global max_execution_time is lifted for the session (no SET_VAR yet); the short statements keep their hint.
    expect(sessions['MySQL 5.7']).to.deep.equal(['SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY', 'SET SESSION max_execution_time = 0', sqlMode])
    expect(sessionStatements(parseServerVersion('8.0.2-dmr'), 10_000)).to.include('SET SESSION max_execution_time = 0')
    expect(sessionStatements(parseServerVersion('5.7.7-rc'), 10_000)).to.not.include('SET SESSION max_execution_time = 0')
    // No max_statement_time (MariaDB's) on any MySQL.
    const mysql8 = ['SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY', sqlMode]
    expect(sessions['MySQL 8.0']).to.deep.equal(mysql8)
    expect(sessions['MySQL 8.4']).to.deep.equal(mysql8)
    expect(sessionStatements(parseServerVersion('8.0.10'), 1000)).to.deep.equal([...mysql8.slice(0, 1), sqlMode])
  })

  it('limits a statement by a hint on MySQL 5.7+ only', () => {
    expect(limitedStatement(server('MySQL 8.0'), SELECT, 10_000)).to.equal('select /*+ MAX_EXECUTION_TIME(10000) */ `id` from `wp_booking_calendar_bookings` where `id` > 1')
    expect(limitedStatement(server('MySQL 5.7'), SELECT, 250)).to.equal('select /*+ MAX_EXECUTION_TIME(250) */ `id` from `wp_booking_calendar_bookings` where `id` > 1')
    for (const name of ['MariaDB 10.3', 'MariaDB 10.11', 'MariaDB 11.4', 'MySQL 5.5', 'MySQL 5.6'] as const) {
      expect(limitedStatement(server(name), SELECT, 10_000), name).to.equal(SELECT)
    }
    // Only a SELECT takes it: a transaction's statements are left as they are.
    expect(limitedStatement(server('MySQL 8.0'), 'START TRANSACTION', 10_000)).to.equal('START TRANSACTION')
  })

  it('lifts the limit for an export on each server, a global one too', () => {
    expect(unlimitedStatement(server('MariaDB 10.11'), SELECT)).to.equal(`SET STATEMENT max_statement_time = 0 FOR ${SELECT}`)
    expect(unlimitedStatement(server('MariaDB 10.3'), SELECT)).to.equal(`SET STATEMENT max_statement_time = 0 FOR ${SELECT}`)
    // MySQL 8.0.3 and later: SET_VAR lifts a global max_execution_time for this statement.
    const lifted = 'select /*+ SET_VAR(max_execution_time = 0) */ `id` from `wp_booking_calendar_bookings` where `id` > 1'
    expect(unlimitedStatement(server('MySQL 8.0'), SELECT)).to.equal(lifted)
    expect(unlimitedStatement(server('MySQL 8.4'), SELECT)).to.equal(lifted)
    // Before: the session's value is 0 (sessionStatements), or there is no limit at all.
    for (const name of ['MySQL 5.5', 'MySQL 5.6', 'MySQL 5.7'] as const) {
      expect(unlimitedStatement(server(name), SELECT), name).to.equal(SELECT)
    }
    for (const version of ['5.5.5-10.1.1-MariaDB', '5.5.68-MariaDB', 'proxysql']) {
      expect(unlimitedStatement(parseServerVersion(version), SELECT), version).to.equal(SELECT)
    }
  })

  it('reads a digest\'s rows in the table\'s order on MariaDB (multi-range read), and leaves MySQL\'s cost-based choice alone', () => {
    const mrr = "SET STATEMENT optimizer_switch = 'mrr=on,mrr_sort_keys=on,mrr_cost_based=off', mrr_buffer_size = 4194304 FOR "
    expect(rowsInTableOrder(server('MariaDB 10.11'), SELECT)).to.equal(mrr + SELECT)
    expect(rowsInTableOrder(server('MariaDB 11.4'), SELECT)).to.equal(mrr + SELECT)
    expect(rowsInTableOrder(server('MariaDB 10.3'), SELECT)).to.equal(mrr + SELECT)
    // SET STATEMENT came with MariaDB 10.1.2.
    expect(rowsInTableOrder(parseServerVersion('5.5.5-10.1.1-MariaDB'), SELECT)).to.equal(SELECT)
    expect(rowsInTableOrder(parseServerVersion('5.5.5-10.0.38-MariaDB'), SELECT)).to.equal(SELECT)
    for (const name of ['MySQL 5.5', 'MySQL 5.7', 'MySQL 8.0', 'MySQL 8.4'] as const) expect(rowsInTableOrder(server(name), SELECT), name).to.equal(SELECT)
  })

  it('joins hints into one comment, after the first SELECT only', () => {
    expect(withOptimizerHints('SELECT 1', ['A(1)'])).to.equal('SELECT /*+ A(1) */ 1')
    expect(withOptimizerHints('select /*+ A(1) */ x from (select y) as t', ['B(2)'])).to.equal('select /*+ A(1) B(2) */ x from (select y) as t')
    expect(withOptimizerHints('SELECT 1', [])).to.equal('SELECT 1')
    expect(withOptimizerHints('COMMIT', ['A(1)'])).to.equal('COMMIT')
  })

  it('knows each server\'s time-out errors', () => {
    expect(isStatementTimeout({ errno: 1969 })).to.equal(true)
    expect(isStatementTimeout({ errno: 3024 })).to.equal(true)
    expect(isStatementTimeout({ errno: 1317 })).to.equal(false)
    expect(isStatementTimeout(null)).to.equal(false)
    expect([...TIMEOUT_ERRNOS].sort()).to.deep.equal([1317, 1969, 3024])
  })
})
