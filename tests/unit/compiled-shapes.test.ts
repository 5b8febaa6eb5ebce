// db/compiled-shapes.ts: a query compiled once per shape must be, for every
// later filter of that shape, the very query Kysely compiles for it afresh.
import { expect } from 'chai'
import { Kysely, MysqlDialect, sql } from 'kysely'
import { createPool } from 'mysql2'
import { TablePrefixPlugin } from '../../db/connect.ts'
import type { Database } from '../../db/database.ts'
import type { BookingFilter } from '../../db/booking-filter.ts'
import { compileBookingsQuery, compileRulesQuery } from '../../server/tools.ts'
import { forceIndex } from '../../db/index-hints.ts'
import { pickBookingDateIndex, pickServiceDateIndex } from '../../db/booking-indexes.ts'
import { CompiledShapes, ShapeMismatchError } from '../../db/compiled-shapes.ts'
import { compileBookingsByIds } from '../../db/booking-queries.ts'

// Compiling never connects: the pool points nowhere and is never asked for a connection.
const newDb = () => new Kysely<Database>({
  dialect: new MysqlDialect({ pool: createPool({ host: '127.0.0.1', port: 9 }) }),
  plugins: [new TablePrefixPlugin('wp_')],
})

const pairs: Array<[BookingFilter, BookingFilter]> = [
  [{}, {}],
  [{ serviceId: 3 }, { serviceId: 41 }],
  [{ statuses: ['booked'] }, { statuses: ['pending'] }],
  [{ statuses: ['booked', 'pending'] }, { statuses: ['cancelled', 'approved'] }],
  [{ bookingDate: { from: '2026-01-01' } }, { bookingDate: { from: '2027-05-05' } }],
  [{ bookingDate: { to: '2026-01-01' } }, { bookingDate: { to: '2027-05-05' } }],
  [{ serviceId: 1, statuses: ['booked'], bookingDate: { from: '2026-01-01', to: '2026-01-31' } },
    { serviceId: 9, statuses: ['pending'], bookingDate: { from: '2025-02-01', to: '2025-02-28' } }],
  [{ createdAt: { from: '2026-01-01 00:00:00', to: '2026-01-31 23:59:59' } }, { createdAt: { from: '2025-01-01 00:00:00', to: '2025-12-31 23:59:59' } }],
  [{ createdAt: { to: '2026-01-31 23:59:59' } }, { createdAt: { to: '2025-12-31 23:59:59' } }],
]

describe('compiled shapes of the bookings query', () => {
  for (const [first, second] of pairs) {
    it(`a second filter of the shape of ${JSON.stringify(first)} gets its own values, in Kysely's own query`, () => {
      const cached = newDb()
      for (const order of ['booking', 'service'] as const) {
        compileBookingsQuery(cached, first, order)
        const again = compileBookingsQuery(cached, second, order)
        const fresh = compileBookingsQuery(newDb(), second, order)
        expect(again.sql).to.equal(fresh.sql)
        expect(again.parameters).to.deep.equal(fresh.parameters)
      }
    })
  }

  it('filters of different shapes never share a query', () => {
    const db = newDb()
    const texts = new Set(pairs.map(([filter]) => compileBookingsQuery(db, filter, 'booking').sql))
    expect(texts.size).to.equal(pairs.length - 1) // {} and {} are one shape
    expect(compileBookingsQuery(db, { statuses: ['a'] }, 'booking').sql).to.not.equal(compileBookingsQuery(db, { statuses: ['a', 'b'] }, 'booking').sql)
  })
})

describe('compiled shapes of a log delta\'s bookings by id', () => {
  it('one query a power of two of ids, the list filled with its last id: the same rows, each shape compiled once', () => {
    const db = newDb()
    const filter: BookingFilter = { statuses: ['booked'], bookingDate: { from: '2026-01-01', to: '2026-12-31' } }
    const columns = { customer: false }
    // After the join's post type, the status and the two dates.
    const idsOf = (query: { parameters: readonly unknown[] }) => query.parameters.slice(4)
    expect(idsOf(compileBookingsByIds(db, filter, columns, [7]))).to.deep.equal([7])
    expect(idsOf(compileBookingsByIds(db, filter, columns, [7, 3, 9]))).to.deep.equal([7, 3, 9, 9])
    expect(idsOf(compileBookingsByIds(db, filter, columns, [1, 2, 3, 4]))).to.deep.equal([1, 2, 3, 4])
    expect(idsOf(compileBookingsByIds(db, filter, columns, []))).to.deep.equal([0])
    // Another set of the same count: the cached text with its own values, as Kysely would build it afresh.
    const again = compileBookingsByIds(db, { statuses: ['pending'], bookingDate: { from: '2025-01-01', to: '2025-12-31' } }, columns, [5, 6, 8])
    const fresh = compileBookingsByIds(newDb(), { statuses: ['pending'], bookingDate: { from: '2025-01-01', to: '2025-12-31' } }, columns, [5, 6, 8])
    expect(again).to.deep.include({ sql: fresh.sql, parameters: fresh.parameters })
    expect(again.parameters).to.deep.equal(['bc_service', 'pending', '2025-01-01', '2025-12-31', 5, 6, 8, 8])
    expect(compileBookingsByIds(db, filter, { customer: true }, [7]).sql).to.not.equal(compileBookingsByIds(db, filter, columns, [7]).sql)
  })
})

