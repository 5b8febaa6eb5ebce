// What answerSlots, answerDisabledTime and resolveService decide, with the db/
// functions they call replaced by rows in memory. These tests check the
// decisions (which query, which order, which page, which error); the queries
// themselves run over MariaDB in tests/integration.
import { expect } from 'chai'
import type { Logger } from 'pino'
import type { BookingFilter, BookingOrder } from '../../db/booking-filter.ts'
import type { BookingRow } from '../../db/booking-queries.ts'
import type { Db } from '../../db/connect.ts'
import type { BoundedPool } from '../../db/bounded-pool.ts'
import type { RuleRow } from '../../db/disabled-times.ts'
import type { ServiceRow } from '../../db/services.ts'
import type { Admission } from '../../db/stream-gate.ts'
import { readSnapshot, type Snapshot } from '../../db/snapshot.ts'
import { countBookings, digestBookings, findBookingsPage, findFirstBookings } from '../../db/bookings.ts'
import { findFirstBookingPackets, streamBookingPackets } from '../../db/booking-packets.ts'
import { findAllServices, findServiceById, findServiceBySlug } from '../../db/services.ts'
import { findRules } from '../../db/disabled-times.ts'
import { readStartOfWeek } from '../../db/options.ts'
import { addParsedSummaryRow, findSummaryRows, type SummaryRow } from '../../db/summary.ts'
import { RestError } from '../../server/errors.ts'
import { parseParams } from '../../server/http/params.ts'
import { answerDisabledTime, disabledTimeQueries, RuleProblemLog, type DisabledTimeQueries } from '../../server/domain/disabled-time.ts'
import { resolveService, serviceLookups as dbServiceLookups, type ServiceLookups } from '../../server/domain/services.ts'
import {
  answerSlots, bookingMapping, COUNTED_AS_READ_MAX_DAYS, countedAsRead, answerSize, recordsDigest, SHORT_ANSWER_MAX_DAYS, WIDE_ANSWER_MIN_DAYS,
  slotsQueries as dbSlotsQueries, SMALL_ANSWER_ROWS,
  type AnswerSink, type SlotsAnswer, type SlotsQueries,
} from '../../server/domain/slots.ts'
import { answerSummary, summaryQueries as dbSummaryQueries, type SummaryQueries } from '../../server/domain/summary.ts'
import type { SummaryQuery } from '../../server/domain/summary-params.ts'
import { occupancyOf } from '../../server/domain/summary-sums.ts'
import { summaryParams } from '../../server/routes/summary.ts'
import { disabledTimeParams } from '../../server/routes/disabled-time.ts'
import { slotsParams } from '../../server/routes/slots.ts'

const db = {} as Db
// The summary's rows come from findSummaryRows' stand-in below, which takes no connection.
const pool = {} as BoundedPool
const berlin = { kind: 'iana', name: 'Europe/Berlin' } as const

const services: ServiceRow[] = [
  { ID: 12, post_name: 'haircut', post_status: 'publish' },
  { ID: 14, post_name: '%d1%81%d1%82%d1%80%d0%b8%d0%b6%d0%ba%d0%b0', post_status: 'draft' },
  { ID: 15, post_name: '42', post_status: 'publish' },
]

/** Looks services up in `services`, and writes down each call. */
function serviceLookups(calls: string[]): ServiceLookups {
  return {
    findServiceById: async (_db, id) => {
      calls.push(`byId ${id}`)
      return services.find((s) => s.ID === id)
    },
    findServiceBySlug: async (_db, forms) => {
      calls.push(`bySlug ${forms.join(' ')}`)
      return services.find((s) => forms.includes(s.post_name))
    },
  }
}

function booking(id: number, serviceId = 12): BookingRow {
  return {
    id, service_id: serviceId, status: 'booked', booking_date: '2026-11-25', time_from: '09:00:00', time_to: '10:00:00',
    customer_name: 'Ann', customer_email: 'ann@example.com', customer_phone: '+49 1', note: null,
    created_at: '2026-11-01 10:00:00', service_post_name: 'haircut',
  }
}

/** The bookings table as `rows` (already filtered and in order), with each call written down. */
const clientGone = { caller: 'address:127.0.0.1', signal: new AbortController().signal }

function slotsQueries(rows: BookingRow[], calls: string[]): SlotsQueries {
  const snapshot = {} as Snapshot
  const describe = (filter: BookingFilter) => JSON.stringify(filter)
  return {
    ...serviceLookups(calls),
    readSnapshot: async (pool, work, options) => {
      // The pools are named by strings here: an answer without per_page may stream for minutes, on the stream pool.
      calls.push(`snapshot ${pool as unknown as string}${options?.admission === clientGone ? ' until the client goes' : ''}`)
      return await work(snapshot)
    },
    countBookings: async (_db, given, filter) => {
      expect(given).to.equal(snapshot)
      calls.push(`count ${describe(filter)}`)
      return rows.length
    },
    digestBookings: async (_db, given, filter, columns, timeoutMs) => {
      expect(given).to.equal(snapshot)
      calls.push(`digest ${describe(filter)}${columns.customer ? ' with customer data' : ''} ${timeoutMs}`)
      return { rows: rows.length, crcSum: '0', serviceNames: '' }
    },
    streamBookingPackets: (_db, given, filter, order: BookingOrder, timeoutMs, _columns, sink) => {
      expect(given).to.equal(snapshot)
      calls.push(`stream packets ${describe(filter)} ${order} ${timeoutMs}`)
      return (async function* () {
        for (let i = 0; i < rows.length; i += 2) {
          const batch = rows.slice(i, i + 2)
          for (const row of batch) sink.parsedRow(row)
          yield batch.length
        }
      })()
    },
    findBookingsPage: async (_db, given, filter, limit, offset) => {
      expect(given).to.equal(snapshot)
      calls.push(`page ${describe(filter)} ${limit} ${offset}`)
      return rows.slice(offset, offset + limit)
    },
    findFirstBookings: async (_db, filter, order, limit) => {
      calls.push(`first ${describe(filter)} ${order} ${limit}`)
      return rows.slice(0, limit)
    },
    findFirstBookingPackets: async (_db, pool, filter, order, limit, columns, sink) => {
      calls.push(`first packets ${pool as unknown as string} ${describe(filter)} ${order} ${limit}${columns.customer ? ' with customer data' : ''}`)
      const taken = rows.slice(0, limit)
      for (const row of taken) sink.parsedRow(row)
      return { rows: taken.length, firstHasService: taken[0] !== undefined && taken[0].service_post_name !== null }
    },
  }
}

/** A sink that keeps the IDs it is given. */
function idSink() {
  const held: number[] = []
  const sink: AnswerSink = {
    accepts: () => true,
    serviceNames: () => {},
    row: () => { throw new Error('rows come parsed here') },
    parsedRow: (row) => { held.push(row.id) },
  }
  return { sink, ids: () => held }
}

/** A body per attempt, as the routes make them: each with a sink of its own (`withSink`), or none (records). */
function bodies(withSink: boolean) {
  const made: Array<ReturnType<typeof idSink>> = []
  const newBody = () => {
    const held = idSink()
    made.push(held)
    return { sink: withSink ? held.sink : undefined, held }
  }
  return { newBody, made }
}

