// GET docs (API.md, "GET docs"): the reference for people, rendered by Swagger UI
// from openapi.json in a real browser (Debian's chromium, headless), its files
// served by the service under a CSP that allows nothing from elsewhere.
import { expect } from 'chai'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import express from 'express'
import type { Browser } from 'puppeteer-core'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { launchChromium, watchProblems } from '../support/chromium.ts'
import { DOCS_CSP } from '../../server/routes/docs.ts'
import { buildOpenApiDocument } from '../../server/openapi.ts'

const PAGES = [
  '/wp-json/booking-calendar/v1/docs',
  '/wp-json/booking-calendar/v1/docs/',
  '/booking-calendar/v1/docs',
  '/?rest_route=/booking-calendar/v1/docs',
]

type PathItem = Record<string, unknown> & { $ref?: string }

/**
 * What the page lists, from openapi.json: each route and method a person calls, as
 * "METHOD /path" with its group (tag). Not HEAD, OPTIONS, nor the trailing-slash
 * twins (path items that are a $ref): those stay in the document only.
 */
function operationsForPeople(): string[] {
  const paths = (buildOpenApiDocument() as { paths: Record<string, PathItem> }).paths
  const operations: string[] = []
  for (const [path, item] of Object.entries(paths)) {
    // The root index (/wp-json/) has servers of its own: WordPress's, outside the namespace the page is about.
    if (item.$ref || item.servers) continue
    // A path item holds servers and parameters beside its operations (the root index's servers).
    for (const [method, operation] of Object.entries(item)) {
      if (method !== 'get') continue
      operations.push(`${(operation as { tags: string[] }).tags.join(',')}: ${method.toUpperCase()} ${path}`)
    }
  }
  return operations.sort()
}

/** The groups of the page, in order, as the document's tags name them. */
const GROUPS = ['Bookings', 'Disabled times', 'Reports', 'Feeds', 'About the API']

