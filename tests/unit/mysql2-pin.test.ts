// The fast path of exports leans on mysql2's internals (db/row-packets.ts), so
// mysql2 is pinned to one version, and this fails loudly, not by a quiet fall
// back to the record's way, when the installed driver lacks what the patch
// expects. Moving the pin: docs/performance.md, "Moving the mysql2 pin".
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { installRowPacketTaking, rowPacketSupport, rowPacketsInstalled } from '../../db/row-packets.ts'

const require = createRequire(import.meta.url)
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> }
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, { version: string }> }

describe('the mysql2 pin (ROWS_AS_BYTES leans on its internals)', () => {
  it('package.json names one exact mysql2 version, the one installed and locked', () => {
    const pinned = manifest.dependencies.mysql2!
    expect(pinned, 'an exact version, no ^ or ~').to.match(/^\d+\.\d+\.\d+$/)
    expect((require('mysql2/package.json') as { version: string }).version).to.equal(pinned)
    expect(lock.packages['node_modules/mysql2']!.version).to.equal(pinned)
  })

  it('the installed mysql2 has what the patch expects: createQuery, and a Query that assigns _rowParser', () => {
    expect(rowPacketSupport()).to.deep.equal({ ok: true })
    // The assignments the accessor intercepts, where mysql2 3.x makes them.
    const source = readFileSync(join(dirname(require.resolve('mysql2/package.json')), 'lib/commands/query.js'), 'utf8')
    expect(source).to.include('this._rowParser = null')
    expect(source).to.match(/this\._rowParser = (staticParser|new \(getTextParser)/)
    expect(source).to.include('this._rowParser.next(packet, this._currentFields, this.options)')
  })

  it('installs, once, and says so', () => {
    expect(installRowPacketTaking()).to.equal(true)
    expect(installRowPacketTaking()).to.equal(true)
    expect(rowPacketsInstalled()).to.equal(true)
  })
})