/** The IDs of an answer, in batches: its records, or what rowsInto hands `held`'s sink. */
async function readAnswer(answer: SlotsAnswer, held: ReturnType<typeof idSink>): Promise<number[][]> {
  const batches: number[][] = []
  if (answer.rowsInto && !answer.written) {
    let taken = 0
    for await (const count of answer.rowsInto(held.sink)) {
      batches.push(held.ids().slice(taken, taken + count))
      taken += count
    }
    return batches
  }
  if (answer.written) return [[...held.ids()]]
  for await (const batch of answer.batches) batches.push(batch.map((record) => record.id))
  return batches
}

interface Sent {
  total: number | undefined
  paging: SlotsAnswer['paging']
  grouped: boolean
  /** Each batch as the IDs of its records. */
  batches: number[][]
}

async function slots(query: Record<string, string>, rows: BookingRow[], options: { grouped?: boolean } = {}) {
  const calls: string[] = []
  let sent: Sent | undefined
  await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, query), {
    mapping: bookingMapping(berlin, false), grouped: options.grouped ?? false, queryTimeoutMs: 1234, admission: clientGone, newBody: bodies(false).newBody,
  }, async (answer, body) => {
    const batches = await readAnswer(answer, body.held)
    sent = { total: answer.total, paging: answer.paging, grouped: answer.grouped, batches }
  }, slotsQueries(rows, calls))
  return { calls, sent }
}

async function refusal(work: () => Promise<unknown>): Promise<RestError> {
  try {
    await work()
  } catch (error) {
    expect(error).to.be.instanceOf(RestError)
    return error as RestError
  }
  throw new Error('expected a RestError')
}

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe('the queries the answers make by default', () => {
  it('are those of db/', () => {
    expect(dbServiceLookups).to.deep.equal({ findServiceById, findServiceBySlug })
    expect(dbSlotsQueries).to.deep.equal({
      findServiceById, findServiceBySlug, readSnapshot, countBookings, digestBookings, streamBookingPackets, findBookingsPage, findFirstBookings, findFirstBookingPackets,
    })
    expect(disabledTimeQueries).to.deep.equal({ findServiceById, findServiceBySlug, findRules, findAllServices })
    expect(dbSummaryQueries).to.deep.equal({ findServiceById, findServiceBySlug, readStartOfWeek, findSummaryRows, findRules, findAllServices })
  })
})

