// What answerSlots, answerDisabledTime and resolveService decide, with the db/
// functions they call replaced by rows in memory. These tests check the
// decisions (which query, which order, which page, which error); the queries
// themselves run over MariaDB in tests/integration.
import { expect } from 'chai'
import type { Logger } from 'pino'
import type { BookingFilter, BookingOrder, BookingRow } from '../../db/bookings.ts'
import type { Db } from '../../db/connect.ts'
import type { RuleRow } from '../../db/disabled-times.ts'
import type { ServiceRow } from '../../db/services.ts'
import { readSnapshot, type Snapshot } from '../../db/snapshot.ts'
import { countBookings, findBookingsPage, findFirstBookings, streamBookings } from '../../db/bookings.ts'
import { findAllServices, findServiceById, findServiceBySlug } from '../../db/services.ts'
import { findRules } from '../../db/disabled-times.ts'
import { RestError } from '../../server/errors.ts'
import { parseParams } from '../../server/http/params.ts'
import { answerDisabledTime, disabledTimeQueries, RuleProblemLog, type DisabledTimeQueries } from '../../server/domain/disabled-time.ts'
import { resolveService, serviceLookups as dbServiceLookups, type ServiceLookups } from '../../server/domain/services.ts'
import { answerSlots, slotsQueries as dbSlotsQueries, SMALL_ANSWER_ROWS, type SlotsAnswer, type SlotsQueries } from '../../server/domain/slots.ts'
import { disabledTimeParams } from '../../server/routes/disabled-time.ts'
import { slotsParams } from '../../server/routes/slots.ts'

const db = {} as Db
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
function slotsQueries(rows: BookingRow[], calls: string[]): SlotsQueries {
  const snapshot = {} as Snapshot
  const describe = (filter: BookingFilter) => JSON.stringify(filter)
  return {
    ...serviceLookups(calls),
    readSnapshot: async (_pool, work) => {
      calls.push('snapshot')
      return await work(snapshot)
    },
    countBookings: async (_db, given, filter) => {
      expect(given).to.equal(snapshot)
      calls.push(`count ${describe(filter)}`)
      return rows.length
    },
    streamBookings: (_db, given, filter, order: BookingOrder, timeoutMs) => {
      expect(given).to.equal(snapshot)
      calls.push(`stream ${describe(filter)} ${order} ${timeoutMs}`)
      return (async function* () {
        for (let i = 0; i < rows.length; i += 2) yield rows.slice(i, i + 2)
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
  }
}

interface Sent {
  total: number
  paging: SlotsAnswer['paging']
  grouped: boolean
  /** Each batch as the IDs of its records. */
  batches: number[][]
}

async function slots(query: Record<string, string>, rows: BookingRow[], options: { grouped?: boolean } = {}) {
  const calls: string[] = []
  let sent: Sent | undefined
  await answerSlots(db, {} as never, parseParams(slotsParams, query), {
    zone: berlin, exposeCustomer: false, grouped: options.grouped ?? false, queryTimeoutMs: 1234,
  }, async (answer) => {
    const batches: number[][] = []
    for await (const batch of answer.batches) batches.push(batch.map((record) => record.id))
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
    expect(dbSlotsQueries).to.deep.equal({ findServiceById, findServiceBySlug, readSnapshot, countBookings, streamBookings, findBookingsPage, findFirstBookings })
    expect(disabledTimeQueries).to.deep.equal({ findServiceById, findServiceBySlug, findRules, findAllServices })
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

  it('streams from a snapshot when the narrow filter matches more than SMALL_ANSWER_ROWS', async () => {
    const rows = ids(1, SMALL_ANSWER_ROWS + 1).map((id) => booking(id))
    const { calls, sent } = await slots({ service: '12' }, rows, { grouped: true })
    expect(calls).to.deep.equal([
      `first {"serviceId":12} service ${SMALL_ANSWER_ROWS + 1}`,
      'snapshot',
      'count {"serviceId":12}',
      'stream {"serviceId":12} service 1234',
    ])
    expect(sent!.total).to.equal(SMALL_ANSWER_ROWS + 1)
    expect(sent!.paging).to.equal(undefined)
    expect(sent!.grouped).to.equal(true)
    expect(sent!.batches.flat()).to.deep.equal(rows.map((row) => row.id))
  })

  it('streams a wide filter from a snapshot straight away, in batches', async () => {
    const { calls, sent } = await slots({}, [booking(1), booking(2), booking(3)])
    expect(calls).to.deep.equal(['snapshot', 'count {}', 'stream {} booking 1234'])
    expect(sent).to.deep.equal({ total: 3, paging: undefined, grouped: false, batches: [[1, 2], [3]] })
  })

  it('reads one page in booking order, with the count, in one snapshot', async () => {
    const rows = ids(1, 5).map((id) => booking(id))
    const { calls, sent } = await slots({ service: '12', per_page: '2', page: '2' }, rows)
    expect(calls).to.deep.equal(['byId 12', 'snapshot', 'count {"serviceId":12}', 'page {"serviceId":12} 2 2'])
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
    expect(calls).to.deep.equal(['snapshot', 'count {}'])
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
    expect(calls).to.deep.equal(['bySlug haircut', 'rules 12', 'services'])
    expect(answer).to.deep.equal({
      disabled_times: [
        { rule_id: 2, service_id: null, service_slug: null, type: 'weekly', start: '2026-11-23T08:00:00+01:00', end: '2026-11-23T09:00:00+01:00', all_day: false, note: '' },
        { rule_id: 1, service_id: 12, service_slug: 'haircut', type: 'weekly', start: '2026-11-23T09:00:00+01:00', end: '2026-11-23T10:00:00+01:00', all_day: false, note: '' },
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
