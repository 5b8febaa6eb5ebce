// The recipes of docs/reporting-tools.md, each read out of the page (the code
// block after its `<!-- recipe: name -->` marker) and run against the service,
// with the tools themselves where they run here: Debian's pandas and
// LibreOffice Calc, ical.js, node-wpapi. Google Sheets' IMPORTDATA, a calendar
// app and Grafana's Infinity data source are played by their requests' shape (one
// GET; no header, or Infinity's Bearer header); Power Query's M text is read, and
// the URL it builds is called.
import { expect } from 'chai'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse as parseCsv } from 'csv-parse/sync'
import ICAL from 'ical.js'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { BOOKING_ORDER, HAIRCUT, loadSite, RECORDS } from '../fixtures/site.ts'
import { aptInstall } from '../../scripts/apt.ts'

const PAGE = new URL('../../docs/reporting-tools.md', import.meta.url)
const TOKEN = 'recipes-token-0123456789abcdef'
const NOW = Date.parse('2026-11-22T12:34:56Z')
/** The recipes the page has, each run by a test below. */
const RECIPES = ['google-sheets', 'power-query', 'excel-download', 'power-bi-incremental', 'pandas', 'pandas-changes', 'calendar', 'grafana', 'node-wpapi']

/** The code block after `<!-- recipe: name -->`, as the page has it. */
function recipeText(name: string): string {
  const page = readFileSync(PAGE, 'utf8')
  const match = new RegExp(`<!-- recipe: ${name} -->\\n\`\`\`[\\w-]*\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(page)
  if (!match) throw new Error(`docs/reporting-tools.md has no code block after <!-- recipe: ${name} -->`)
  return match[1]!
}

interface RawAnswer { status: number; headers: IncomingHttpHeaders; body: Buffer }

/** One GET with only the headers given (node:http adds Host and Connection), as a tool that cannot set headers sends it. */
function get(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 30 s`)))
    req.on('error', reject)
    req.end()
  })
}

/** The bookings of loadSite() whose booking_date is in November 2026 (the recipes' range), in the answers' order. */
const NOVEMBER = BOOKING_ORDER.filter((id) => RECORDS[id].booking_date.startsWith('2026-11'))

// --- Power Query's M, as far as the recipe uses it ---------------------------

type MValue = string | { [name: string]: MValue } | { other: string }

/** Reads an M value at `at`: a text literal, a record [a = …, b = …], or anything else up to the next , or ]. */
function readMValue(text: string, at: number): { value: MValue; end: number } {
  const skip = (i: number) => { while (/\s/.test(text[i] ?? '')) i++; return i }
  let i = skip(at)
  if (text[i] === '"') {
    let value = ''
    for (i++; ; i++) {
      if (i >= text.length) throw new Error('an M text literal does not end')
      if (text[i] === '"') {
        if (text[i + 1] === '"') { value += '"'; i++; continue }
        return { value, end: i + 1 }
      }
      value += text[i]
    }
  }
  if (text[i] === '[') {
    const record: Record<string, MValue> = {}
    i = skip(i + 1)
    while (text[i] !== ']') {
      const name = /^[A-Za-z_][\w.]*/.exec(text.slice(i))?.[0]
      if (!name) throw new Error(`an M record field name was expected at "${text.slice(i, i + 20)}"`)
      i = skip(i + name.length)
      if (text[i] !== '=') throw new Error(`"=" was expected after ${name}`)
      const field = readMValue(text, i + 1)
      record[name] = field.value
      i = skip(field.end)
      if (text[i] === ',') i = skip(i + 1)
      else if (text[i] !== ']') throw new Error(`"," or "]" was expected after ${name}`)
    }
    return { value: record, end: i + 1 }
  }
  const other = /^[^,\]]*/.exec(text.slice(i))![0]
  return { value: { other: other.trim() }, end: i + other.length }
}