describe('answerSlots: which queries answer slots/', () => {
  it('answers a narrow filter from one statement, without a count or a snapshot', async () => {
    const { calls, sent } = await slots({ service: 'haircut', status: 'booked' }, [booking(1), booking(2)])
    expect(calls).to.deep.equal([
      'bySlug haircut',
      `first {"serviceId":12,"statuses":["booked"]} booking ${SMALL_ANSWER_ROWS + 1}`,
    ])
    expect(sent).to.deep.equal({ total: 2, paging: undefined, grouped: false, batches: [[1, 2]] })
  })

  it('asks for service order when the answer is grouped', async () => {
    const { calls, sent } = await slots({ start: '2026-11-01', end: '2026-11-30' }, [booking(1)], { grouped: true })
    expect(calls).to.deep.equal([`first {"bookingDate":{"from":"2026-11-01","to":"2026-11-30"}} service ${SMALL_ANSWER_ROWS + 1}`])
    expect(sent).to.deep.equal({ total: 1, paging: undefined, grouped: true, batches: [[1]] })
  })

  // A service given by its ID: one statement, whose bookings come joined to their service's post.
  it('answers exactly SMALL_ANSWER_ROWS bookings from the one statement; their service post proves the ID without a look-up', async () => {
    const rows = ids(1, SMALL_ANSWER_ROWS).map((id) => booking(id))
    const { calls, sent } = await slots({ service: '12' }, rows)
    expect(calls).to.deep.equal([`first {"serviceId":12} booking ${SMALL_ANSWER_ROWS + 1}`])
    expect(sent!.total).to.equal(SMALL_ANSWER_ROWS)
  })

  it('looks the ID up when the statement finds no booking, and answers none for a service that exists', async () => {
    const { calls, sent } = await slots({ service: '12' }, [])
    expect(calls).to.deep.equal([`first {"serviceId":12} booking ${SMALL_ANSWER_ROWS + 1}`, 'byId 12'])
    expect(sent).to.deep.equal({ total: 0, paging: undefined, grouped: false, batches: [[]] })
  })

  it('looks the ID up when the bookings found have no bc_service post, then takes it as a slug', async () => {
    // Service 42 is no bc_service post; the service whose slug is "42" is ID 15.
    const orphans = [{ ...booking(1, 42), service_post_name: null }]
    const { calls } = await slots({ service: '42' }, orphans)
    expect(calls.slice(0, 3)).to.deep.equal([`first {"serviceId":42} booking ${SMALL_ANSWER_ROWS + 1}`, 'byId 42', 'bySlug 42'])
    expect(calls[3]).to.equal(`first {"serviceId":15} booking ${SMALL_ANSWER_ROWS + 1}`)
    let refused: unknown
    await slots({ service: '43' }, [{ ...booking(1, 43), service_post_name: null }]).catch((error: unknown) => { refused = error })
    expect(refused).to.include({ status: 404, code: 'rest_service_not_found' })
  })

  it('asks again when digits name a service by its slug, not its ID', async () => {
    // No service has ID 42; service 15's slug is "42".
    // Its bookings come back without a bc_service post, so the ID is looked up.
    const { calls, sent } = await slots({ service: '42' }, [{ ...booking(1, 15), service_post_name: null }])
    expect(calls).to.deep.equal([
      `first {"serviceId":42} booking ${SMALL_ANSWER_ROWS + 1}`, 'byId 42', 'bySlug 42', `first {"serviceId":15} booking ${SMALL_ANSWER_ROWS + 1}`,
    ])
    expect(sent!.batches).to.deep.equal([[1]])
  })

  it('asks for bookings beside the check only when the service is all digits, and an ID a safe integer', async () => {
    for (const value of ['x12', '12x', '99999999999999999999']) {
      const calls: string[] = []
      const error = await refusal(() => answerSlots(db, {} as never, parseParams(slotsParams, { service: value }), {
        mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, newBody: bodies(false).newBody,
      }, async () => undefined, slotsQueries([], calls)))
      expect([error.code, calls], value).to.deep.equal(['rest_service_not_found', [`bySlug ${value}`]])
    }
  })

  it('streams from a snapshot when the narrow filter matches more than SMALL_ANSWER_ROWS', async () => {
    const rows = ids(1, SMALL_ANSWER_ROWS + 1).map((id) => booking(id))
    const { calls, sent } = await slots({ service: '12' }, rows, { grouped: true })
    expect(calls).to.deep.equal([
      `first {"serviceId":12} service ${SMALL_ANSWER_ROWS + 1}`,
      'snapshot stream until the client goes',
      'count {"serviceId":12}',
      'stream packets {"serviceId":12} service 1234',
    ])
    expect(sent!.total).to.equal(SMALL_ANSWER_ROWS + 1)
    expect(sent!.paging).to.equal(undefined)
    expect(sent!.grouped).to.equal(true)
    expect(sent!.batches.flat()).to.deep.equal(rows.map((row) => row.id))
  })

  it('streams a wide filter from a snapshot straight away, in batches', async () => {
    const { calls, sent } = await slots({}, [booking(1), booking(2), booking(3)])
    expect(calls).to.deep.equal(['snapshot stream until the client goes', 'count {}', 'stream packets {} booking 1234'])
    expect(sent).to.deep.equal({ total: 3, paging: undefined, grouped: false, batches: [[1, 2], [3]] })
  })

  describe('a narrow answer read into the sink of a body of its own (options.newBody)', () => {
    async function narrow(query: Record<string, string>, rows: BookingRow[]) {
      const calls: string[] = []
      const { newBody, made } = bodies(true)
      let sent: { total: number | undefined; counts: number[]; ids: number[]; body: number } | undefined
      await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, query), {
        mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, admission: clientGone, newBody,
      }, async (answer, body) => {
        const total = answer.total
        const counts: number[] = []
        for await (const count of answer.rowsInto!(body.sink!)) counts.push(count)
        sent = { total, counts, ids: body.held.ids(), body: made.indexOf(body.held) }
      }, slotsQueries(rows, calls))
      return { calls, sent: sent!, bodies: made.length }
    }

    it('is one statement on a short connection, its rows written before the answer is sent', async () => {
      const { calls, sent, bodies: made } = await narrow({ service: '12', start: '2026-11-01', end: '2026-11-30' }, [booking(1), booking(2)])
      expect(calls).to.deep.equal([`first packets short {"serviceId":12,"bookingDate":{"from":"2026-11-01","to":"2026-11-30"}} booking ${SMALL_ANSWER_ROWS + 1}`])
      expect(sent).to.deep.equal({ total: 2, counts: [2], ids: [1, 2], body: 0 })
      expect(made).to.equal(1)
    })

    it('takes a new body when the ID turns out to be a slug, and sends only the second statement\'s rows', async () => {
      // Service 15's slug is "42"; no service has ID 42.
      const { calls, sent, bodies: made } = await narrow({ service: '42' }, [{ ...booking(7, 15), service_post_name: null }])
      expect(calls).to.deep.equal([
        `first packets short {"serviceId":42} booking ${SMALL_ANSWER_ROWS + 1}`, 'byId 42', 'bySlug 42', `first packets short {"serviceId":15} booking ${SMALL_ANSWER_ROWS + 1}`,
      ])
      expect(made).to.equal(2)
      expect(sent).to.include({ body: 1 })
      expect(sent.ids).to.deep.equal([7])
    })

    it('of more than SMALL_ANSWER_ROWS: the answer streams from a snapshot into a new body', async () => {
      const rows = ids(1, SMALL_ANSWER_ROWS + 1).map((id) => booking(id))
      const { calls, sent, bodies: made } = await narrow({ service: '12' }, rows)
      expect(calls).to.deep.equal([
        `first packets short {"serviceId":12} booking ${SMALL_ANSWER_ROWS + 1}`, 'snapshot stream until the client goes', 'count {"serviceId":12}', 'stream packets {"serviceId":12} booking 1234',
      ])
      expect(made).to.equal(2)
      expect(sent.body).to.equal(1)
      expect(sent.ids).to.deep.equal(rows.map((row) => row.id))
      expect(sent.total).to.equal(undefined)
    })

    it('is written into its body\'s sink only: another sink, or records, are refused', async () => {
      let answer: SlotsAnswer | undefined
      await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, { service: '12' }), {
        mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, newBody: bodies(true).newBody,
      }, async (given) => { answer = given }, slotsQueries([booking(1)], []))
      const read = async (items: AsyncIterable<unknown>) => { for await (const item of items) void item }
      const refusals: string[] = []
      await read(answer!.rowsInto!(idSink().sink)).catch((error: Error) => refusals.push(error.message))
      await read(answer!.batches).catch((error: Error) => refusals.push(error.message))
      expect(refusals).to.deep.equal([
        'This answer is written into the sink of its body.', 'This answer\'s rows go to a sink: read rowsInto.',
      ])
      expect(await answer!.count()).to.equal(1)
    })

    it('reads the customer columns only when customer data is shown', async () => {
      const calls: string[] = []
      await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, { service: '12' }), {
        mapping: bookingMapping(berlin, true), grouped: false, queryTimeoutMs: 1234, newBody: bodies(true).newBody,
      }, async () => undefined, slotsQueries([booking(1)], calls))
      expect(calls).to.deep.equal([`first packets short {"serviceId":12} booking ${SMALL_ANSWER_ROWS + 1} with customer data`])
    })
  })

  describe('a streamed answer written by a sink (rowsInto)', () => {
    const YEAR = { start: '2026-01-01', end: '2026-12-31' }
    const year = '{"bookingDate":{"from":"2026-01-01","to":"2026-12-31"}}'

    async function written(rows: BookingRow[], query: Record<string, string> = YEAR) {
      const calls: string[] = []
      const { sink, ids } = idSink()
      let total: number | undefined
      const counts: number[] = []
      await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, query), {
        mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, admission: clientGone, newBody: bodies(true).newBody,
      }, async (answer) => {
        for await (const count of answer.rowsInto!(sink)) {
          counts.push(count)
          total ??= answer.total
        }
      }, slotsQueries(rows, calls))
      return { calls, total, ids: ids(), counts }
    }

    it('a period, a period since a day, or everything: counted first, then read whole, in one snapshot', async () => {
      for (const query of [YEAR, {}, { start: '2026-01-01' }, { end: '2026-12-31', filter_by: 'created_date' }] as Array<Record<string, string>>) {
        const rows = ids(1, 5).map((id) => booking(id))
        const { calls, total, ids: sent, counts } = await written(rows, query)
        expect(calls.map((call) => call.replace(/ \{.*/, '')), JSON.stringify(query)).to.deep.equal(['snapshot stream until the client goes', 'count', 'stream packets'])
        expect(calls[2]).to.match(/ booking 1234$/)
        expect(total).to.equal(5)
        expect(counts).to.deep.equal([2, 2, 1])
        expect(sent).to.deep.equal([1, 2, 3, 4, 5])
      }
      expect((await written([])).calls).to.deep.equal(['snapshot stream until the client goes', `count ${year}`, `stream packets ${year} booking 1234`])
    })

    it('a body that is never read (HEAD) gets its total from count()', async () => {
      const calls: string[] = []
      let total: number | undefined
      await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, {}), {
        mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, admission: clientGone, newBody: bodies(true).newBody,
      }, async (answer) => {
        expect(answer.total).to.equal(undefined)
        total = await answer.count()
      }, slotsQueries([booking(1), booking(2)], calls))
      expect(total).to.equal(2)
      expect(calls).to.deep.equal(['snapshot stream until the client goes', 'count {}'])
    })
  })

  it('an answer held in memory gives its total from count() too', async () => {
    for (const query of [{ service: '12' }, { per_page: '2', page: '1' }]) {
      let counted: [number | undefined, number] | undefined
      await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, query), {
        mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, admission: clientGone, newBody: bodies(false).newBody,
      }, async (answer) => { counted = [answer.total, await answer.count()] }, slotsQueries([booking(1), booking(2), booking(3)], []))
      expect(counted, JSON.stringify(query)).to.deep.equal([3, 3])
    }
  })

  it('reads one page in booking order, with the count, in one snapshot', async () => {
    const rows = ids(1, 5).map((id) => booking(id))
    const { calls, sent } = await slots({ service: '12', per_page: '2', page: '2' }, rows)
    expect(calls).to.deep.equal(['byId 12', 'snapshot short until the client goes', 'count {"serviceId":12}', 'page {"serviceId":12} 2 2'])
    expect(sent).to.deep.equal({ total: 5, paging: { page: 2, totalPages: 3 }, grouped: false, batches: [[3, 4]] })
  })

  it('shows page 1 when per_page comes without page, and the last page short', async () => {
    const rows = ids(1, 5).map((id) => booking(id))
    expect((await slots({ per_page: '2' }, rows)).sent!.paging).to.deep.equal({ page: 1, totalPages: 3 })
    expect((await slots({ per_page: '2', page: '3' }, rows)).sent!.batches).to.deep.equal([[5]])
  })

  it('keeps a flat page in booking order', async () => {
    const rows = [booking(1, 14), booking(2, 12), booking(3, 14)]
    const { sent } = await slots({ per_page: '4' }, rows)
    expect(sent!.batches).to.deep.equal([[1, 2, 3]])
  })

  it('groups a page by service after cutting it in booking order', async () => {
    const rows = [booking(1, 14), booking(2, 12), booking(3, 14), booking(4, 12), booking(5, 12)]
    const { sent } = await slots({ per_page: '4' }, rows, { grouped: true })
    expect(sent!.batches).to.deep.equal([[2, 4, 1, 3]])
  })

  it('answers no bookings with total 0 and no page query', async () => {
    const { calls, sent } = await slots({ per_page: '10', page: '1' }, [])
    expect(calls).to.deep.equal(['snapshot short until the client goes', 'count {}'])
    expect(sent).to.deep.equal({ total: 0, paging: { page: 1, totalPages: 0 }, grouped: false, batches: [[]] })
  })

  it('refuses a page past the last with rest_invalid_page_number', async () => {
    const rows = ids(1, 5).map((id) => booking(id))
    const error = await refusal(() => slots({ per_page: '2', page: '4' }, rows))
    expect([error.status, error.code, error.message]).to.deep.equal([
      400, 'rest_invalid_page_number', 'The page number requested is larger than the number of pages available.',
    ])
  })
})

