// scripts/mariadb.ts's findBinary: the demo and the tests find mariadbd on PATH
// (a Homebrew MariaDB), not only in Debian's fixed folders.
import { expect } from 'chai'
import { chmodSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { findBinary } from '../../scripts/mariadb.ts'

describe('findBinary (the demo\'s mariadbd)', () => {
  let root: string
  const folder = (name: string) => {
    const dir = join(root, name)
    mkdirSync(dir)
    return dir
  }
  const executable = (dir: string, name: string, mode = 0o755) => {
    writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n')
    chmodSync(join(dir, name), mode)
    return join(dir, name)
  }

  beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'bc-finder-')) })
  afterEach(() => { rmSync(root, { recursive: true, force: true }) })

  it('finds an executable on PATH, as a Homebrew MariaDB has it', () => {
    const brew = folder('homebrew-bin')
    const mariadbd = executable(brew, 'bc-test-mariadbd')
    expect(findBinary('bc-test-mariadbd', [folder('empty'), brew].join(delimiter))).to.equal(mariadbd)
  })

  it('takes the first on PATH, skipping a file that is not executable and a folder of that name', () => {
    const first = folder('first')
    executable(first, 'bc-test-mariadbd', 0o644)
    mkdirSync(join(folder('second'), 'bc-test-mariadbd'))
    const third = folder('third')
    const mariadbd = executable(third, 'bc-test-mariadbd')
    expect(findBinary('bc-test-mariadbd', [first, join(root, 'second'), third].join(delimiter))).to.equal(mariadbd)
  })

  it('is undefined when neither PATH nor the server folders hold it', () => {
    expect(findBinary('bc-test-mariadbd', folder('nothing'))).to.equal(undefined)
    expect(findBinary('bc-test-mariadbd', '')).to.equal(undefined)
  })

  it('still looks in the server folders when PATH lacks them (sbin for a user who is not root)', () => {
    expect(findBinary('sh', folder('nothing'))).to.match(/^\/usr\/(local\/)?s?bin\/sh$/)
  })
})
