// API.md, "Spreadsheets and BI tools": access_token on format=csv in token mode
// (Google Sheets' IMPORTDATA fetches a URL and sends no header), and bom=1 on
// every CSV answer (Excel reads a downloaded CSV without a byte-order mark in the
// local code page), checked on the bytes and with a real reader, pandas.
import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { App } from 'supertest/types.js'
import request, { invalidParamsData, pagingLinksOf } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { loadSite } from '../fixtures/site.ts'
import { aptInstall } from '../../scripts/apt.ts'

const PREFIX = '/wp-json/booking-calendar/v1'
const TOKEN = 'sheet-token-0123456789abcdef'
const NOW = Date.parse('2026-11-22T12:34:56Z')
const BOM = Buffer.from([0xef, 0xbb, 0xbf])

/** One URL of each CSV route, with a range that holds rows; `?` already in it. */
const CSV_URLS = {
  slots: `${PREFIX}/slots?format=csv&start=2026-11-24&end=2026-11-25`,
  summary: `${PREFIX}/summary?format=csv&start=2026-11-01&end=2026-11-30&group_by=service`,
  availability: `${PREFIX}/availability?format=csv&start=2026-11-25&end=2026-11-25&service=haircut`,
}
const HEADERS = {
  slots: 'id,service_id,service_slug,status,booking_date,start,end,all_day,created_date,customer_name,customer_email,customer_phone,note\r\n',
  summary: 'service_id,service_slug,bookings,all_day_bookings,booked_minutes,',
  availability: 'service_id,service_slug,start,end,minutes\r\n',
}
const ROUTES = Object.keys(CSV_URLS) as (keyof typeof CSV_URLS)[]

/** The raw bytes of an answer, with no header but those given (IMPORTDATA sends none). */
async function getRaw(app: App, url: string, headers: Record<string, string> = {}) {
  let req = request(app).get(url)
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value)
  const res = await req.buffer(true).parse((stream, done) => {
    const chunks: Buffer[] = []
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('end', () => done(null, Buffer.concat(chunks)))
  })
  return { res, bytes: res.body as Buffer }
}

/**
 * Debian's Python, whose python3-pandas the test installs when missing: a
 * python3 earlier in PATH (pyenv's) may be another Python without pandas.
 */
const DEBIAN_PYTHON = '/usr/bin/python3'

/** pandas (Debian's python3-pandas), installed when missing, as a person would read the download. */
function readWithPandas(file: string): { columns: string[]; slugs: string[] } {
  const check = spawnSync(DEBIAN_PYTHON, ['-c', 'import pandas'], { stdio: 'ignore' })
  if (check.status !== 0) aptInstall(['python3-pandas'], 'pandas (for the bom=1 test)')
  const script = 'import json, sys, pandas\n' +
    'frame = pandas.read_csv(sys.argv[1], dtype=str, keep_default_na=False)\n' +
    'print(json.dumps({"columns": list(frame.columns), "slugs": list(frame["service_slug"])}))\n'
  const run = spawnSync(DEBIAN_PYTHON, ['-c', script, file], { encoding: 'utf8', timeout: 60_000 })
  if (run.status !== 0) throw new Error(`pandas failed: ${run.stderr}`)
  return JSON.parse(run.stdout) as { columns: string[]; slugs: string[] }
}

