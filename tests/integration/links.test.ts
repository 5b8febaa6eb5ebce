// API.md, "Links and addresses": Link headers use PUBLIC_URL when it is set, else
// the scheme and host the client used, read from X-Forwarded-Proto / X-Forwarded-Host
// only when the request comes through a trusted proxy (TRUST_PROXY).
import { expect } from 'chai'
import request, { pagingLinksOf } from '../support/request.ts'
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
      return pagingLinksOf(res.headers.link)!
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

  describe('the query repeated in a link', () => {
    let t: ReturnType<typeof createTestApp>
    before(() => { t = createTestApp(db, { env: { PUBLIC_URL: 'https://shop.example.com' } }) })
    after(async () => { await t.close() })
    const SLOTS = '/wp-json/booking-calendar/v1/slots'
    const linkOfQuery = async (query: string) => pagingLinksOf((await request(t.app).get(`${SLOTS}?${query}`).expect(200)).headers.link)!
    /** Links as node-wpapi's parser (`li` 1.3) reads them: split at every comma, each part's rel and its URL by li's own expressions. */
    const asWpapiReadsThem = (link: string) => Object.fromEntries(link.split(',').map((part) => part.trim())
      .map((part) => [/\brel="?([^"]+)"?\s*;?/.exec(part)?.[1], /^<(.*)>/.exec(part)?.[1]]))

    it('percent-encodes what would end the link or split the header: < > " , ; and spaces, as WordPress does', async () => {
      const link = await linkOfQuery('flat&per_page=1&_fields=id,status&x=a>b"c<d;e%20f g')
      expect(link).to.equal(`<https://shop.example.com${SLOTS}?flat&per_page=1&_fields=id%2Cstatus&x=a%3Eb%22c%3Cd%3Be%20f%20g&page=2>; rel="next"`)
      expect(asWpapiReadsThem(link)).to.deep.equal({ next: `https://shop.example.com${SLOTS}?flat&per_page=1&_fields=id%2Cstatus&x=a%3Eb%22c%3Cd%3Be%20f%20g&page=2` })
    })

    it('lets no query add a link of its own', async () => {
      const link = await linkOfQuery('flat&per_page=1&x=>;rel="next",<http://evil.example/x')
      expect(link).to.equal(`<https://shop.example.com${SLOTS}?flat&per_page=1&x=%3E%3Brel=%22next%22%2C%3Chttp://evil.example/x&page=2>; rel="next"`)
      expect(Object.keys(asWpapiReadsThem(link))).to.deep.equal(['next'])
    })

    it('a link followed gives the next page with the same parameters', async () => {
      const first = await request(t.app).get(`${SLOTS}?flat&per_page=2&_fields=id,status&status[]=booked&status[]=pending`).expect(200)
      const next = asWpapiReadsThem(pagingLinksOf(first.headers.link)!).next!
      expect(next).to.equal(`https://shop.example.com${SLOTS}?flat&per_page=2&_fields=id%2Cstatus&status%5B%5D=booked&status%5B%5D=pending&page=2`)
      const second = await request(t.app).get(next.slice('https://shop.example.com'.length)).expect(200)
      expect(second.headers['x-wp-total']).to.equal(first.headers['x-wp-total'])
      expect(Object.keys(second.body.booked_slots[0])).to.deep.equal(['id', 'status'])
      expect(second.body.booked_slots.map((b: { status: string }) => b.status).every((s: string) => ['booked', 'pending'].includes(s))).to.equal(true)
      expect(second.body.booked_slots[0].id).to.not.equal(first.body.booked_slots[0].id)
    })

    it('replaces the page however its name is written (%70age, page[]), in its place', async () => {
      expect(await linkOfQuery('flat&per_page=1&%70age=2&_fields=id')).to.equal(
        `<https://shop.example.com${SLOTS}?flat&per_page=1&page=1&_fields=id>; rel="prev", <https://shop.example.com${SLOTS}?flat&per_page=1&page=3&_fields=id>; rel="next"`)
      expect(await linkOfQuery('flat&per_page=1&page[]=2&_fields=id')).to.equal(
        `<https://shop.example.com${SLOTS}?flat&per_page=1&page=1&_fields=id>; rel="prev", <https://shop.example.com${SLOTS}?flat&per_page=1&page=3&_fields=id>; rel="next"`)
    })
  })

  it('writes no Host that is not a host name into a URL', async () => {
    expect(await linkOf({ TRUST_PROXY: 'false' }, { Host: 'evil.example>; rel="x"' })).to.equal(next('http://localhost'))
  })
})