describe('forceIndex', () => {
  it('names the index right after the bookings table, quoted', () => {
    const query = compileBookingsQuery(newDb(), { bookingDate: { from: '2026-01-01' } }, 'booking')
    const hinted = forceIndex(query, 'bc_api_date')
    expect(hinted.sql).to.contain('from `wp_booking_calendar_bookings` FORCE INDEX (`bc_api_date`) left join `wp_posts`')
    expect(hinted.sql.replace(' FORCE INDEX (`bc_api_date`)', '')).to.equal(query.sql)
    expect(hinted.parameters).to.deep.equal(query.parameters)
  })

  it('doubles a backtick in the name', () => {
    const hinted = forceIndex(compileBookingsQuery(newDb(), {}, 'booking'), 'odd`name')
    expect(hinted.sql).to.contain('FORCE INDEX (`odd``name`)')
  })

  it('leaves a query on another table as it is', () => {
    const query = newDb().selectFrom('posts').selectAll().compile()
    expect(forceIndex(query, 'x')).to.equal(query)
  })
})

describe('pickBookingDateIndex', () => {
  const pick = (indexes: Record<string, string[]>) => pickBookingDateIndex(new Map(Object.entries(indexes)))

  it('takes an index that starts with booking_date, time_from, whatever its name or letter case', () => {
    expect(pick({ PRIMARY: ['id'], service_id: ['service_id'], mine: ['BOOKING_DATE', 'Time_From'] })).to.equal('mine')
  })

  it('prefers one that also holds status, in either order of listing', () => {
    expect(pick({ a: ['booking_date', 'time_from'], b: ['booking_date', 'time_from', 'id', 'status'] })).to.equal('b')
    expect(pick({ b: ['booking_date', 'time_from', 'id', 'status'], a: ['booking_date', 'time_from'] })).to.equal('b')
  })

  it('takes none whose columns start otherwise', () => {
    expect(pick({ a: ['booking_date'], b: ['time_from', 'booking_date'], c: ['service_id', 'booking_date', 'time_from'], d: ['booking_date', 'status', 'time_from'] })).to.equal(undefined)
  })
})

describe('pickServiceDateIndex', () => {
  const pick = (indexes: Record<string, string[]>) => pickServiceDateIndex(new Map(Object.entries(indexes)))

  it('takes an index that starts with service_id, booking_date, time_from, whatever its name, letter case or further columns', () => {
    expect(pick({ PRIMARY: ['id'], service_id: ['service_id'], mine: ['Service_ID', 'BOOKING_DATE', 'time_from', 'id'] })).to.equal('mine')
  })

  it('takes none whose columns start otherwise', () => {
    expect(pick({ a: ['service_id'], b: ['service_id', 'booking_date'], c: ['booking_date', 'service_id', 'time_from'], d: ['service_id', 'time_from', 'booking_date'] })).to.equal(undefined)
  })
})

describe('compiled shapes of the rules query', () => {
  it('the rules of a second service are Kysely\'s own query for that service; all rules are another shape', () => {
    const cached = newDb()
    compileRulesQuery(cached, 12)
    compileRulesQuery(cached, undefined)
    const again = compileRulesQuery(cached, 41)
    const fresh = compileRulesQuery(newDb(), 41)
    expect(again.sql).to.equal(fresh.sql)
    expect(again.parameters).to.deep.equal([41, 0])
    expect(compileRulesQuery(cached, undefined).sql).to.equal(compileRulesQuery(newDb(), undefined).sql)
    expect(compileRulesQuery(cached, undefined).sql).to.not.contain(' in (')
  })
})

describe('CompiledShapes verifying its shapes (BC_VERIFY_COMPILED_SHAPES, set by npm test)', () => {
  const db = newDb()
  const build = (status: 'booked' | 'pending') => (values: readonly unknown[]) => db.selectFrom('booking_calendar_bookings').selectAll()
    .where('id', '=', values[0] as number).where('status', '=', status).compile()

  it('a shape that names too little fails at once, saying which', () => {
    const shapes = new CompiledShapes({ verify: true })
    shapes.compile('by id', [1], build('booked'))
    // The status went into the text, but the shape does not name it: the cache would answer the wrong query.
    expect(() => shapes.compile('by id', [2], (values) => db.selectFrom('booking_calendar_bookings').selectAll()
      .where('id', '=', values[0] as number).where('status', '=', sql.lit('pending')).compile()))
      .to.throw(ShapeMismatchError, 'The compiled shape "by id" names too little')
  })

  it('a shape that names all it changes passes, and gives the values of the second call', () => {
    const shapes = new CompiledShapes({ verify: true })
    shapes.compile('by id', [1], build('booked'))
    expect(shapes.compile('by id', [2], build('booked')).parameters).to.deep.equal([2, 'booked'])
  })

  it('without verifying, the cached query is answered as it is (what npm test guards against)', () => {
    const shapes = new CompiledShapes({ verify: false })
    const first = shapes.compile('by id', [1], build('booked'))
    expect(shapes.compile('by id', [2], (values) => db.selectFrom('booking_calendar_bookings').selectAll()
      .where('id', '=', values[0] as number).where('status', '=', sql.lit('pending')).compile()).sql).to.equal(first.sql)
  })

  it('npm test runs with it on', () => {
    expect(process.env.BC_VERIFY_COMPILED_SHAPES).to.equal('1')
  })
})

describe('CompiledShapes with SQL_SHAPE_CACHE=false', () => {
  it('builds every query afresh with its own values, the shape unused', () => {
    const shapes = new CompiledShapes({ cache: false, verify: false })
    const built: unknown[][] = []
    const build = (values: readonly unknown[]) => {
      built.push([...values])
      return sql`select ${values[0]}`.compile(newDb())
    }
    const first = shapes.compile('one shape', [1], build)
    const second = shapes.compile('one shape', [2], build)
    expect(built).to.deep.equal([[1], [2]])
    expect(first.parameters).to.deep.equal([1])
    expect(second.parameters).to.deep.equal([2])
  })
})