/** Web.Contents(url, options) of an M query: its address and its options record. */
function webContents(m: string): { address: string; options: Record<string, MValue> } {
  const at = m.indexOf('Web.Contents(')
  if (at < 0) throw new Error('the M query calls no Web.Contents')
  const address = readMValue(m, at + 'Web.Contents('.length)
  if (typeof address.value !== 'string') throw new Error('Web.Contents\'s address is not a text literal: a dynamic data source')
  const comma = /^\s*,/.exec(m.slice(address.end))
  if (!comma) throw new Error('Web.Contents has no options record')
  const options = readMValue(m, address.end + comma[0].length).value
  return { address: address.value, options: options as Record<string, MValue> }
}

/**
 * The text of an M date expression, as far as the incremental refresh recipe uses them:
 * Date.ToText(d, "yyyy-MM-dd"), Date.AddDays(d, n) and Date.From(name), with `names` the
 * query's parameters (RangeStart, RangeEnd) as instants in UTC.
 */
function evaluateMDate(expression: string, names: Record<string, Date>): Date | string {
  const text = expression.trim()
  const toText = /^Date\.ToText\((.*),\s*"yyyy-MM-dd"\)$/.exec(text)
  if (toText) {
    const date = evaluateMDate(toText[1]!, names)
    if (typeof date === 'string') throw new Error(`Date.ToText of a text: ${text}`)
    return date.toISOString().slice(0, 10)
  }
  const addDays = /^Date\.AddDays\((.*),\s*(-?\d+)\)$/.exec(text)
  if (addDays) {
    const date = evaluateMDate(addDays[1]!, names)
    if (typeof date === 'string') throw new Error(`Date.AddDays of a text: ${text}`)
    return new Date(date.getTime() + Number(addDays[2]) * 86_400_000)
  }
  const from = /^Date\.From\((\w+)\)$/.exec(text)
  if (from) {
    const value = names[from[1]!]
    if (!value) throw new Error(`no parameter ${from[1]} in the test`)
    return new Date(Date.UTC(value.getUTCFullYear(), value.getUTCMonth(), value.getUTCDate()))
  }
  throw new Error(`an M expression this test does not evaluate: ${text}`)
}

/** The let's steps `Name = Date.…(…),` of an M query, each evaluated to its text. */
function dateSteps(m: string, names: Record<string, Date>): Record<string, string> {
  const steps: Record<string, string> = {}
  for (const match of m.matchAll(/^\s*(\w+) = (Date\.[^\n]*?),\s*$/gm)) {
    const value = evaluateMDate(match[2]!, names)
    if (typeof value !== 'string') throw new Error(`step ${match[1]} is a date, not a text`)
    steps[match[1]!] = value
  }
  return steps
}

/** The URL Web.Contents requests: the address, then RelativePath after a /, then Query as a query string (a step's name as its text in `steps`). */
function webContentsUrl(address: string, options: Record<string, MValue>, steps: Record<string, string> = {}): string {
  const relative = options.RelativePath
  const query = (options.Query ?? {}) as Record<string, MValue>
  let url = address
  if (typeof relative === 'string' && relative !== '') url = `${url.replace(/\/$/, '')}/${relative.replace(/^\//, '')}`
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    const text = typeof value === 'string' ? value : steps[(value as { other?: string }).other ?? '']
    if (text === undefined) throw new Error(`Query's ${name} is neither a text literal nor a step evaluated here`)
    params.append(name, text)
  }
  return params.size > 0 ? `${url}?${params.toString()}` : url
}

// --- Debian's tools ----------------------------------------------------------

const PYTHON = '/usr/bin/python3'

function ensurePandas(): void {
  if (spawnSync(PYTHON, ['-c', 'import pandas'], { stdio: 'ignore' }).status !== 0) aptInstall(['python3-pandas'], 'pandas (for the pandas recipe)')
}

function ensureLibreOffice(): string {
  const find = () => ['/usr/bin/soffice', '/usr/bin/libreoffice'].find((path) => existsSync(path))
  if (!find()) aptInstall(['libreoffice-calc'], 'LibreOffice Calc (for the Excel recipe)')
  const binary = find()
  if (!binary) throw new Error('libreoffice-calc was installed but soffice is still missing')
  return binary
}

