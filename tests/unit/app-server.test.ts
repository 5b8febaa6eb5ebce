// The service's HTTP server makes requests and responses with the app's
// prototypes from the start (server/http/app-server.ts), so Express's own
// Object.setPrototypeOf on each changes nothing; and Express works on them as before.
import { expect } from 'chai'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { IncomingMessage, ServerResponse } from 'node:http'
import { createAppServer } from '../../server/http/app-server.ts'

describe('the app\'s HTTP server', () => {
  for (const reusePrototypes of [true, false]) {
    const arrives = reusePrototypes ? 'the app\'s prototypes (HTTP_PROTOTYPE_REUSE, the default)' : 'node:http\'s own (HTTP_PROTOTYPE_REUSE=false)'
    it(`a request and its response arrive with ${arrives}, and Express answers them as usual`, async () => {
      const app = express()
      app.get('/hello', (req, res) => {
        res.json({ header: req.get('x-test'), sameApp: req.app === app && res.app === app })
      })
      const server = createAppServer(app, { headersTimeoutMs: 10_000, reusePrototypes })
      const arrived: Array<[object, object]> = []
      // Before the app: what node:http made, before Express touched it.
      server.prependListener('request', (req, res) => arrived.push([Object.getPrototypeOf(req) as object, Object.getPrototypeOf(res) as object]))
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      try {
        const { port } = server.address() as AddressInfo
        const answer = await fetch(`http://127.0.0.1:${port}/hello`, { headers: { 'X-Test': 'yes' } })
        expect(answer.status).to.equal(200)
        expect(answer.headers.get('content-type')).to.equal('application/json; charset=utf-8')
        expect(await answer.json()).to.deep.equal({ header: 'yes', sameApp: true })
        expect(arrived).to.deep.equal([reusePrototypes ? [app.request, app.response] : [IncomingMessage.prototype, ServerResponse.prototype]])
        const missing = await fetch(`http://127.0.0.1:${port}/nowhere`)
        expect(missing.status).to.equal(404)
      } finally {
        await new Promise((resolve) => server.close(resolve))
      }
    })
  }
})