describe('Spreadsheets and BI tools', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('sheets')
    await loadSite(db)
    t = createTestApp(db, { env: { AUTH_MODE: 'token', API_TOKENS: `other-token-xyz, ${TOKEN}`, SITE_TIMEZONE: 'Europe/Berlin' }, now: () => NOW })
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  describe('access_token on format=csv', () => {
    it('IMPORTDATA\'s shape: one GET of a URL carrying access_token, no headers, gives the CSV of slots/, summary/ and availability/, with Referrer-Policy: no-referrer', async () => {
      for (const route of ROUTES) {
        const { res, bytes } = await getRaw(t.app, `${CSV_URLS[route]}&access_token=${TOKEN}`)
        expect(res.status, route).to.equal(200)
        expect(res.headers['content-type'], route).to.equal('text/csv; charset=utf-8')
        expect(res.headers['referrer-policy'], route).to.equal('no-referrer')
        expect(bytes.toString('utf8').startsWith(HEADERS[route]), route).to.equal(true)
      }
      // The rest_route form and HEAD too, as a feed's.
      await request(t.app).get(`/?rest_route=/booking-calendar/v1/slots&format=CSV&access_token=${TOKEN}`).expect(200)
      await request(t.app).head(`${CSV_URLS.summary}&access_token=${TOKEN}`).expect(200)
    })

    it('the same URL with format=json gives 401, as does Accept: text/csv without format=csv, and a wrong or repeated token', async () => {
      const message = 'access_token is accepted only on calendar feeds (format=ics of slots/ or disabled-time/) and CSV exports (format=csv of slots/, summary/ or availability/); send the token as Authorization: Bearer instead.'
      for (const route of ROUTES) {
        const json = await request(t.app).get(`${CSV_URLS[route].replace('format=csv', 'format=json')}&access_token=${TOKEN}`).expect(401)
        expect(json.body, route).to.deep.equal({ code: 'rest_not_logged_in', message, data: { status: 401 } })
        const accepted = await request(t.app).get(`${CSV_URLS[route].replace('format=csv&', '')}&access_token=${TOKEN}`).set('Accept', 'text/csv').expect(401)
        expect(accepted.body.message, route).to.equal(message)
        const wrong = await request(t.app).get(`${CSV_URLS[route]}&access_token=wrong`).expect(401)
        expect(wrong.body, route).to.deep.equal({ code: 'rest_not_logged_in', message: 'The bearer token is not valid.', data: { status: 401 } })
        await request(t.app).get(`${CSV_URLS[route]}&access_token=${TOKEN}&access_token=${TOKEN}`).expect(401)
      }
      // disabled-time/ has no CSV; a CSV of summary/ is no feed.
      await request(t.app).get(`${PREFIX}/disabled-time?format=csv&access_token=${TOKEN}`).expect(401)
      await request(t.app).get(`${PREFIX}/summary?format=ics&access_token=${TOKEN}`).expect(401)
    })

    it('the token is in no log line, and a paged CSV\'s Link leaves it out', async () => {
      const before = t.logs.length
      const paged = await request(t.app).get(`${PREFIX}/slots?format=csv&per_page=1&start=2026-11-24&end=2026-11-25&access_token=${TOKEN}`).expect(200)
      expect(pagingLinksOf(paged.headers.link)).to.match(/^<http:\/\/[^/]+\/wp-json\/booking-calendar\/v1/)
      expect(paged.headers.link).to.include(`${PREFIX}/slots?format=csv&per_page=1&start=2026-11-24&end=2026-11-25&page=2>; rel="next"`)
      await request(t.app).get(`${CSV_URLS.summary}&access_token=${TOKEN}`).expect(200)
      const lines = t.logs.slice(before)
      expect(lines.filter((line) => line.msg === 'request').map((line) => [line.status, line.path])).to.deep.equal([
        [200, `${PREFIX}/slots`], [200, `${PREFIX}/summary`],
      ])
      expect(JSON.stringify(lines)).to.not.include(TOKEN)
    })
  })

  describe('bom', () => {
    const auth = { Authorization: `Bearer ${TOKEN}` }

    it('bom=1 puts EF BB BF once before the header row of every CSV answer; without it, no mark', async () => {
      for (const route of ROUTES) {
        const plain = await getRaw(t.app, CSV_URLS[route], auth)
        expect(plain.bytes.subarray(0, 3).equals(BOM), route).to.equal(false)
        for (const form of ['bom=1', 'bom=true', 'bom=TRUE', 'bom']) {
          const marked = await getRaw(t.app, `${CSV_URLS[route]}&${form}`, auth)
          expect(marked.res.status, `${route} ${form}`).to.equal(200)
          expect(marked.bytes.subarray(0, 3).equals(BOM), `${route} ${form}`).to.equal(true)
          expect(marked.bytes.subarray(3).equals(plain.bytes), `${route} ${form}: the mark, then the same bytes`).to.equal(true)
        }
        for (const form of ['bom=0', 'bom=false']) {
          const unmarked = await getRaw(t.app, `${CSV_URLS[route]}&${form}`, auth)
          expect(unmarked.bytes.equals(plain.bytes), `${route} ${form}`).to.equal(true)
        }
      }
    })

    it('bom is ignored on JSON, as WordPress ignores a parameter that does not apply, but a value that is no boolean is 400', async () => {
      for (const route of ROUTES) {
        const url = CSV_URLS[route].replace('format=csv', 'format=json')
        const plain = await request(t.app).get(url).set(auth).expect(200)
        const marked = await request(t.app).get(`${url}&bom=1`).set(auth).expect(200)
        expect(marked.headers['content-type'], route).to.equal('application/json; charset=utf-8')
        expect(marked.text, route).to.equal(plain.text)
        expect(marked.headers.etag, route).to.equal(plain.headers.etag)
        const bad = await request(t.app).get(`${CSV_URLS[route]}&bom=yes`).set(auth).expect(400)
        expect(bad.body.data, route).to.deep.equal(invalidParamsData({ bom: 'bom must be true or false (1, true, 0 or false).' }))
      }
    })

    it('changes the ETag of a CSV answer: a tag names its bytes\' data, and the mark is part of them', async () => {
      for (const route of ROUTES) {
        const plain = await request(t.app).get(CSV_URLS[route]).set(auth).expect(200)
        const marked = await request(t.app).get(`${CSV_URLS[route]}&bom=1`).set(auth).expect(200)
        expect(marked.headers.etag, route).to.be.a('string').and.not.equal(plain.headers.etag)
        await request(t.app).get(`${CSV_URLS[route]}&bom=1`).set(auth).set('If-None-Match', String(marked.headers.etag)).expect(304)
        await request(t.app).get(CSV_URLS[route]).set(auth).set('If-None-Match', String(marked.headers.etag)).expect(200)
      }
    })

    it('pandas reads the first column\'s name without the mark, and стрижка intact', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'bom-'))
      try {
        const { bytes } = await getRaw(t.app, `${CSV_URLS.slots}&bom=1&access_token=${TOKEN}`)
        expect(bytes.subarray(0, 3).equals(BOM)).to.equal(true)
        const file = join(dir, 'slots.csv')
        writeFileSync(file, bytes)
        const read = readWithPandas(file)
        expect(read.columns[0]).to.equal('id')
        expect(read.columns).to.deep.equal(HEADERS.slots.trim().split(','))
        expect(read.slugs).to.deep.equal(['стрижка', 'стрижка', 'haircut', 'haircut'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  })
})