describe('answerSlots with options.tagged: what names the answer\'s data', () => {
  const year = { start: '2026-01-01', end: '2026-12-31' }
  const yearFilter = { serviceId: undefined, statuses: undefined, bookingDate: { from: '2026-01-01', to: '2026-12-31' } }

  interface Tagged {
    calls: string[]
    total: number | undefined
    written: boolean
    rowTagParts: unknown[] | undefined
    tagFromContent: string | true | undefined
    countedAsRead: boolean
    maxTaggedRows: number
    /** The total once the body is read. */
    totalRead: number | undefined
    /** The records sent, or with a sink the IDs it holds. */
    records: unknown[]
    /** Bodies made, and the one sent (its index). */
    bodies: number
    sentBody: number
  }

  async function tagged(
    query: Record<string, string>, rows: BookingRow[],
    options: { sink?: boolean; tagged?: boolean; maxTaggedRows?: number; holds?: boolean; notHeldOnce?: boolean } = {},
  ): Promise<Tagged> {
    let notHeld = options.notHeldOnce ?? false
    const calls: string[] = []
    const { newBody, made } = bodies(options.sink ?? false)
    let sent: Tagged | undefined
    await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, query), {
      mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, newBody,
      tagged: options.tagged ?? true, maxTaggedRows: options.maxTaggedRows, holds: options.holds ?? true,
    }, async (answer, body) => {
      // What the answer says before its body is read.
      const { total, written, rowTagParts, tagFromContent, countedAsRead: counted, maxTaggedRows } = answer
      const records: unknown[] = []
      if (notHeld) {
        // What a body does that cannot hold an answer counted as read whole (http/slots-response.ts): read to the end, keeping nothing.
        notHeld = false
        let read = 0
        for await (const count of answer.rowsInto!(idSink().sink)) read += count
        return { notHeld: true, rows: read }
      }
      if (answer.rowsInto && !answer.written) {
        for await (const _count of answer.rowsInto(body.held.sink)) void _count
        records.push(...body.held.ids())
      } else if (answer.written) {
        records.push(...body.held.ids())
      } else {
        for await (const batch of answer.batches) records.push(...batch)
      }
      sent = {
        calls, total, written, rowTagParts, tagFromContent, countedAsRead: counted, maxTaggedRows, totalRead: answer.total, records, bodies: made.length, sentBody: made.indexOf(body.held),
      }
    }, slotsQueries(rows, calls))
    return sent!
  }

  it('a narrow answer held as records: their SHA-256, as recordsDigest gives it, read in the one statement', async () => {
    const sent = await tagged({ service: '12' }, [booking(1), booking(2)])
    expect(sent.calls).to.deep.equal([`first {"serviceId":12} booking ${SMALL_ANSWER_ROWS + 1}`])
    expect(sent.records.map((record) => (record as { id: number }).id)).to.deep.equal([1, 2])
    expect(sent.tagFromContent).to.equal(recordsDigest(sent.records as never))
    expect([sent.total, sent.written, sent.rowTagParts]).to.deep.equal([2, false, undefined])
    const other = await tagged({ service: '12' }, [booking(1), booking(3)])
    expect(other.tagFromContent).to.be.a('string').and.not.equal(sent.tagFromContent)
  })

  it('a narrow answer written into the sink: true, the route hashing the body', async () => {
    const sent = await tagged({ service: '12' }, [booking(1), booking(2)], { sink: true })
    expect(sent).to.deep.equal({
      calls: sent.calls, total: 2, written: true, rowTagParts: undefined, tagFromContent: true, countedAsRead: false, maxTaggedRows: Number.POSITIVE_INFINITY,
      totalRead: 2, records: [1, 2], bodies: 1, sentBody: 0,
    })
  })

  it('an answer not asked to be tagged has no tag of either kind', async () => {
    for (const [query, sink] of [[{ service: '12' }, false], [{ service: '12' }, true], [{ per_page: '2' }, false]] as const) {
      const sent = await tagged(query, [booking(1), booking(2)], { sink, tagged: false })
      expect([sent.tagFromContent, sent.rowTagParts], JSON.stringify([query, sink])).to.deep.equal([undefined, undefined])
      expect(sent.calls.join(), JSON.stringify([query, sink])).to.not.contain('digest')
    }
    const streamed = await tagged(year, [booking(1), booking(2)], { tagged: false })
    expect(streamed.calls).to.deep.equal(['snapshot stream', `count ${JSON.stringify(yearFilter)}`, `stream packets ${JSON.stringify(yearFilter)} booking 1234`])
    expect([streamed.tagFromContent, streamed.rowTagParts]).to.deep.equal([undefined, undefined])
  })

  it('a page: its total, page and pages, then its records\' SHA-256', async () => {
    const rows = ids(1, 5).map((id) => booking(id))
    const sent = await tagged({ per_page: '2', page: '2' }, rows)
    expect(sent.calls).to.deep.equal(['snapshot short', 'count {}', 'page {} 2 2'])
    expect(sent.tagFromContent).to.equal(`5:2:3:${recordsDigest(sent.records as never)}`)
    expect([sent.written, sent.rowTagParts]).to.deep.equal([false, undefined])
    expect((await tagged({ per_page: '2', page: '1' }, [])).tagFromContent).to.equal(`0:1:0:${recordsDigest([])}`)
  })

  const twoYears = { start: '2025-01-01', end: '2026-12-31' }
  const twoYearsFilter = { serviceId: undefined, statuses: undefined, bookingDate: { from: '2025-01-01', to: '2026-12-31' } }

  it('a streamed answer of a year, written by a sink: not counted first, its rows read once and counted as they are read; its tag parts are the filter', async () => {
    for (const maxTaggedRows of [7, 2, 0]) {
      const sent = await tagged(year, ids(1, 3).map((id) => booking(id)), { sink: true, maxTaggedRows })
      expect(sent.calls).to.deep.equal(['snapshot stream', `stream packets ${JSON.stringify(yearFilter)} booking 1234`])
      expect([sent.total, sent.totalRead, sent.written, sent.records]).to.deep.equal([undefined, 3, false, [1, 2, 3]])
      // Whether its tag is sent (rows ≤ maxTaggedRows) is the body's to say once it has them all.
      expect([sent.rowTagParts, sent.countedAsRead, sent.maxTaggedRows]).to.deep.equal([[yearFilter], true, maxTaggedRows])
    }
  })

  it('a year where nothing is held (HOLD_* 0): counted first, never counted as read', async () => {
    const sent = await tagged(year, ids(1, 3).map((id) => booking(id)), { sink: true, holds: false })
    expect(sent.calls).to.deep.equal(['snapshot stream', `count ${JSON.stringify(yearFilter)}`, `stream packets ${JSON.stringify(yearFilter)} booking 1234`])
    expect([sent.total, sent.countedAsRead, sent.records]).to.deep.equal([3, false, [1, 2, 3]])
  })

  it('a streamed answer over more than COUNTED_AS_READ_MAX_DAYS: counted in its snapshot first, then its rows read once', async () => {
    expect(COUNTED_AS_READ_MAX_DAYS).to.equal(366)
    const sent = await tagged(twoYears, ids(1, 3).map((id) => booking(id)), { sink: true })
    expect(sent.calls).to.deep.equal(['snapshot stream', `count ${JSON.stringify(twoYearsFilter)}`, `stream packets ${JSON.stringify(twoYearsFilter)} booking 1234`])
    expect([sent.total, sent.totalRead, sent.written, sent.tagFromContent, sent.countedAsRead]).to.deep.equal([3, 3, false, undefined, false])
    expect(sent.rowTagParts).to.deep.equal([twoYearsFilter])
    // 366 days (2028 is a leap year) is not counted first; 367 are.
    expect(countedAsRead({ bookingDate: { from: '2028-01-01', to: '2028-12-31' } })).to.equal(true)
    expect(countedAsRead({ bookingDate: { from: '2028-01-01', to: '2029-01-01' } })).to.equal(false)
    expect(countedAsRead({ createdAt: { from: '2026-01-01 00:00:00', to: '2026-12-31 23:59:59' } })).to.equal(true)
    for (const open of [{}, { bookingDate: { from: '2026-01-01' } }, { createdAt: { to: '2026-12-31 23:59:59' } }]) expect(countedAsRead(open), JSON.stringify(open)).to.equal(false)
  })

  it('an answer\'s size is told to the line for stream permits: short up to SHORT_ANSWER_MAX_DAYS, wide from WIDE_ANSWER_MIN_DAYS or open', async () => {
    expect([SHORT_ANSWER_MAX_DAYS, WIDE_ANSWER_MIN_DAYS]).to.deep.equal([92, 732])
    expect(answerSize({ bookingDate: { from: '2026-01-01', to: '2026-04-02' } }), '92 days').to.equal('short')
    expect(answerSize({ bookingDate: { from: '2026-01-01', to: '2026-04-03' } }), '93 days').to.equal('long')
    expect(answerSize({ createdAt: { from: '2026-01-01 00:00:00', to: '2026-03-31 23:59:59' } })).to.equal('short')
    expect(answerSize({ createdAt: { from: '2026-01-01 00:00:00', to: '2026-04-03 00:00:00' } }), '93 days of creation').to.equal('long')
    // 2026-01-01 to 2028-01-01 is 731 days; to 2028-01-02, 732.
    expect(answerSize({ bookingDate: { from: '2026-01-01', to: '2028-01-01' } }), '731 days').to.equal('long')
    expect(answerSize({ bookingDate: { from: '2026-01-01', to: '2028-01-02' } }), '732 days').to.equal('wide')
    expect(answerSize({ createdAt: { from: '2026-01-01 00:00:00', to: '2028-01-02 00:00:00' } }), '732 days of creation').to.equal('wide')
    for (const open of [{}, { bookingDate: { to: '2026-01-31' } }, { createdAt: { from: '2026-01-01 00:00:00' } }]) expect(answerSize(open), JSON.stringify(open)).to.equal('wide')
    const told = async (query: Record<string, string>) => {
      const admission: Admission = { caller: 'someone' }
      await answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, query), {
        mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, admission, newBody: bodies(true).newBody,
      }, async (answer, body) => { await readAnswer(answer, body.held) }, slotsQueries([booking(1)], []))
      return admission.size
    }
    expect(await told({ start: '2026-01-01', end: '2026-03-31' }), 'a quarter').to.equal('short')
    expect(await told(year), 'a year').to.equal('long')
    expect(await told({}), 'the whole table').to.equal('wide')
  })

  it('a counted streamed answer has its parts and maxTaggedRows; the body tags it only within them', async () => {
    const rows = ids(1, 3).map((id) => booking(id))
    for (const maxTaggedRows of [undefined, 4, 3, 2, 0]) {
      const sent = await tagged(twoYears, rows, { maxTaggedRows })
      expect([sent.total, sent.rowTagParts, sent.maxTaggedRows], String(maxTaggedRows)).to.deep.equal([3, [twoYearsFilter], maxTaggedRows ?? Number.POSITIVE_INFINITY])
    }
  })

  it('an answer counted as read that its body could not hold is read again in the same snapshot, counted by the first read, into a new body', async () => {
    const sent = await tagged(year, ids(1, 3).map((id) => booking(id)), { sink: true, notHeldOnce: true })
    expect(sent.calls).to.deep.equal(['snapshot stream', `stream packets ${JSON.stringify(yearFilter)} booking 1234`, `stream packets ${JSON.stringify(yearFilter)} booking 1234`])
    expect([sent.total, sent.rowTagParts, sent.countedAsRead, sent.records]).to.deep.equal([3, undefined, false, [1, 2, 3]])
    expect([sent.bodies, sent.sentBody]).to.deep.equal([2, 1])
  })

  it('any other failure of the body is not answered again', async () => {
    const calls: string[] = []
    let sends = 0
    const failure = new RestError(503, 'rest_database_unavailable', 'gone')
    const answering = answerSlots(db, { stream: 'stream', short: 'short' } as never, parseParams(slotsParams, year), {
      mapping: bookingMapping(berlin, false), grouped: false, queryTimeoutMs: 1234, tagged: true, newBody: bodies(true).newBody,
    }, async () => {
      sends++
      throw failure
    }, slotsQueries([booking(1)], calls))
    expect(await answering.then(() => undefined, (error: unknown) => error)).to.equal(failure)
    expect([sends, calls.filter((call) => call.startsWith('snapshot'))]).to.deep.equal([1, ['snapshot stream']])
  })
})

