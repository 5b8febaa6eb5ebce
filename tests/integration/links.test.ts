// API.md, "Links and addresses": Link headers use PUBLIC_URL when it is set, else
// the scheme and host the client used, read from X-Forwarded-Proto / X-Forwarded-Host
// only when the request comes through a trusted proxy (TRUST_PROXY).
import { expect } from 'chai'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp } from '../support/app.ts'
import { loadSite } from '../fixtures/site.ts'

const PAGE = '/wp-json/booking-calendar/v1/slots?flat&per_page=1&_fields=id'
const next = (base: string) => `<${base}/wp-json/booking-calendar/v1/slots?flat&per_page=1&_fields=id&page=2>; rel="next"`

describe('Links and addresses', () => {
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('links')
    await loadSite(db)
  })
  after(async () => {
    await db.drop()
  })

  async function linkOf(env: Record<string, string>, headers: Record<string, string>): Promise<string> {
    const t = createTestApp(db, { env })
    try {
      const res = await request(t.app).get(PAGE).set(headers).expect(200)
      return res.headers.link as string
    } finally {
      await t.close()
    }
  }

  const behindProxy = { Host: 'api.internal:8080', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'shop.example.com' }

  it('by default trusts a proxy on loopback: https and the forwarded host', async () => {
    expect(await linkOf({}, behindProxy)).to.equal(next('https://shop.example.com'))
  })

  it('ignores X-Forwarded-* from a peer TRUST_PROXY does not name, and uses the request\'s own scheme and Host', async () => {
    expect(await linkOf({ TRUST_PROXY: '10.0.0.1' }, behindProxy)).to.equal(next('http://api.internal:8080'))
    expect(await linkOf({ TRUST_PROXY: 'false' }, behindProxy)).to.equal(next('http://api.internal:8080'))
  })

  it('takes the scheme alone from a trusted proxy that sends no X-Forwarded-Host', async () => {
    expect(await linkOf({}, { Host: 'shop.example.com', 'X-Forwarded-Proto': 'https' })).to.equal(next('https://shop.example.com'))
  })

  it('takes http or https alone from X-Forwarded-Proto: any other scheme gives http', async () => {
    for (const proto of ['javascript', 'ftp', 'data']) {
      expect(await linkOf({}, { Host: 'shop.example.com', 'X-Forwarded-Proto': proto }), proto).to.equal(next('http://shop.example.com'))
    }
  })

  it('PUBLIC_URL wins over Host and every forwarded header', async () => {
    expect(await linkOf({ PUBLIC_URL: 'https://bookings.example.org/' }, behindProxy)).to.equal(next('https://bookings.example.org'))
  })

  it('writes no Host that is not a host name into a URL', async () => {
    expect(await linkOf({ TRUST_PROXY: 'false' }, { Host: 'evil.example>; rel="x"' })).to.equal(next('http://localhost'))
  })
})
