import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import type { QueryLimits } from '../../shared/clickhouse/query-limits.ts'
import { SORT_COLUMNS, type SortField } from '../../shared/clickhouse/request-table.ts'
import type { Config } from '../../shared/config.ts'
import { AppError, notFound } from '../../shared/errors.ts'
import type { EventPublisher } from '../../shared/events/transport.ts'
import { compileRequestFilter } from '../../shared/filters/compile.ts'
import { filterNode } from '../../shared/filters/schema.ts'
import type { Logger } from '../../shared/logger.ts'
import { principalOf } from '../http/auth.ts'
import { cursorAfter, cursorInput, decodeCursor } from '../http/cursor.ts'
import { envelope, ok, pageEnvelope, responses } from '../http/envelope.ts'
import { uuidInput } from '../http/inputs.ts'
import { documentedAs } from '../http/openapi.ts'
import { type PageBounds, pageFields, pageOf } from '../http/paging.ts'
import type { QueryGate } from '../http/query-gate.ts'
import type { OrganizationRateLimits } from '../http/rate-limit.ts'
import { heliconeRoutes } from './helicone.ts'
import { intakeEvent } from './intake.ts'
import { keyOf, sortKey } from './keyset.ts'
import { loadPriceTable, modelPrice, type PriceTable } from './prices.ts'
import { columnsFor, RECORD_FIELDS, requestRecord, toRecord } from './record.ts'
import { createRequestRepo, type RequestRepo } from './repo.ts'
import { createIntake, type Intake } from './service.ts'

interface RequestRouteDeps {
  repo: RequestRepo
  gate: QueryGate
  intake: Intake
  prices: PriceTable
  maxEvents: number
  maxBytes: number
}

/** The request repository, the price table and the intake every intake route shares. */
export function requestServices(deps: {
  log: Logger
  config: Config
  clickhouse: ClickHouseClient
  limits: QueryLimits
  publisher: EventPublisher
  quota: OrganizationRateLimits
}) {
  const repo = createRequestRepo(deps.clickhouse, deps.limits)
  const prices = loadPriceTable()
  const intake = createIntake({
    repo,
    publisher: deps.publisher,
    prices,
    log: deps.log,
    lookupTimeoutMs: deps.config.TALLY_INTAKE_LOOKUP_TIMEOUT,
    countEvents: deps.quota.events,
  })
  return { repo, prices, intake }
}

/** Intake (Tally's and Helicone's), request query and GET, and the model price list. */
export function requestRoutes(
  deps: { config: Config; gate: QueryGate } & ReturnType<typeof requestServices>,
): FastifyPluginAsyncZod {
  const { repo, prices, intake } = deps
  const maxBytes = deps.config.TALLY_INTAKE_MAX_BYTES
  return async (app) => {
    await app.register(
      tallyRoutes({
        repo,
        gate: deps.gate,
        intake,
        prices,
        maxEvents: deps.config.TALLY_INTAKE_MAX_EVENTS,
        maxBytes,
      }),
    )
    await app.register(heliconeRoutes({ intake, maxBytes }))
  }
}

const tooLarge = (message: string) => new AppError(413, 'payload_too_large', message)

const sortFields = Object.keys(SORT_COLUMNS) as [SortField, ...SortField[]]

/** 10 unless asked, at most 1000; deeper than 1,000,000 rows pages by cursor. */
const REQUEST_PAGES: PageBounds = { defaultLimit: 10, maxLimit: 1000, maxOffset: 1_000_000 }

const queryBody = z
  .strictObject({
    filter: filterNode
      .default({})
      .describe(
        'Filter node (spec 2.7): {} or "all", a leaf, or {left, operator, right}; see docs/requests.md',
      ),
    ...pageFields(REQUEST_PAGES, false),
    sort: z
      .partialRecord(z.enum(sortFields, `must be one of ${sortFields.join(', ')}`), z.enum(['asc', 'desc']))
      .refine((s) => Object.keys(s).length <= 1, 'must name at most one field')
      .default({ created_at: 'desc' })
      .describe('One field mapped to asc or desc; default {created_at: "desc"}'),
    includeBody: z.boolean().default(false).describe('Include request_body and response_body'),
    cursor: cursorInput.optional(),
    fields: z
      .array(z.enum(RECORD_FIELDS, `must be fields of a request record: ${RECORD_FIELDS.join(', ')}`))
      .min(1, 'must name at least one field')
      .max(RECORD_FIELDS.length, `must name at most ${RECORD_FIELDS.length} fields`)
      .refine((f) => new Set(f).size === f.length, 'must not name a field twice')
      .optional()
      .describe('Only these fields of each request (bodies only if named here); default: all but the bodies'),
  })
  .refine((b) => b.fields === undefined || !b.includeBody, {
    message: 'must be left out with fields: name request_body or response_body in fields',
    path: ['includeBody'],
  })