describe('resolveService: a service ID or slug', () => {
  async function resolve(value: string) {
    const calls: string[] = []
    const row = await resolveService(db, value, serviceLookups(calls))
    return { id: row.ID, calls }
  }

  it('takes all digits as an ID first', async () => {
    expect(await resolve('12')).to.deep.equal({ id: 12, calls: ['byId 12'] })
  })

  it('takes all digits as a slug when no service has that ID', async () => {
    expect(await resolve('42')).to.deep.equal({ id: 15, calls: ['byId 42', 'bySlug 42'] })
  })

  it('does not look up an ID past the safe integers', async () => {
    const calls: string[] = []
    await refusal(() => resolveService(db, '99999999999999999999', serviceLookups(calls)))
    expect(calls).to.deep.equal(['bySlug 99999999999999999999'])
  })

  it('takes only all digits as an ID', async () => {
    for (const value of ['a12', '12a', '1e1']) {
      const calls: string[] = []
      await refusal(() => resolveService(db, value, serviceLookups(calls)))
      expect(calls, value).to.deep.equal([`bySlug ${value}`])
    }
  })

  it('looks a slug up as given and as WordPress stores it', async () => {
    expect(await resolve('СТРИЖКА')).to.deep.equal({ id: 14, calls: ['bySlug СТРИЖКА %d1%81%d1%82%d1%80%d0%b8%d0%b6%d0%ba%d0%b0'] })
  })

  it('answers 404 rest_service_not_found naming the value, cut to 200 characters', async () => {
    const error = await refusal(() => resolveService(db, 'nope', serviceLookups([])))
    expect([error.status, error.code, error.message]).to.deep.equal([404, 'rest_service_not_found', 'No service matches "nope": give a service ID or slug.'])
    const long = await refusal(() => resolveService(db, 'x'.repeat(300), serviceLookups([])))
    expect(long.message).to.equal(`No service matches "${'x'.repeat(200)}": give a service ID or slug.`)
  })
})