/** Python code on stdin, run by Debian's python3 while this process keeps serving; its exit status and output. */
function runPython(code: string, timeoutMs: number, cwd?: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-'], { stdio: ['pipe', 'pipe', 'pipe'], cwd })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    const timer = setTimeout(() => { child.kill('SIGKILL') }, timeoutMs)
    child.once('error', reject)
    child.once('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
    child.stdin.end(code)
  })
}

/** The texts of an .xlsx's shared strings (xl/sharedStrings.xml), read with Python's zipfile. */
function xlsxStrings(file: string): string[] {
  const read = spawnSync(PYTHON, ['-c', `import sys, zipfile, re, html
text = zipfile.ZipFile(sys.argv[1]).read("xl/sharedStrings.xml").decode("utf-8")
print("\\n".join(html.unescape(t) for t in re.findall(r"<t[^>]*>([^<]*)</t>", text)))`, file], { encoding: 'utf8' })
  if (read.status !== 0) throw new Error(`reading ${file}: ${read.stderr}`)
  return read.stdout.trimEnd().split('\n')
}

describe('the recipes of docs/reporting-tools.md, run', function () {
  this.timeout(180_000)
  let db: TestDatabase
  let t: TestApp
  let server: Server
  let base: string
  /** The recipe as a reader would fill it in: this service's address and token. */
  const filled = (name: string) => recipeText(name)
    .replaceAll('https://shop.example.com', base).replaceAll('webcal://shop.example.com', base).replaceAll('YOUR_TOKEN', TOKEN)
  const bearer = { Authorization: `Bearer ${TOKEN}` }

  before(async () => {
    db = await createTestDatabase('recipes')
    await loadSite(db)
    t = createTestApp(db, { env: { AUTH_MODE: 'token', API_TOKENS: TOKEN, SITE_TIMEZONE: 'Europe/Berlin' }, now: () => NOW })
    server = t.app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    server?.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve))
    await t?.close()
    await db?.drop()
  })

  it('every recipe on the page is one of those run here, and each has its code block', () => {
    const page = readFileSync(PAGE, 'utf8')
    expect([...page.matchAll(/<!-- recipe: ([\w-]+) -->/g)].map((m) => m[1])).to.deep.equal(RECIPES)
    for (const name of RECIPES) expect(recipeText(name), name).to.not.equal('')
    expect(page.split('\n')[2]).to.match(/^> Kind: how-to/)
  })

  describe('Google Sheets (needs access_token on format=csv)', () => {
    it('IMPORTDATA\'s request, one GET of the formula\'s URL without a header, gets the CSV', async () => {
      const formula = /^=IMPORTDATA\("([^"]+)"\)$/.exec(filled('google-sheets'))
      expect(formula, 'one =IMPORTDATA("…") formula').to.not.equal(null)
      const url = formula![1]!
      expect(new URL(url).searchParams.get('access_token')).to.equal(TOKEN)
      const answer = await get(url)
      expect(answer.status, answer.body.toString()).to.equal(200)
      expect(answer.headers['content-type']).to.equal('text/csv; charset=utf-8')
      const rows = parseCsv<Record<string, string>>(answer.body, { columns: true })
      expect(rows.map((row) => Number(row.id))).to.deep.equal(NOVEMBER)
      expect(rows.find((row) => row.id === '102')!.service_slug).to.equal('стрижка')
      // Customers are shown to a caller with a token.
      expect(rows[0]!.customer_name).to.match(/^Customer \d+$/)
    })

    it('the same URL with format=json is refused: a token in the URL opens no JSON', async () => {
      const url = new URL(/^=IMPORTDATA\("([^"]+)"\)$/.exec(filled('google-sheets'))![1]!)
      url.searchParams.set('format', 'json')
      const answer = await get(url.toString())
      expect(answer.status).to.equal(401)
      expect(JSON.parse(answer.body.toString()).code).to.equal('rest_not_logged_in')
    })
  })

  describe('Excel and Power BI', () => {
    it('Power Query: Web.Contents\'s fixed address, RelativePath and Query build the URL the page gives, and its Headers get the CSV', async () => {
      const m = filled('power-query')
      const { address, options } = webContents(m)
      expect(address).to.equal(base)
      const url = webContentsUrl(address, options)
      expect(url).to.equal(`${base}/wp-json/booking-calendar/v1/slots?format=csv&start=2026-11-01&end=2026-11-30`)
      const headers = options.Headers as Record<string, string>
      expect(headers).to.deep.equal(bearer)
      // Csv.Document's options: comma, UTF-8 (code page 65001), quotes as RFC 4180.
      expect(m).to.match(/Csv\.Document\([\s\S]*\[Delimiter = ",", Encoding = 65001, QuoteStyle = QuoteStyle\.Csv\]/)
      const answer = await get(url, headers)
      expect(answer.status).to.equal(200)
      expect(answer.headers['content-type']).to.equal('text/csv; charset=utf-8')
      const [header, ...rows]: string[][] = parseCsv(answer.body)
      expect(rows.map((row) => Number(row[0]))).to.deep.equal(NOVEMBER)
      // Every column Table.TransformColumnTypes types is one the CSV has.
      const typed = [...m.matchAll(/\{"([\w.]+)", (?:Int64\.Type|type \w+)\}/g)].map((match) => match[1]!)
      expect(typed).to.include.members(['id', 'start', 'end'])
      for (const column of typed) expect(header, column).to.include(column)
      // Without the header, the fixed address and query are refused: the token is what opens it.
      expect((await get(url)).status).to.equal(401)
    })

    it('Power BI incremental refresh: RangeStart and RangeEnd of a month become start and end, the filter step keeps the period, and each period gets its own bookings', async () => {
      const m = filled('power-bi-incremental')
      const { address, options } = webContents(m)
      expect(address).to.equal(base)
      const headers = options.Headers as Record<string, string>
      expect(headers).to.deep.equal(bearer)
      // Power BI's filter step on the period: RangeStart included, RangeEnd excluded.
      expect(m).to.match(/Table\.SelectRows\(Typed, each \[booking_date\] >= Date\.From\(RangeStart\) and \[booking_date\] < Date\.From\(RangeEnd\)\)/)
      const period = async (start: Date, end: Date) => {
        const url = webContentsUrl(address, options, dateSteps(m, { RangeStart: start, RangeEnd: end }))
        const answer = await get(url, headers)
        expect(answer.status, answer.body.toString()).to.equal(200)
        const [header, ...rows]: string[][] = parseCsv(answer.body)
        const typed = [...m.matchAll(/\{"([\w.]+)", (?:Int64\.Type|type \w+)\}/g)].map((match) => match[1]!)
        for (const column of typed) expect(header, column).to.include(column)
        return { url, ids: rows.map((row) => Number(row[0])), dates: rows.map((row) => row[header!.indexOf('booking_date')]!) }
      }
      const november = await period(new Date(Date.UTC(2026, 10, 1)), new Date(Date.UTC(2026, 11, 1)))
      expect(november.url).to.equal(`${base}/wp-json/booking-calendar/v1/slots?format=csv&start=2026-11-01&end=2026-11-30`)
      expect(november.ids).to.deep.equal(NOVEMBER)
      const december = await period(new Date(Date.UTC(2026, 11, 1)), new Date(Date.UTC(2027, 0, 1)))
      expect(december.url).to.match(/start=2026-12-01&end=2026-12-31$/)
      for (const date of december.dates) expect(date).to.match(/^2026-12-/)
      expect(december.ids.filter((id) => november.ids.includes(id)), 'a booking in two periods').to.deep.equal([])
    })

    it('the double-click download (needs bom=1): the bytes start with EF BB BF, and LibreOffice keeps стрижка in the xlsx', async () => {
      const url = filled('excel-download')
      expect(new URL(url).searchParams.get('bom')).to.equal('1')
      const answer = await get(url)
      expect(answer.status, answer.body.toString()).to.equal(200)
      expect([...answer.body.subarray(0, 3)]).to.deep.equal([0xef, 0xbb, 0xbf])
      const soffice = ensureLibreOffice()
      const dir = mkdtempSync(join(tmpdir(), 'bc-recipes-lo-'))
      try {
        const csv = join(dir, 'bookings.csv')
        writeFileSync(csv, answer.body)
        const converted = spawnSync(soffice, [
          `-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless',
          // Comma, double quote, UTF-8 (76), from line 1.
          '--infilter=Text - txt - csv (StarCalc):44,34,76,1', '--convert-to', 'xlsx', '--outdir', dir, csv,
        ], { encoding: 'utf8', timeout: 120_000 })
        expect(converted.status, converted.stderr).to.equal(0)
        const strings = xlsxStrings(join(dir, 'bookings.xlsx'))
        expect(strings[0]).to.equal('id')
        expect(strings).to.include('стрижка')
        expect(strings).to.include(RECORDS[101].note)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  })

  it('pandas: the recipe runs under Debian\'s python3-pandas, with the types right', async () => {
    ensurePandas()
    const check = `
import json
def kinds(frame):
    return {column: str(kind) for column, kind in frame.dtypes.items()}
def row(frame, booking):
    found = frame[frame["id"] == booking].iloc[0]
    return {column: (None if found[column] is pd.NA or (not isinstance(found[column], str) and pd.isna(found[column])) else str(found[column])) for column in ["start", "end", "created_date", "note", "booking_date", "all_day", "service_slug"]}
marked = pd.read_csv(f"{BASE}/slots?format=csv&bom=1&{RANGE}", storage_options=HEADERS)
print(json.dumps({
    "csv": kinds(bookings_csv), "json": kinds(bookings_json),
    "csv_ids": bookings_csv["id"].tolist(), "json_ids": bookings_json["id"].tolist(),
    "csv_102": row(bookings_csv, 102), "json_102": row(bookings_json, 102),
    "csv_108": row(bookings_csv, 108), "json_108": row(bookings_json, 108),
    "csv_101": row(bookings_csv, 101), "json_101": row(bookings_json, 101),
    "per_week": {f"{slug} {week}": value for (slug, week), value in per_week.items()},
    "marked_first_column": marked.columns[0],
}))
`
    // Not spawnSync: the service answering pandas runs in this process.
    const run = await runPython(`${filled('pandas')}\n${check}`, 120_000)
    expect(run.status, run.stderr).to.equal(0)
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>
    const expectedKinds = {
      id: 'int64', service_id: 'int64', service_slug: 'string', status: 'string', booking_date: 'datetime64[ns]',
      start: 'datetime64[ns, Europe/Berlin]', end: 'datetime64[ns, Europe/Berlin]', all_day: 'boolean',
      created_date: 'datetime64[ns, Europe/Berlin]', note: 'string',
    }
    expect(out.csv).to.deep.include({ ...expectedKinds, customer_name: 'string', customer_email: 'string', customer_phone: 'string' })
    expect(out.json).to.deep.include({ ...expectedKinds, 'customer.name': 'object', 'customer.email': 'object' })
    expect(out.csv_ids).to.deep.equal(NOVEMBER)
    expect(out.json_ids).to.deep.equal(NOVEMBER)
    for (const from of ['csv', 'json']) {
      // Offsets applied: 09:00+01:00 is 09:00 in Berlin; created_date null (the zero date), end null, note null and "".
      expect(out[`${from}_101`], from).to.deep.equal({
        start: '2026-11-25 09:00:00+01:00', end: '2026-11-25 10:00:00+01:00', created_date: '2026-11-01 10:00:00+01:00',
        note: 'Window seat', booking_date: '2026-11-25 00:00:00', all_day: 'False', service_slug: 'haircut',
      })
      expect(out[`${from}_102`], from).to.deep.include({ created_date: null, note: null, all_day: 'True', service_slug: 'стрижка' })
      expect(out[`${from}_108`], from).to.deep.include({ end: null, start: '2026-11-26 10:00:00+01:00' })
    }
    expect(out.per_week).to.deep.include({ 'haircut 2026-11-23/2026-11-29': 120 + 360 })
    // bom=1: pandas reads the first column's name without the mark.
    expect(out.marked_first_column).to.equal('id')
  })

  it('pandas kept in sync by changes/: a sync, then inserts, updates and deletes, then a delta; each time the saved frame equals slots/', async () => {
    ensurePandas()
    const dir = mkdtempSync(join(tmpdir(), 'bc-recipes-changes-'))
    const table = `\`${db.prefix}booking_calendar_bookings\``
    const show = `
import json
saved, saved_token = pd.read_pickle(STORE)
print(json.dumps({"token": saved_token, "frame": json.loads(saved.sort_values("id").to_json(orient="records"))}))
`
    type Record = { id: number } & { [name: string]: unknown }
    const byId = (records: Record[]) => [...records].sort((a, b) => a.id - b.id)
    const run = async () => {
      const result = await runPython(`${filled('pandas-changes')}\n${show}`, 120_000, dir)
      expect(result.status, result.stderr).to.equal(0)
      return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { token: string; frame: Record[] }
    }
    const slots = async () => {
      const answer = await get(`${base}/wp-json/booking-calendar/v1/slots?flat&start=2026-11-01&end=2026-11-30`, bearer)
      expect(answer.status).to.equal(200)
      return byId((JSON.parse(answer.body.toString()) as { booked_slots: Record[] }).booked_slots)
    }
    const booking = (id: number, date: string) => ({ id, service_id: HAIRCUT, status: 'booked', booking_date: date, time_from: '10:00:00', time_to: '11:00:00', created_at: '2026-11-02 09:00:00' })
    try {
      await db.insert('booking_calendar_bookings', [booking(701, '2026-11-10'), booking(702, '2026-11-28')])
      const first = await run()
      expect(first.frame.map((record) => record.id)).to.include.members([701, 702, ...NOVEMBER])
      expect(first.frame).to.deep.equal(await slots())
      // An insert, two updates (one leaves the range) and a delete.
      await db.insert('booking_calendar_bookings', [booking(703, '2026-11-12')])
      await db.admin.query(`UPDATE ${table} SET note = 'moved to the window' WHERE id = 101`)
      await db.admin.query(`UPDATE ${table} SET booking_date = '2026-12-03' WHERE id = 702`)
      await db.admin.query(`DELETE FROM ${table} WHERE id = 701`)
      const second = await run()
      expect(second.token).to.not.equal(first.token)
      const ids = second.frame.map((record) => record.id)
      expect(ids).to.include(703)
      expect(ids).to.not.include.members([701, 702])
      expect(second.frame.find((record) => record.id === 101)!.note).to.equal('moved to the window')
      expect(second.frame).to.deep.equal(await slots())
      // Nothing changed: the same frame.
      const third = await run()
      expect(third.frame).to.deep.equal(second.frame)
    } finally {
      await db.admin.query(`DELETE FROM ${table} WHERE id IN (701, 702, 703)`)
      await db.admin.query(`UPDATE ${table} SET note = ? WHERE id = 101`, [RECORDS[101].note])
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a calendar app: the feed URL, fetched without a header (webcal is https on the wire), is read by ical.js, one event per booking', async () => {
    const recipe = recipeText('calendar')
    expect(recipe).to.match(/^webcal:\/\/shop\.example\.com\/wp-json\/booking-calendar\/v1\/slots\?format=ics&access_token=YOUR_TOKEN$/)
    const url = filled('calendar')
    const answer = await get(url, { 'User-Agent': 'Thunderbird recipe test' })
    expect(answer.status, answer.body.toString()).to.equal(200)
    expect(answer.headers['content-type']).to.equal('text/calendar; charset=utf-8')
    const calendar = new ICAL.Component(ICAL.parse(answer.body.toString('utf8')))
    const events = calendar.getAllSubcomponents('vevent').map((event) => new ICAL.Event(event))
    // The feed's range: 30 days back to a year ahead of now (2026-11-22), every booking of loadSite() but 104, 113 and 115.
    const expected = BOOKING_ORDER.filter((id) => RECORDS[id].booking_date >= '2026-10-23')
    expect(events.map((event) => event.uid).sort()).to.deep.equal(expected.map((id) => `booking-${id}@${new URL(base).hostname}`).sort())
    const first = events.find((event) => event.uid.startsWith('booking-101@'))!
    expect(first.startDate.toJSDate().toISOString()).to.equal('2026-11-25T08:00:00.000Z')
    expect(first.summary).to.equal('haircut')
    // Without its token the same URL opens nothing.
    expect((await get(url.replace(/&access_token=[^&]*/, ''))).status).to.equal(401)
  })

  it('Grafana (Infinity): the URL with the dashboard\'s range filled in, a Bearer header, and the page\'s root and columns in the JSON', async () => {
    // Grafana fills ${__from:date:YYYY-MM-DD} and ${__to:date:YYYY-MM-DD} with the dashboard's range.
    const url = filled('grafana').replace('${__from:date:YYYY-MM-DD}', '2026-11-23').replace('${__to:date:YYYY-MM-DD}', '2026-11-29')
    expect(url).to.not.include('${')
    const answer = await get(url, bearer)
    expect(answer.status, answer.body.toString()).to.equal(200)
    const body = JSON.parse(answer.body.toString()) as { groups: Record<string, unknown>[]; totals: Record<string, unknown> }
    // Step 3's root and columns, as the page names them.
    const page = readFileSync(PAGE, 'utf8')
    const step = /\*Rows \/ Root\*: `(\w+)`\. \*Columns\*:([\s\S]*?)\n4\./.exec(page)
    expect(step, 'step 3: *Rows / Root* and *Columns*').to.not.equal(null)
    expect(step![1]).to.equal('groups')
    const columns = [...step![2]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!)
    expect(columns).to.include.members(['period_start', 'service_slug', 'occupancy'])
    // Seven days of every service: each row has every column, the time a YYYY-MM-DD date.
    expect(body.groups.length).to.be.above(6)
    for (const group of body.groups) {
      for (const column of columns) expect(group, column).to.have.property(column)
      expect(group.period_start).to.match(/^2026-11-(2[3-9])$/)
    }
    expect(body.totals).to.have.property('occupancy')
    expect((await get(url)).status, 'without the header').to.equal(401)
  })

  it('node-wpapi: the recipe runs under node, discover() finds the namespace, pages follow Link, a dashed route is called', async () => {
    const check = `
console.log(JSON.stringify({
  november: november.booked_slots.map((booking) => booking.id), total: november.total,
  next: next?.booked_slots.map((booking) => booking.id), december: december.total,
}))`
    // Run from the repository, so that 'wpapi' resolves; not spawnSync: the service runs in this process.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', `${filled('node-wpapi')}\n${check}`], { cwd: new URL('../..', import.meta.url).pathname })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
      child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
      child.once('error', reject)
      child.once('close', (status) => { clearTimeout(timer); resolve({ status, stdout, stderr }) })
    })
    expect(run.status, run.stderr).to.equal(0)
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { november: number[]; total: number; next: number[]; december: number }
    expect(out.total).to.equal(NOVEMBER.length)
    expect(out.november).to.deep.equal(NOVEMBER.slice(0, 2))
    expect(out.next).to.deep.equal(NOVEMBER.slice(2, 4))
    expect(out.december).to.be.a('number')
  })

  it('a typed TypeScript client: the page links the client file that its own test compiles and runs (needs clients-a\'s docs/examples/typed-client.ts)', () => {
    const page = readFileSync(PAGE, 'utf8')
    const linked = /\[`docs\/examples\/([\w-]+\.ts)`\]\(examples\/\1\)/.exec(page)
    expect(linked, 'a link to docs/examples/<client>.ts').to.not.equal(null)
    expect(existsSync(new URL(`../../docs/examples/${linked![1]}`, import.meta.url)), `docs/examples/${linked![1]}`).to.equal(true)
  })
})
