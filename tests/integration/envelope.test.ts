// WordPress's `_envelope` global parameter (http/envelope.ts): the answer, its
// status and its own headers as one JSON object sent with 200; CSV and
// calendar files as they are.
import { expect } from 'chai'
import express from 'express'
import request, { invalidParamsData, pagingLinksOf } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { loadSite } from '../fixtures/site.ts'
import { asksForEnvelope, envelopeAnswer } from '../../server/http/envelope.ts'

const API = '/wp-json/booking-calendar/v1'

describe('_envelope', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('envelope')
    await loadSite(db)
    t = createTestApp(db, { env: { SITE_TIMEZONE: 'Europe/Berlin' } })
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  const ANSWERS = [
    ['a narrow report (read whole, sent with Content-Length)', '/slots?start=2026-11-01&end=2026-12-31'],
    ['every booking (streamed, chunked)', '/slots?flat'],
    ['a page', '/slots?flat&per_page=2&page=2'],
    ['disabled-time/', '/disabled-time?start=2026-12-20&end=2026-12-31'],
    ['summary/', '/summary?start=2026-11-01&end=2026-11-30&group_by=service'],
    ['the namespace index', ''],
  ] as const

  for (const [name, path] of ANSWERS) {
    it(`${name}: the same body, status and the answer's own headers in the envelope, sent with 200`, async () => {
      const plain = await request(t.app).get(`${API}${path}`).expect(200)
      const joiner = path.includes('?') ? '&' : '?'
      const enveloped = await request(t.app).get(`${API}${path}${joiner}_envelope`).expect(200)
      expect(enveloped.headers['content-type']).to.equal('application/json; charset=utf-8')
      expect(Object.keys(enveloped.body)).to.deep.equal(['body', 'status', 'headers'])
      expect(enveloped.body.body).to.deep.equal(plain.body)
      expect(enveloped.body.status).to.equal(200)
      const own: Record<string, string | number> = {}
      for (const [header, name] of [['x-wp-total', 'X-WP-Total'], ['x-wp-totalpages', 'X-WP-TotalPages'], ['link', 'Link']] as const) {
        // The totals as numbers, as WordPress's envelope holds them.
        const value = header === 'link' ? pagingLinksOf(plain.headers[header]) : plain.headers[header]
        if (value !== undefined) own[name] = name === 'Link' ? value : Number(value)
        // Moved into the envelope, as WordPress does: not sent as headers too. The api.w.org
        // Link is the server's, not the answer's (WP_REST_Server::serve_request sends it): it stays.
        expect(header === 'link' ? pagingLinksOf(enveloped.headers[header]) : enveloped.headers[header], header).to.equal(undefined)
      }
      expect(enveloped.headers.link).to.match(/^<http:\/\/[^>]+\/wp-json\/>; rel="https:\/\/api\.w\.org\/"$/)
      // A Link repeats the request's own URL, _envelope included (the test below).
      const withoutLinks = (headers: Record<string, string | number>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, name === 'Link' ? 'a link' : value]))
      expect(withoutLinks(enveloped.body.headers)).to.deep.equal(withoutLinks(own))
    })
  }

  it('a page: X-WP-TotalPages and Link in the envelope, the Link keeping _envelope as written', async () => {
    const res = await request(t.app).get(`${API}/slots?flat&per_page=2&page=2&_envelope`).set('Host', 'site.example').expect(200)
    expect(res.body.headers['X-WP-TotalPages']).to.be.a('number')
    expect(res.body.headers.Link).to.include('<http://site.example/wp-json/booking-calendar/v1/slots?flat&per_page=2&page=1&_envelope>; rel="prev"')
  })

  it('a refusal: its status and WordPress\'s error in the envelope, sent with 200', async () => {
    const res = await request(t.app).get(`${API}/slots?start=tomorrow&_envelope=1`).expect(200)
    expect(res.body).to.deep.equal({
      body: {
        code: 'rest_invalid_param', message: 'Invalid parameter(s): start',
        data: invalidParamsData({ start: 'start must be a date as DD.MM.YYYY, DD/MM/YYYY or YYYY-MM-DD.' }),
      },
      status: 400,
      headers: {},
    })
    const unknown = await request(t.app).get('/?rest_route=/wp/v2/posts&_envelope').expect(200)
    expect(unknown.body).to.include({ status: 404 })
  })

  it('any value, or none, asks for it (PHP\'s isset); a longer name does not', async () => {
    for (const query of ['_envelope', '_envelope=', '_envelope=0', '_envelope[]=x']) {
      expect((await request(t.app).get(`${API}/slots?flat&per_page=1&${query}`).expect(200)).body, query).to.have.keys('body', 'status', 'headers')
    }
    const not = await request(t.app).get(`${API}/slots?flat&per_page=1&_envelopes=1`).expect(200)
    expect(not.body).to.have.property('booked_slots')
    expect(not.headers['x-wp-total']).to.match(/^\d+$/)
  })

  it('CSV, a calendar feed and HEAD are sent as they are', async () => {
    for (const path of ['/slots?format=csv', '/slots?format=ics&start=2026-11-01&end=2026-12-31']) {
      const plain = await request(t.app).get(`${API}${path}`).expect(200)
      const enveloped = await request(t.app).get(`${API}${path}&_envelope`).expect(200)
      expect(enveloped.headers['content-type'], path).to.equal(plain.headers['content-type'])
      expect(enveloped.text.replace(/DTSTAMP:\w+/g, ''), path).to.equal(plain.text.replace(/DTSTAMP:\w+/g, ''))
      expect(enveloped.headers['x-wp-total'], path).to.equal(plain.headers['x-wp-total'])
    }
    const head = await request(t.app).head(`${API}/slots?flat&_envelope`).expect(200)
    expect(head.headers['x-wp-total']).to.match(/^\d+$/)
  })
})

