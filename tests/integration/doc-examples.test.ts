// Every request README.md and docs/ show (tests/support/doc-examples.ts reads
// them out of the pages), run with curl as a reader types it, against the data
// of `npm run demo` (db/demo-data.ts, DEMO_SITE): the answer a page shows must
// be the one the service gives, `…` aside; a request shown without an answer
// must reach the service and get no error.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { demoDataSql, DEMO_SITE } from '../../db/demo-data.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { answerDifferences, examplesOf, type DocExample } from '../support/doc-examples.ts'

const ROOT = new URL('../..', import.meta.url).pathname
/** The token a page's examples write for a token of API_TOKENS. */
const TOKEN = 'YOUR_TOKEN'
/** The hosts a page's examples may name: the demo's, and the placeholders of a site of one's own. */
const HOSTS = ['localhost:8080', 'shop.example.com', 'example.com', 'api:8080']

function pages(): string[] {
  const out = ['README.md']
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.md')) out.push(path)
    }
  }
  walk('docs')
  return out
}

const EXAMPLES: DocExample[] = pages().flatMap((page) => examplesOf(page, readFileSync(join(ROOT, page), 'utf8')))

interface Instance { t: TestApp; server: Server; curlHome: string }

/** The shell's exit status and output, the service serving in this process meanwhile. */
function runShell(script: string, cwd: string, curlHome: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env: { ...process.env, CURL_HOME: curlHome, HOME: curlHome } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8') })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8') })
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('error', reject)
    child.once('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
}

describe('the examples of README.md and docs/, run against the demo\'s data', function () {
  this.timeout(180_000)
  let db: TestDatabase
  const instances: Instance[] = []
  let open: Instance
  let tokened: Instance

  async function start(env: Record<string, string>): Promise<Instance> {
    const t = createTestApp(db, { env })
    const server = t.app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    // curl reads $CURL_HOME/.curlrc: every host of a page's command connects to this instance,
    // while the command and its Host header stay as the page writes them.
    const curlHome = mkdtempSync(join(tmpdir(), 'bc-doc-examples-'))
    writeFileSync(join(curlHome, '.curlrc'), `connect-to = "::127.0.0.1:${(server.address() as AddressInfo).port}"\n`)
    const instance = { t, server, curlHome }
    instances.push(instance)
    return instance
  }

  before(async () => {
    db = await createTestDatabase('doc_examples', DEMO_SITE.prefix)
    for (const statement of demoDataSql(DEMO_SITE)) await db.admin.query(statement)
    open = await start({})
    tokened = await start({ AUTH_MODE: 'token', API_TOKENS: TOKEN })
  })
  after(async () => {
    for (const { t, server, curlHome } of instances) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await t.close()
      rmSync(curlHome, { recursive: true, force: true })
    }
    await db?.drop()
  })

  it('finds the examples: the pages show requests, most of them with their answers', () => {
    expect(EXAMPLES.length).to.be.above(15)
    expect(EXAMPLES.filter((example) => example.answer).length).to.be.above(8)
  })

  for (const example of EXAMPLES) {
    const title = `${example.file}:${example.line}: ${example.script.split('\n')[0]!.slice(0, 110)}`
    if (example.notRun !== undefined) {
      it(`${title} (not run: ${example.notRun})`, () => {
        expect(example.notRun, 'a <!-- not run: … --> marker says why').to.match(/\w{3}/)
      })
      continue
    }
    it(example.answer ? title : `${title} (no answer shown: it must succeed)`, async () => {
      const script = HOSTS.reduce((text, host) => text.replaceAll(`https://${host}`, `http://${host}`), example.script)
      expect(HOSTS.some((host) => script.includes(host)), `the request goes to the demo (${HOSTS.join(', ')})`).to.equal(true)
      expect(script, 'credentials for AUTH_MODE=wordpress need a WordPress site: mark the block <!-- not run: … -->').to.not.match(/\s-u\s/)
      const instance = /Authorization: Bearer|access_token=/.test(script) ? tokened : open
      const requestsBefore = instance.t.logs.filter((line) => line.msg === 'request').length
      const cwd = mkdtempSync(join(tmpdir(), 'bc-doc-example-run-'))
      try {
        const run = await runShell(script, cwd, instance.curlHome)
        // The request line is written when the answer finishes: give it a moment.
        await new Promise((resolve) => setTimeout(resolve, 50))
        const requests = instance.t.logs.filter((line) => line.msg === 'request').slice(requestsBefore)
        expect(run.status, `the commands fail: ${run.stderr}`).to.equal(0)
        expect(requests.length, 'requests that reached the service').to.be.above(0)
        if (!example.answer) {
          for (const request of requests) expect(request.status, `${String(request.path)} answered`).to.be.below(400)
          return
        }
        const saved = /\s-o\s+(?!\/dev\/null)(\S+)/.exec(script)?.[1]
        const actual = run.stdout === '' && saved !== undefined && existsSync(join(cwd, saved)) ? readFileSync(join(cwd, saved), 'utf8') : run.stdout
        const differences = answerDifferences(example.answer.text, actual)
        expect(differences, `${example.file}:${example.answer.line}: the answer shown is not the service's; it answered:\n${actual.slice(0, 3000)}`).to.deep.equal([])
      } finally {
        rmSync(cwd, { recursive: true, force: true })
      }
    })
  }
})