const idParams = z.object({ id: uuidInput })

const logEvents = z.array(intakeEvent).min(1, 'must hold at least one event')
const logEvent = intakeEvent.meta({ id: 'LogEvent' })

// Accepts one event, an array of events, or {events: [...]}; always validated as {events}.
const logBody = documentedAs(
  z.preprocess(
    (body) =>
      Array.isArray(body)
        ? { events: body }
        : typeof body === 'object' && body !== null && 'events' in body
          ? body
          : { events: [body] },
    z.strictObject({ events: logEvents }),
  ),
  z.union([logEvent, z.array(logEvent).min(1), z.strictObject({ events: z.array(logEvent).min(1) })]),
)

function tallyRoutes(deps: RequestRouteDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/v1/request/log', {
      bodyLimit: deps.maxBytes,
      config: { takesEvents: true },
      schema: {
        tags: ['requests'],
        operationId: 'logRequests',
        summary: 'Log one processed model request or a batch; 201 once they are durable',
        description: `One event, an array of events, or {events: [...]}; at most ${deps.maxEvents} events and ${deps.maxBytes} bytes (413 beyond).`,
        body: logBody,
        response: responses({ 201: envelope(z.object({ request_ids: z.array(z.uuid()) })) }, { body: true }),
      },
      preValidation: async (request) => {
        // Counted before validation so that an oversized batch is a 413, not 1000 field errors.
        const body = request.body as { events?: unknown } | unknown[]
        const n = Array.isArray(body) ? body.length : Array.isArray(body?.events) ? body.events.length : 1
        if (n > deps.maxEvents) {
          throw tooLarge(`body.events: at most ${deps.maxEvents} events per request, got ${n}`)
        }
      },
      handler: async (request, reply) => {
        const { organizationId } = principalOf(request)
        const ids = await deps.intake(organizationId, request.body.events)
        return reply.code(201).send(ok({ request_ids: ids }))
      },
    })

    app.post('/v1/request/query', {
      schema: {
        tags: ['requests'],
        operationId: 'queryRequests',
        summary: "Query the organization's requests with a filter tree, sorted and paged",
        description:
          'Pages by `offset` or, for deep paging, by `cursor`: every answer carries `next_cursor`, the position after its last row (docs/requests.md).',
        body: queryBody,
        response: responses(
          {
            200: pageEnvelope(
              z.array(
                requestRecord.partial().describe('Every field but the bodies, or those `fields` names'),
              ),
            ),
          },
          { body: true, query: true },
        ),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const { filter, sort, includeBody, cursor, fields } = request.body
        const { offset, limit } = pageOf(request.body, 'body', { cursor, maxOffset: REQUEST_PAGES.maxOffset })
        const [field, direction] = (Object.entries(sort)[0] ?? ['created_at', 'desc']) as [
          SortField,
          'asc' | 'desc',
        ]
        const key = sortKey(field, direction)
        const sorted = `${field}:${direction}`
        const after = cursor
          ? decodeCursor(cursor, {
              organizationId,
              sort: sorted,
              value: key.value,
              id: z.guid(),
              path: 'body.cursor',
            })
          : undefined
        const compiled = compileRequestFilter(filter, {
          path: 'body.filter',
          organization: '{organization_id:UUID}',
        })
        return deps.gate.run(organizationId, async () => {
          const page = await deps.repo.query({
            organizationId,
            filter: compiled,
            sort: { field, direction },
            offset,
            limit,
            columns: columnsFor(fields, includeBody),
            ...(after ? { after } : {}),
          })
          const next = cursorAfter(organizationId, sorted, page, limit, (row) => keyOf(key, row))
          return { ...ok(page.map((row) => toRecord(row, fields))), next_cursor: next }
        })
      },
    })

    app.get('/v1/request/:id', {
      schema: {
        tags: ['requests'],
        operationId: 'getRequest',
        summary: 'One request with its bodies',
        params: idParams,
        response: responses({ 200: envelope(requestRecord) }, { query: true, refuses: [404] }),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        return deps.gate.run(organizationId, async () => {
          const row = await deps.repo.get(organizationId, request.params.id)
          if (!row) throw notFound('Request not found')
          return ok(toRecord(row))
        })
      },
    })

    app.get('/v1/models', {
      schema: {
        tags: ['models'],
        operationId: 'listModels',
        summary: 'The model price table behind cost_usd (USD per 1M tokens)',
        response: responses({
          200: envelope(
            z.object({
              currency: z.string(),
              unit: z.string(),
              as_of: z.string(),
              sources: z.record(z.string(), z.string()),
              models: z.array(modelPrice),
            }),
          ),
        }),
      },
      handler: async () => {
        const { currency, unit, as_of, sources, models } = deps.prices
        return ok({ currency, unit, as_of, sources, models })
      },
    })
  }
}