describe('envelopeAnswer, on answers of every shape', () => {
  const app = express()
  app.use((req, res, next) => {
    if (asksForEnvelope(req.url)) envelopeAnswer(res)
    next()
  })
  const busy = { code: 'rest_database_unavailable', message: 'All database connections are busy. Try again in a moment.', data: { status: 503 } }
  app.get('/busy', (_req, res) => { res.setHeader('Retry-After', '2'); res.status(503).json(busy) })
  app.get('/empty', (_req, res) => { res.setHeader('Content-Type', 'application/json; charset=utf-8'); res.end() })
  app.get('/chunks', (_req, res) => {
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('X-WP-Total', '3')
    res.write('[1,')
    res.write(Buffer.from('2,'))
    res.end('3]')
  })

  it('Retry-After and a 503 go into the envelope', async () => {
    const res = await request(app).get('/busy?_envelope').expect(200)
    expect(res.headers['retry-after']).to.equal(undefined)
    expect(res.body).to.deep.equal({ body: busy, status: 503, headers: { 'Retry-After': '2' } })
  })

  it('a body written in pieces, and none at all (null)', async () => {
    expect((await request(app).get('/chunks?_envelope').expect(200)).body).to.deep.equal({ body: [1, 2, 3], status: 200, headers: { 'X-WP-Total': 3 } })
    expect((await request(app).get('/empty?_envelope').expect(200)).body).to.deep.equal({ body: null, status: 200, headers: {} })
  })

  it('asksForEnvelope reads the query string only', () => {
    expect(asksForEnvelope('/x/_envelope')).to.equal(false)
    expect(asksForEnvelope('/x?a=_envelope')).to.equal(false)
    expect(asksForEnvelope('/x?a=1&_envelope')).to.equal(true)
    expect(asksForEnvelope('/x?%5Fenvelope=1')).to.equal(true)
    expect(asksForEnvelope('/x?_envelope[]=1')).to.equal(true)
    expect(asksForEnvelope('/x?_envelopes=1&envelope=1')).to.equal(false)
  })
})