function ruleRow(overrides: Partial<RuleRow>): RuleRow {
  return {
    id: 1, service_id: 12, rule_type: 'weekly', weekday: 1, date_from: null, date_to: null,
    time_from: '09:00:00', time_to: '10:00:00', note: '', ...overrides,
  }
}

function warnings() {
  const logged: unknown[] = []
  const log = { warn: (fields: unknown, message: string) => logged.push([fields, message]) } as unknown as Logger
  return { logged, log }
}

describe('answerDisabledTime: rules into the answer of disabled-time/', () => {
  async function disabled(query: Record<string, string>, rules: RuleRow[], problems = new RuleProblemLog(warnings().log), maxRangeDays = 731) {
    const calls: string[] = []
    const queries: DisabledTimeQueries = {
      ...serviceLookups(calls),
      findRules: async (_db, serviceId) => {
        calls.push(`rules ${serviceId}`)
        return rules.filter((rule) => serviceId === undefined || rule.service_id === serviceId || rule.service_id === 0)
      },
      findAllServices: async () => {
        calls.push('services')
        return services
      },
    }
    const answer = await answerDisabledTime(db, parseParams(disabledTimeParams, query), {
      zone: berlin, now: Date.UTC(2026, 10, 22, 23, 30), maxRangeDays, problems,
    }, queries)
    return { calls, answer }
  }

  it('expands the rules of a service and the site-wide ones, naming each service by its slug', async () => {
    const rules = [
      ruleRow({ id: 1, service_id: 12 }),
      ruleRow({ id: 2, service_id: 0, time_from: '08:00:00', time_to: '09:00:00' }),
      ruleRow({ id: 3, service_id: 14 }),
      ruleRow({ id: 4, service_id: 99, time_from: '07:00:00', time_to: '08:00:00' }),
    ]
    const { calls, answer } = await disabled({ service: 'haircut', start: '2026-11-23', end: '2026-11-23' }, rules)
    // The service's own row names it: the slugs of all services are read only for all rules.
    expect(calls).to.deep.equal(['bySlug haircut', 'rules 12'])
    expect(answer).to.deep.equal({
      disabled_times: [
        { rule_id: 2, service_id: null, service_slug: null, type: 'weekly', start: '2026-11-23T08:00:00+01:00', end: '2026-11-23T09:00:00+01:00', all_day: false, note: '', windowDay: '2026-11-23' },
        { rule_id: 1, service_id: 12, service_slug: 'haircut', type: 'weekly', start: '2026-11-23T09:00:00+01:00', end: '2026-11-23T10:00:00+01:00', all_day: false, note: '', windowDay: '2026-11-23' },
      ],
      start: '2026-11-23', end: '2026-11-23', timezone: 'Europe/Berlin', total: 2,
    })
    const all = await disabled({ start: '2026-11-23', end: '2026-11-23' }, rules)
    expect(all.calls).to.deep.equal(['rules undefined', 'services'])
    expect(all.answer.disabled_times.map((p) => [p.rule_id, p.service_slug])).to.deep.equal([[4, null], [2, null], [1, 'haircut'], [3, 'стрижка']])
  })

  it('defaults to today in the site\'s zone and three months on', async () => {
    const { answer } = await disabled({}, [])
    expect([answer.start, answer.end, answer.total]).to.deep.equal(['2026-11-23', '2027-02-23', 0])
  })

  it('refuses a range it cannot serve before any query, naming the parameter', async () => {
    const error = await refusal(() => disabled({ start: '2026-12-02', end: '2026-12-01' }, []))
    expect([error.status, error.code, error.extra.params]).to.deep.equal([
      400, 'rest_invalid_param', { start: 'start must not be after end (2026-12-02 is after 2026-12-01).' },
    ])
    const defaulted = await refusal(() => disabled({ end: '2026-11-01' }, []))
    expect(defaulted.extra.params).to.deep.equal({ end: 'end must not be before start, which defaults to today (2026-11-23).' })
    const tooLong = 'The range from 2026-11-23 to 2027-02-23 spans 93 days; at most 31 are allowed. Choose a later start or an earlier end.'
    expect((await refusal(() => disabled({ start: '2026-11-23' }, [], undefined, 31))).extra.params).to.deep.equal({ start: tooLong })
    expect((await refusal(() => disabled({ end: '2027-02-23' }, [], undefined, 31))).extra.params).to.deep.equal({ end: tooLong })
  })

  it('skips a rule that makes no sense and logs it once, not once per request', async () => {
    const { logged, log } = warnings()
    const problems = new RuleProblemLog(log)
    const rules = [ruleRow({ id: 7, weekday: 9 }), ruleRow({ id: 1 })]
    const first = await disabled({ start: '2026-11-23', end: '2026-11-23' }, rules, problems)
    await disabled({ start: '2026-11-23', end: '2026-11-23' }, rules, problems)
    expect(first.answer.disabled_times.map((p) => p.rule_id)).to.deep.equal([1])
    expect(logged).to.deep.equal([[{ ruleId: 7, problem: 'a weekly rule needs a weekday from 0 to 6' }, 'skipped a disabled-time rule that makes no sense']])
  })
})

