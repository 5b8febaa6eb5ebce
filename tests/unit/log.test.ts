// The service's JSON log lines (server/log.ts): what an error looks like in them.
import { expect } from 'chai'
import { createLogger } from '../../server/log.ts'

describe('the JSON log', () => {
  const lineOf = (write: (log: ReturnType<typeof createLogger>) => void) => {
    let text = ''
    write(createLogger('info', { write: (line: string) => { text += line } }))
    return JSON.parse(text) as { err: Record<string, unknown> }
  }

  it('an expected error\'s fields go as they are: no "type":"Object", no empty stack', () => {
    expect(lineOf((log) => log.warn({ err: { message: 'Connection lost', code: 'PROTOCOL_CONNECTION_LOST' } }, 'request failed')).err)
      .to.deep.equal({ message: 'Connection lost', code: 'PROTOCOL_CONNECTION_LOST' })
  })

  it('an Error keeps its type, message and stack', () => {
    const { err } = lineOf((log) => log.fatal({ err: new RangeError('port 99999') }, 'cannot listen'))
    expect([err.type, err.message]).to.deep.equal(['RangeError', 'port 99999'])
    expect(err.stack).to.match(/^RangeError: port 99999\n\s+at /)
  })
})
