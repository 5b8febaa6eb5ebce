// npm run demo logs for a person: one readable line per request, not JSON.
import { expect } from 'chai'
import { Writable } from 'node:stream'
import { createDemoLogger } from '../../scripts/demo-log.ts'

describe('the demo log', () => {
  it('writes a request as one readable line with method, path, status, duration and rows', () => {
    let text = ''
    const out = new Writable({ write(chunk, _encoding, callback) { text += String(chunk); callback() } })
    const log = createDemoLogger('info', out)
    log.child({ requestId: 'abc' }).info({ method: 'GET', path: '/wp-json/booking-calendar/v1/slots', route: 'slots', status: 200, durationMs: 12.5, rowsSent: 40, completed: true }, 'request')
    log.info({ port: 8080 }, 'listening')
    const lines = text.trimEnd().split('\n')
    expect(lines[0]).to.match(/^\[\d\d:\d\d:\d\d\] INFO: GET \/wp-json\/booking-calendar\/v1\/slots 200 in 12.5 ms, 40 rows \[abc\]$/)
    expect(lines[1]).to.match(/^\[\d\d:\d\d:\d\d\] INFO: listening$/)
    expect(lines[2]).to.match(/^\s+port: 8080$/)
    expect(() => JSON.parse(lines[0]!)).to.throw()
  })

  it('a request whose client left before the headers reads so, not as null', () => {
    let text = ''
    const out = new Writable({ write(chunk, _encoding, callback) { text += String(chunk); callback() } })
    createDemoLogger('info', out).info({ method: 'GET', path: '/x', status: null, durationMs: 3, rowsSent: 0, requestId: 'r' }, 'request')
    expect(text).to.match(/INFO: GET \/x \(client left before the answer\) in 3 ms, 0 rows \[r\]\n/)
  })
})