describe('RuleProblemLog', () => {
  it('logs each rule and problem once, and again when the problem changes', () => {
    const { logged, log } = warnings()
    const problems = new RuleProblemLog(log)
    problems.report(1, 'a')
    problems.report(1, 'a')
    problems.report(1, 'b')
    problems.report(2, 'a')
    expect(logged).to.deep.equal([
      [{ ruleId: 1, problem: 'a' }, 'skipped a disabled-time rule that makes no sense'],
      [{ ruleId: 1, problem: 'b' }, 'skipped a disabled-time rule that makes no sense'],
      [{ ruleId: 2, problem: 'a' }, 'skipped a disabled-time rule that makes no sense'],
    ])
  })

  it('remembers 10,001 problems, then starts over', () => {
    const { logged, log } = warnings()
    const problems = new RuleProblemLog(log)
    for (let id = 1; id <= 10_001; id++) problems.report(id, 'x')
    problems.report(1, 'x')
    expect(logged.length).to.equal(10_001)
    problems.report(20_000, 'x')
    problems.report(1, 'x')
    expect(logged.length).to.equal(10_003)
  })
})

function summaryRow(overrides: Partial<SummaryRow>): SummaryRow {
  return { day: '2026-11-05', service_id: 12, status: null, whole_day_date: null, bookings: 1, all_day_bookings: 0, booked_seconds: 3600, ...overrides }
}

