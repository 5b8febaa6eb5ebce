// Configuration that changes answers: TABLE_PREFIX, the site's time zone from
// {prefix}options (timezone_string, gmt_offset, UTC), its refresh, and SITE_TIMEZONE.
import { expect } from 'chai'
import request from '../support/request.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { createTestApp } from '../support/app.ts'
import { loadSite, RECORDS } from '../fixtures/site.ts'

const SLOTS = '/wp-json/booking-calendar/v1/slots'

describe('settings', () => {
  let db: TestDatabase

  before(async () => {
    db = await createTestDatabase('settings', 'shop_')
    await loadSite(db)
  })
  after(async () => {
    await db.drop()
  })

  it('TABLE_PREFIX: reads a site whose tables start with shop_', async () => {
    const t = createTestApp(db)
    try {
      const res = await request(t.app).get(`${SLOTS}?status=reject&flat`).expect(200)
      expect(res.body).to.deep.equal({ booked_slots: [RECORDS[104]], total: 1 })
    } finally {
      await t.close()
    }
  })

  it('WORDPRESS_TABLE_PREFIX and the WORDPRESS_DB_* names work as the official image has them', async () => {
    const t = createTestApp(db, { env: { TABLE_PREFIX: '', WORDPRESS_TABLE_PREFIX: 'shop_' } })
    try {
      await request(t.app).get(`${SLOTS}?status=reject`).expect(200)
    } finally {
      await t.close()
    }
  })

  describe('the site\'s time zone', () => {
    let now = Date.UTC(2026, 10, 21, 12)
    const clock = () => now

    afterEach(async () => {
      await db.setOption('timezone_string', 'Europe/Berlin')
      await db.setOption('gmt_offset', '1')
    })

    it('gmt_offset gives a fixed offset when timezone_string is empty (5.75 is +05:45)', async () => {
      await db.setOption('timezone_string', '')
      await db.setOption('gmt_offset', '5.75')
      const t = createTestApp(db, { now: clock })
      try {
        const res = await request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start,end`).expect(200)
        expect(res.body.booked_slots).to.deep.equal([{ start: '2026-03-29T02:30:00+05:45', end: '2026-03-29T03:30:00+05:45' }])
      } finally {
        await t.close()
      }
    })

    it('falls back to UTC when neither is set', async () => {
      await db.setOption('timezone_string', '')
      await db.setOption('gmt_offset', '')
      const t = createTestApp(db, { now: clock })
      try {
        const res = await request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start`).expect(200)
        expect(res.body.booked_slots).to.deep.equal([{ start: '2026-03-29T02:30:00+00:00' }])
      } finally {
        await t.close()
      }
    })

    it('is read again after a minute, so a change on the site shows without a restart', async () => {
      const t = createTestApp(db, { now: clock })
      try {
        const before = await request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start`).expect(200)
        expect(before.body.booked_slots[0].start).to.equal('2026-03-29T03:30:00+02:00')
        await db.setOption('timezone_string', 'America/New_York')
        now += 61_000
        // The first call after the minute answers with the zone it knows and refreshes beside.
        await request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start`).expect(200)
        await new Promise((resolve) => setTimeout(resolve, 100))
        const after = await request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start`).expect(200)
        expect(after.body.booked_slots[0].start).to.equal('2026-03-29T02:30:00-04:00')
      } finally {
        await t.close()
      }
    })

    it('a failed refresh keeps the known zone another minute and is logged once, however many requests wait', async () => {
      const t = createTestApp(db, { now: clock })
      try {
        await request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start`).expect(200)
        await db.admin.query('RENAME TABLE shop_options TO shop_options_away')
        now += 61_000
        const answers = await Promise.all(Array.from({ length: 5 }, () => request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start`).expect(200)))
        for (let i = 0; i < 5; i++) answers.push(await request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start`).expect(200))
        await new Promise((resolve) => setTimeout(resolve, 100))
        expect(answers.map((res) => res.body.booked_slots[0].start)).to.deep.equal(Array(10).fill('2026-03-29T03:30:00+02:00'))
        expect(t.logs.filter((line) => line.msg === 'could not refresh the site time zone').length).to.equal(1)
      } finally {
        await db.admin.query('RENAME TABLE shop_options_away TO shop_options')
        await t.close()
      }
    })

    it('SITE_TIMEZONE overrides the site\'s options', async () => {
      const t = createTestApp(db, { env: { SITE_TIMEZONE: 'America/New_York' } })
      try {
        const res = await request(t.app).get(`${SLOTS}?status=reject&flat&_fields=start`).expect(200)
        expect(res.body.booked_slots).to.deep.equal([{ start: '2026-03-29T02:30:00-04:00' }])
      } finally {
        await t.close()
      }
    })
  })
})
