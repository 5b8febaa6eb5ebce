// API.md, "GET slots/", CSV: format=csv and Accept: text/csv, RFC 4180, CRLF, the formula guard.
import { expect } from 'chai'
import { parse } from 'csv-parse/sync'
import request, { invalidParamsData } from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp, type TestApp } from '../support/app.ts'
import { loadSite } from '../fixtures/site.ts'

const URL = '/wp-json/booking-calendar/v1/slots'
const HEADER = 'id,service_id,service_slug,status,booking_date,start,end,all_day,created_date,customer_name,customer_email,customer_phone,note\r\n'

describe('GET slots/ as CSV', () => {
  let db: TestDatabase
  let t: TestApp

  before(async () => {
    db = await createTestDatabase('csv')
    await loadSite(db)
    t = createTestApp(db, { env: { EXPOSE_CUSTOMER_DATA: 'true' } })
  })
  after(async () => {
    await t.close()
    await db.drop()
  })

  it('format=csv gives the flat list with one header row, CRLF after every line, nulls empty, quotes doubled', async () => {
    const res = await request(t.app).get(`${URL}?format=CSV&start=2026-11-24&end=2026-11-25`).expect(200)
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8')
    expect(res.headers['x-wp-total']).to.equal('4')
    expect(res.text).to.equal(HEADER +
      '106,15,стрижка,expired,2026-11-24,2026-11-24T22:00:00+01:00,2026-11-25T02:00:00+01:00,false,2026-11-20T08:15:00+01:00,Customer 106,c106@example.com,\'+49 30 106,past midnight\r\n' +
      '102,15,стрижка,pending,2026-11-25,2026-11-25T00:00:00+01:00,2026-11-26T00:00:00+01:00,true,,Customer 102,c102@example.com,\'+49 30 102,\r\n' +
      '103,12,haircut,booked,2026-11-25,2026-11-25T08:00:00+01:00,2026-11-25T09:00:00+01:00,false,2026-10-31T23:30:00+01:00,Customer 103,c103@example.com,\'+49 30 103,\r\n' +
      '101,12,haircut,booked,2026-11-25,2026-11-25T09:00:00+01:00,2026-11-25T10:00:00+01:00,false,2026-11-01T10:00:00+01:00,Customer 101,c101@example.com,\'+49 30 101,Window seat\r\n')
    expect(res.text.charCodeAt(0)).to.not.equal(0xfeff)
  })

  it('quotes a note with quotes, commas and a line break, keeps emoji and right-to-left text, and guards a leading =', async () => {
    const res = await request(t.app).get(`${URL}?format=csv&_fields=id,note&status=pending,booked&start=2026-07-15&end=2026-07-15`).expect(200)
    expect(res.text).to.equal('id,note\r\n113,"🎉 שלום ""quoted"", comma\nnew line"\r\n')
    const formula = await request(t.app).get(`${URL}?format=csv&_fields=id,note&start=2026-11-29`).expect(200)
    expect(formula.text).to.equal('id,note\r\n114,"\'=HYPERLINK(""http://evil"")"\r\n')
  })

  it('writes a row whose only cell is empty as "", so readers that skip blank lines (pandas, csv-parse) keep it', async () => {
    const res = await request(t.app).get(`${URL}?format=csv&_fields=note&start=2026-11-24&end=2026-11-25`).expect(200)
    expect(res.text).to.equal('note\r\npast midnight\r\n""\r\n""\r\nWindow seat\r\n')
    // skip_empty_lines is what pandas does by default (skip_blank_lines=True).
    const rows = parse<Record<string, string>>(res.text, { columns: true, skip_empty_lines: true })
    expect(rows).to.deep.equal([{ note: 'past midnight' }, { note: '' }, { note: '' }, { note: 'Window seat' }])
  })

  it('_fields naming no CSV column gives 400 rest_invalid_param with the names it takes (JSON keeps WordPress\'s empty records)', async () => {
    const res = await request(t.app).get(`${URL}?format=csv&_fields=nope,Id`).expect(400)
    expect(res.body).to.deep.equal({
      code: 'rest_invalid_param',
      message: 'Invalid parameter(s): _fields',
      data: invalidParamsData({
        _fields: '_fields names no column of the CSV export; use one or more of id, service_id, service_slug, status, booking_date, start, end, all_day, created_date, customer, note, customer.name, customer.email, customer.phone.',
      }),
    })
    const json = await request(t.app).get(`${URL}?_fields=nope&start=2026-11-29`).expect(200)
    expect(json.body).to.deep.equal({ booked_slots: { 22: [{}] }, total: 1 })
  })

  it('nested _fields in JSON (customer.email) keep one field of customer, and the answer matches openapi.json', async () => {
    const res = await request(t.app).get(`${URL}?_fields=id,customer.email&flat&start=2026-11-29`).expect(200)
    expect(res.body).to.deep.equal({ booked_slots: [{ id: 114, customer: { email: 'c114@example.com' } }], total: 1 })
  })

  it('Accept: text/csv asks for CSV; an explicit format=json wins', async () => {
    const csv = await request(t.app).get(`${URL}?_fields=id&start=2026-11-29`).set('Accept', 'text/csv').expect(200)
    expect(csv.text).to.equal('id\r\n114\r\n')
    const json = await request(t.app).get(`${URL}?_fields=id&start=2026-11-29&format=json`).set('Accept', 'text/csv').expect(200)
    expect(json.body).to.deep.equal({ booked_slots: { 22: [{ id: 114 }] }, total: 1 })
  })

  it('Accept is negotiated with its quality values (format): text/csv;q=0 never gives CSV, a preferred text/csv does', async () => {
    const refused = await request(t.app).get(`${URL}?_fields=id&start=2026-11-29`).set('Accept', 'text/csv;q=0, application/json').expect(200)
    expect(refused.headers['content-type']).to.equal('application/json; charset=utf-8')
    expect(refused.body).to.deep.equal({ booked_slots: { 22: [{ id: 114 }] }, total: 1 })
    const preferred = await request(t.app).get(`${URL}?_fields=id&start=2026-11-29`).set('Accept', 'application/json;q=0.5, text/csv').expect(200)
    expect(preferred.text).to.equal('id\r\n114\r\n')
    const json = await request(t.app).get(`${URL}?_fields=id&start=2026-11-29`).set('Accept', 'text/csv;q=0.2, application/json;q=0.9').expect(200)
    expect(json.body).to.deep.equal({ booked_slots: { 22: [{ id: 114 }] }, total: 1 })
  })

  it('pages like JSON (rest_invalid_page_number included), and _fields customer keeps its three columns', async () => {
    const past = await request(t.app).get(`${URL}?format=csv&per_page=1&page=2&start=2026-11-29`).expect(400)
    expect(past.body.code).to.equal('rest_invalid_page_number')
    const first = await request(t.app).get(`${URL}?format=csv&_fields=id,customer&per_page=1&start=2026-11-28`).expect(200)
    expect(first.headers['x-wp-totalpages']).to.equal('4')
    expect(first.text).to.equal('id,customer_name,customer_email,customer_phone\r\n116,Customer 116,c116@example.com,\'+49 30 116\r\n')
  })
})