describe('answerSummary: which queries answer summary/, and how their rows combine', () => {
  interface Setup { rows?: SummaryRow[]; rules?: RuleRow[]; startOfWeek?: string | undefined; problems?: RuleProblemLog; maxRangeDays?: number }

  async function summary(query: Record<string, string> | { parsed: SummaryQuery }, setup: Setup = {}) {
    const calls: string[] = []
    const queries: SummaryQueries = {
      ...serviceLookups(calls),
      readStartOfWeek: async () => {
        calls.push('start_of_week')
        return setup.startOfWeek
      },
      findSummaryRows: async (_db, _pool, summaryQuery, into) => {
        calls.push(`rows ${JSON.stringify(summaryQuery)}`)
        for (const row of setup.rows ?? []) addParsedSummaryRow(into, row)
      },
      findRules: async (_db, serviceId) => {
        calls.push(`rules ${serviceId}`)
        // Days off in 1999, under an ID drawn at random: no period in these answers, but the
        // process-wide cache of open minutes (keyed by the rule rows) cannot answer from an earlier run.
        const inert = ruleRow({ id: 1000 + Math.floor(Math.random() * 1e9), service_id: 0, rule_type: 'date', weekday: null, date_from: '1999-01-01', time_from: null, time_to: null })
        return [...(setup.rules ?? []), inert].filter((rule) => serviceId === undefined || rule.service_id === serviceId || rule.service_id === 0)
      },
      findAllServices: async () => {
        calls.push('services')
        return services
      },
    }
    const params = 'parsed' in query && typeof query.parsed === 'object' ? query.parsed : parseParams(summaryParams, query)
    const answer = await answerSummary(db, pool, params, {
      zone: berlin, now: Date.UTC(2026, 10, 22, 23, 30), maxRangeDays: setup.maxRangeDays ?? 731,
      problems: setup.problems ?? new RuleProblemLog(warnings().log),
    }, queries)
    return { calls, answer }
  }

  const november = { serviceId: undefined, bookingDate: { from: '2026-11-01', to: '2026-11-30' } }

  it('counts this month of the site\'s zone by default, over every published service and any other with a booking', async () => {
    const rows = [summaryRow({ service_id: 12, bookings: 2, booked_seconds: 7200 }), summaryRow({ day: '2026-11-06', service_id: 99 })]
    const { calls, answer } = await summary({ group_by: 'service,month' }, { rows })
    expect(calls).to.deep.equal([
      `rows ${JSON.stringify({ filter: november, dateOf: 'booking_date', byStatus: false, blocking: ['pending', 'booked', 'completed'] })}`, 'rules undefined', 'services',
    ])
    // 14 is a draft without bookings; 99's post is gone, so it has no slug. 30 days of 1,440 open minutes each.
    const month = { period_start: '2026-11-01', period_end: '2026-11-30' }
    expect(answer).to.deep.equal({
      groups: [
        { ...month, service_id: 12, service_slug: 'haircut', bookings: 2, all_day_bookings: 0, booked_minutes: 120, blocked_minutes: 120, open_minutes: 43200, occupancy: 0.0028 },
        { ...month, service_id: 15, service_slug: '42', bookings: 0, all_day_bookings: 0, booked_minutes: 0, blocked_minutes: 0, open_minutes: 43200, occupancy: 0 },
        { ...month, service_id: 99, service_slug: null, bookings: 1, all_day_bookings: 0, booked_minutes: 60, blocked_minutes: 60, open_minutes: 43200, occupancy: 0.0014 },
      ],
      totals: { bookings: 3, all_day_bookings: 0, booked_minutes: 180, blocked_minutes: 180, open_minutes: 129600, occupancy: 0.0014 },
      start: '2026-11-01', end: '2026-11-30', timezone: 'Europe/Berlin', group_by: ['month', 'service'], filter_by: 'booking_date', blocking: ['pending', 'booked', 'completed'],
    })
  })

  it('lists the services of the answer by ascending ID, and each row in the group of its period and service', async () => {
    // 12 and 15 are published; 13 (no post) and 11 come from the rows.
    const rows = [summaryRow({ day: '2026-11-10', service_id: 15, bookings: 3 }), summaryRow({ day: '2026-11-03', service_id: 13 }), summaryRow({ day: '2026-11-12', service_id: 11 })]
    const { answer } = await summary({ start: '2026-11-02', end: '2026-11-15', group_by: 'week,service' }, { rows })
    expect(answer.groups.map((group) => [group.period_start, group.service_id, group.bookings])).to.deep.equal([
      ['2026-11-02', 11, 0], ['2026-11-02', 12, 0], ['2026-11-02', 13, 1], ['2026-11-02', 15, 0],
      ['2026-11-09', 11, 1], ['2026-11-09', 12, 0], ['2026-11-09', 13, 0], ['2026-11-09', 15, 3],
    ])
  })

  it('counts one service, named by slug or ID, with its own rules and the site-wide ones', async () => {
    const rules = [
      ruleRow({ id: 1, service_id: 12 }),
      ruleRow({ id: 2, service_id: 0, time_from: '08:00:00', time_to: '09:00:00' }),
      ruleRow({ id: 3, service_id: 15, time_from: '00:00:00', time_to: '24:00:00' }),
    ]
    const day = { start: '2026-11-23', end: '2026-11-23', group_by: 'service', status: 'booked' }
    const bySlug = await summary({ ...day, service: 'haircut' }, { rules, rows: [summaryRow({ day: '2026-11-23' })] })
    expect(bySlug.calls).to.deep.equal([
      'bySlug haircut',
      `rows ${JSON.stringify({ filter: { serviceId: 12, statuses: ['booked'], bookingDate: { from: '2026-11-23', to: '2026-11-23' } }, dateOf: 'booking_date', byStatus: false, blocking: ['pending', 'booked', 'completed'] })}`,
      'rules 12',
    ])
    // Monday 23 November: 09:00-10:00 of its own and 08:00-09:00 site-wide are closed.
    expect(bySlug.answer.groups).to.deep.equal([{
      service_id: 12, service_slug: 'haircut',
      bookings: 1, all_day_bookings: 0, booked_minutes: 60, blocked_minutes: 60, open_minutes: 1320, occupancy: 0.0455,
    }])
    const byId = await summary({ ...day, service: '12' }, { rules })
    expect(byId.calls[0]).to.equal('byId 12')
    expect(byId.answer.totals.open_minutes).to.equal(1320)
    const all = await summary({ start: '2026-11-23', end: '2026-11-23', group_by: 'service' }, { rules })
    expect(all.answer.groups.map((group) => [group.service_id, group.open_minutes])).to.deep.equal([[12, 1320], [15, 0]])
  })

  it('reads start_of_week only for weeks, and starts each week on that day', async () => {
    const sunday = await summary({ start: '2026-11-01', end: '2026-11-14', group_by: 'week' }, { startOfWeek: '0' })
    expect(sunday.calls[0]).to.equal('start_of_week')
    expect(sunday.answer.groups.map((group) => [group.period_start, group.period_end])).to.deep.equal([
      ['2026-11-01', '2026-11-07'], ['2026-11-08', '2026-11-14'],
    ])
    const monday = await summary({ start: '2026-11-01', end: '2026-11-14', group_by: 'week' }, { startOfWeek: undefined })
    expect(monday.answer.groups.map((group) => [group.period_start, group.period_end])).to.deep.equal([
      ['2026-11-01', '2026-11-01'], ['2026-11-02', '2026-11-08'], ['2026-11-09', '2026-11-14'],
    ])
    const days = await summary({ start: '2026-11-01', end: '2026-11-02', group_by: 'day' })
    expect(days.calls).to.not.include('start_of_week')
  })

  it('gives no open minutes by the day bookings were made, nor by status', async () => {
    const created = await summary({ filter_by: 'created_date' }, { rows: [summaryRow({})] })
    expect(created.calls[0]).to.equal(`rows ${JSON.stringify({
      filter: { serviceId: undefined, createdAt: { from: '2026-11-01 00:00:00', to: '2026-11-30 23:59:59' } }, dateOf: 'created_date', byStatus: false, blocking: ['pending', 'booked', 'completed'],
    })}`)
    expect([created.answer.filter_by, created.answer.groups[0]!.open_minutes, created.answer.totals]).to.deep.equal([
      'created_date', null, { bookings: 1, all_day_bookings: 0, booked_minutes: 60, blocked_minutes: 60, open_minutes: null, occupancy: null },
    ])
    const rows = [summaryRow({ status: 'Booked ' }), summaryRow({ status: 'pending', bookings: 2, booked_seconds: 1800 })]
    const byStatus = await summary({ group_by: 'status' }, { rows })
    expect(byStatus.calls[0]).to.equal(`rows ${JSON.stringify({ filter: november, dateOf: 'booking_date', byStatus: true, blocking: ['pending', 'booked', 'completed'] })}`)
    expect(byStatus.answer.group_by).to.deep.equal(['status'])
    expect(byStatus.answer.groups.map((group) => [group.status, group.bookings, group.booked_minutes, group.open_minutes])).to.deep.equal([
      ['booked', 1, 60, null], ['pending', 2, 30, null],
    ])
  })

  it('blocking: given, the statuses the query counts blocked time of, and the answer names them; occupancy from blocked_minutes', async () => {
    const rows = [summaryRow({ bookings: 3, booked_seconds: 3 * 3600, blocked_seconds: 3600 })]
    const { calls, answer } = await summary({ blocking: 'Booked,completed' }, { rows })
    expect(calls[0]).to.equal(`rows ${JSON.stringify({ filter: november, dateOf: 'booking_date', byStatus: false, blocking: ['booked', 'completed'] })}`)
    expect(answer.blocking).to.deep.equal(['booked', 'completed'])
    expect(answer.totals).to.deep.include({ booked_minutes: 180, blocked_minutes: 60 })
    expect(answer.totals.occupancy).to.equal(occupancyOf(60, answer.totals.open_minutes))
  })

  it('skips a rule that makes no sense and logs it once', async () => {
    const { logged, log } = warnings()
    const rules = [ruleRow({ id: 7, service_id: 0, weekday: 9 }), ruleRow({ id: 1, service_id: 0 })]
    const { answer } = await summary({ start: '2026-11-23', end: '2026-11-23' }, { rules, problems: new RuleProblemLog(log) })
    // 12 and 15 are published: each has 1,440 minutes but the site-wide hour.
    expect(answer.totals.open_minutes).to.equal(2 * 1380)
    expect(logged).to.deep.equal([[{ ruleId: 7, problem: 'a weekly rule needs a weekday from 0 to 6' }, 'skipped a disabled-time rule that makes no sense']])
  })

  it('refuses a range it cannot serve before any query, naming the parameter', async () => {
    const groupBy = { period: 'month', service: false, status: false } as const
    // The parameters' own check refuses this first; the answer checks again for any other caller.
    const backwards = await refusal(() => summary({ parsed: { start: '2026-12-02', end: '2026-12-01', filter_by: 'booking_date', group_by: groupBy } }))
    expect([backwards.status, backwards.code, backwards.extra.params]).to.deep.equal([
      400, 'rest_invalid_param', { start: 'start must not be after end (2026-12-02 is after 2026-12-01).' },
    ])
    const year = 'The range from 2026-01-01 to 2026-12-31 spans 365 days; at most 31 are allowed. Choose a later start or an earlier end.'
    expect((await refusal(() => summary({ start: '2026-01-01', end: '2026-12-31' }, { maxRangeDays: 31 }))).extra.params).to.deep.equal({ end: year })
    const month = 'The range from 2026-01-01 to 2026-01-31 spans 31 days; at most 30 are allowed. Choose a later start or an earlier end.'
    expect((await refusal(() => summary({ start: '2026-01-01' }, { maxRangeDays: 30 }))).extra.params).to.deep.equal({ start: month })
  })
})