describe('GET docs', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('docs')
    t = createTestApp(db)
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  describe('the page and its files, over HTTP', () => {
    it('answers the page under every prefix, with a CSP that allows only this service', async () => {
      for (const path of PAGES) {
        const res = await request(t.app).get(path).expect(200)
        expect(res.headers['content-type'], path).to.equal('text/html; charset=utf-8')
        expect(res.headers['content-security-policy'], path).to.equal(
          "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
        expect(res.text, path).to.include('<div id="swagger-ui"')
        expect(res.text, path).to.not.match(/https?:\/\//)
      }
    })

    it('links its files and openapi.json relative to the page, keeping the rest_route form', async () => {
      const links = async (path: string) => {
        const { text } = await request(t.app).get(path).expect(200)
        return [...text.matchAll(/(?:src|href|data-openapi)="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'))
      }
      expect(await links('/booking-calendar/v1/docs')).to.deep.equal(['data:,', 'docs/swagger-ui.css', 'openapi.json', 'openapi.json', 'docs/swagger-ui-bundle.js', 'docs/start.js'])
      expect(await links('/booking-calendar/v1/docs/')).to.deep.equal(['data:,', 'swagger-ui.css', '../openapi.json', '../openapi.json', 'swagger-ui-bundle.js', 'start.js'])
      expect(await links('/?rest_route=/booking-calendar/v1/docs')).to.deep.equal(['data:,',
        '?rest_route=/booking-calendar/v1/docs/swagger-ui.css', '?rest_route=/booking-calendar/v1/openapi.json', '?rest_route=/booking-calendar/v1/openapi.json',
        '?rest_route=/booking-calendar/v1/docs/swagger-ui-bundle.js', '?rest_route=/booking-calendar/v1/docs/start.js'])
    })

    it('serves Swagger UI\'s script and style from the npm package, and answers HEAD, OPTIONS, 405 and 404 as other routes do', async () => {
      const css = await request(t.app).get('/wp-json/booking-calendar/v1/docs/swagger-ui.css').expect(200)
      expect(css.headers['content-type']).to.equal('text/css; charset=utf-8')
      expect(css.text).to.include('.swagger-ui')
      const js = await request(t.app).get('/?rest_route=/booking-calendar/v1/docs/swagger-ui-bundle.js').buffer(true).parse((res, done) => {
        let text = ''
        res.on('data', (chunk: Buffer) => { text += chunk.toString() })
        res.on('end', () => done(null, text))
      }).expect(200)
      expect(js.headers['content-type']).to.equal('text/javascript; charset=utf-8')
      expect(js.body as string).to.include('SwaggerUIBundle')
      const head = await request(t.app).head('/booking-calendar/v1/docs/start.js').expect(200)
      expect(head.headers['content-type']).to.equal('text/javascript; charset=utf-8')
      for (const path of ['/booking-calendar/v1/docs', '/booking-calendar/v1/docs/start.js']) {
        const options = await request(t.app).options(path).expect(204)
        expect(options.headers.allow, path).to.equal('GET, HEAD, OPTIONS')
        const post = await request(t.app).post(path).expect(405)
        expect(post.headers.allow, path).to.equal('GET, HEAD, OPTIONS')
        expect(post.body.code, path).to.equal('rest_no_route')
      }
      for (const path of ['/booking-calendar/v1/docs/index.html', '/booking-calendar/v1/docs/..%2Fpackage.json', '/booking-calendar/v1/docs/swagger-ui.js']) {
        expect((await request(t.app).get(path).expect(404)).body.code, path).to.equal('rest_no_route')
      }
    })

    it('is listed in the namespace index', async () => {
      const { body } = await request(t.app).get('/wp-json/booking-calendar/v1').expect(200)
      expect(body.routes['/booking-calendar/v1/docs']).to.deep.equal({
        namespace: 'booking-calendar/v1', methods: ['GET'], endpoints: [{ methods: ['GET'], args: {} }],
      })
    })

    it('is guarded like the other routes: the page and its files need the token in token mode', async () => {
      const guarded = createTestApp(db, { env: { AUTH_MODE: 'token', API_TOKENS: 'docs-token-0123456789' } })
      try {
        for (const path of ['/wp-json/booking-calendar/v1/docs', '/booking-calendar/v1/docs/swagger-ui.css', '/?rest_route=/booking-calendar/v1/docs/start.js']) {
          expect((await request(guarded.app).get(path).expect(401)).body.code, path).to.equal('rest_not_logged_in')
          await request(guarded.app).get(path).set('Authorization', 'Bearer docs-token-0123456789').expect(200)
        }
        await request(guarded.app).options('/wp-json/booking-calendar/v1/docs').expect(204)
      } finally {
        await guarded.close()
      }
    })
  })

  describe('in a browser (Debian\'s chromium, headless)', function () {
    this.timeout(120_000)
    let browser: Browser
    let server: Server
    let base: string

    before(async () => {
      browser = await launchChromium()
      server = t.app.listen(0, '127.0.0.1')
      await new Promise((resolve) => server.once('listening', resolve))
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    })
    after(async () => {
      await browser?.close()
      server?.closeAllConnections()
      await new Promise((resolve) => server?.close(resolve))
    })

    /** The page at `path`, loaded and rendered, with every problem the browser reports collected. */
    async function openDocs(path: string) {
      const page = await browser.newPage()
      const problems = await watchProblems(page)
      const answer = await page.goto(base + path, { waitUntil: 'load' })
      expect(answer?.status()).to.equal(200)
      await page.waitForSelector('.opblock-summary-path', { timeout: 60_000 })
      // Swagger UI renders the operations in one pass once the document is read.
      await page.waitForNetworkIdle({ idleTime: 300, timeout: 30_000 })
      return { page, problems }
    }

    for (const path of ['/wp-json/booking-calendar/v1/docs', '/?rest_route=/booking-calendar/v1/docs']) {
      it(`${path} lists each route a person calls once, GET only, in named groups, with nothing blocked by the CSP`, async () => {
        const { page, problems } = await openDocs(path)
        try {
          const groups = await page.$$eval('.opblock-tag-section', (sections) => sections.map((section) => ({
            name: section.querySelector('.opblock-tag')?.getAttribute('data-tag') ?? '',
            description: section.querySelector('.opblock-tag small')?.textContent?.trim() ?? '',
            operations: [...section.querySelectorAll('.opblock')].map((block) =>
              `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
          })))
          expect(groups.map((group) => group.name)).to.deep.equal(GROUPS)
          for (const group of groups) expect(group.description, group.name).to.not.equal('')
          const listed = groups.flatMap((group) => group.operations.map((operation) => `${group.name}: ${operation}`))
          expect(listed.sort()).to.deep.equal(operationsForPeople())
          expect(listed.filter((entry) => / (HEAD|OPTIONS) /.test(entry))).to.deep.equal([])
          expect(listed.filter((entry) => /\S\/$/.test(entry))).to.deep.equal([])
          // Every route of the namespace, the docs page included, is on the page.
          const routes = Object.keys((await request(t.app).get('/wp-json/booking-calendar/v1').expect(200)).body.routes as object)
          expect(routes).to.include('/booking-calendar/v1/slots')
          for (const route of routes) {
            const path = route.slice('/booking-calendar/v1'.length) || '/'
            expect(listed.filter((entry) => entry.endsWith(`: GET ${path}`)), route).to.have.length(1)
          }
          expect(await page.$eval('.info .title', (title) => title.textContent)).to.include('booking-calendar-api')
          const opening = await page.$eval('.info .description', (description) => description.textContent)
          expect(opening).to.include('Access.').and.include('Bearer').and.include('access_token')
          expect(opening).to.include('Formats.').and.include('format=csv').and.include('format=ics')
          expect(problems).to.deep.equal([])
        } finally {
          await page.close()
        }
      })
    }

    it('"Try it out" then Execute of GET slots/ sends the request from the page and shows its 200', async () => {
      const { page, problems } = await openDocs('/wp-json/booking-calendar/v1/docs')
      try {
        await page.click('#operations-Bookings-getSlots .opblock-summary-control')
        await page.waitForSelector('#operations-Bookings-getSlots .try-out__btn', { timeout: 10_000 })
        await page.click('#operations-Bookings-getSlots .try-out__btn')
        await page.waitForSelector('#operations-Bookings-getSlots .execute', { timeout: 10_000 })
        const sent = page.waitForResponse((response) => new URL(response.url()).pathname === '/wp-json/booking-calendar/v1/slots', { timeout: 30_000 })
        await page.click('#operations-Bookings-getSlots .execute')
        expect((await sent).status()).to.equal(200)
        await page.waitForSelector('#operations-Bookings-getSlots .live-responses-table tr.response .response-col_status', { timeout: 30_000 })
        const shown = await page.$eval('#operations-Bookings-getSlots .live-responses-table tr.response .response-col_status', (cell) => cell.textContent?.trim())
        expect(shown).to.equal('200')
        const url = await page.$eval('#operations-Bookings-getSlots .request-url pre', (pre) => pre.textContent?.trim())
        // The service's own address (the servers' site defaults to it), with the parameters' defaults Swagger UI fills in.
        expect(url?.split('?')[0], url).to.equal(`${base}/wp-json/booking-calendar/v1/slots`)
        expect(problems).to.deep.equal([])
      } finally {
        await page.close()
      }
    })

    it('would see a CSP violation: an inline script under the page\'s CSP is reported', async () => {
      const bad = express()
      bad.get('/', (_req, res) => {
        res.setHeader('Content-Security-Policy', DOCS_CSP)
        res.type('html').send('<!DOCTYPE html><p id="x">blocked</p><script>document.getElementById("x").textContent = "ran"</script>')
      })
      const badServer = bad.listen(0, '127.0.0.1')
      await new Promise((resolve) => badServer.once('listening', resolve))
      const page = await browser.newPage()
      try {
        const problems = await watchProblems(page)
        await page.goto(`http://127.0.0.1:${(badServer.address() as AddressInfo).port}/`, { waitUntil: 'load' })
        await new Promise((resolve) => setTimeout(resolve, 200))
        expect(await page.$eval('#x', (p) => p.textContent)).to.equal('blocked')
        expect(problems.join('\n')).to.match(/script-src/)
      } finally {
        await page.close()
        badServer.closeAllConnections()
        await new Promise((resolve) => badServer.close(resolve))
      }
    })
  })
})
