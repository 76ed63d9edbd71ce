import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import type { QueryLimits } from '../../shared/clickhouse/query-limits.ts'
import type { Config } from '../../shared/config.ts'
import { badRequest, conflict, notFound } from '../../shared/errors.ts'
import type { EventPublisher } from '../../shared/events/transport.ts'
import type { Logger } from '../../shared/logger.ts'
import type { Sql } from '../../shared/postgres.ts'
import { principalOf } from '../http/auth.ts'
import { cursorAfter, cursorInput, decodeCursor } from '../http/cursor.ts'
import { envelope, ok, pageEnvelope, responses } from '../http/envelope.ts'
import type { QueryGate } from '../http/query-gate.ts'
import type { OrganizationRateLimits } from '../http/rate-limit.ts'
import { createScoreConfigs } from './configs.ts'
import { createScoreRepo, type StoredScore } from './repo.ts'
import {
  acceptedScore,
  acceptedScores,
  createScoreBody,
  createScoresBody,
  FEEDBACK,
  feedbackBody,
  heliconeScoresBody,
  listScoresQuery,
  MAX_CONFIGS,
  MAX_SCORES_PER_BATCH,
  MAX_SCORES_PER_CALL,
  propertyBody,
  requestIdParams,
  score,
  scoreConfig,
  scoreConfigBody,
  scoreIdParams,
  scoreName,
} from './schemas.ts'
import { createScoreService, MAX_MAGNITUDE, type ScoreInput } from './service.ts'

const present = (s: StoredScore): z.output<typeof score> => ({
  id: s.id,
  target: s.target,
  name: s.name,
  value: s.value,
  data_type: s.data_type,
  source: s.source,
  comment: s.comment,
  created_at: s.created_at,
  status: s.status,
})

const LIST_SORT = 'scores:created_at:desc'

/** A config's own rules: min and max for numeric, categories for (and only for) categorical. */
function configProblem(body: z.output<typeof scoreConfigBody>): string | undefined {
  const { data_type: type, min, max, categories } = body
  if (type !== 'numeric' && (min !== undefined || max !== undefined))
    return `body.${min !== undefined ? 'min' : 'max'}: only a numeric config has a range`
  for (const [field, bound] of [
    ['min', min],
    ['max', max],
  ] as const)
    if (bound !== undefined && Math.abs(bound) > MAX_MAGNITUDE)
      return `body.${field}: must be between -${MAX_MAGNITUDE} and ${MAX_MAGNITUDE}`
  if (min !== undefined && max !== undefined && min > max) return 'body.min: must be at most body.max'
  if (type === 'categorical' && !categories) return 'body.categories: is required for a categorical config'
  if (type !== 'categorical' && categories) return 'body.categories: only a categorical config has categories'
  if (categories && new Set(categories).size !== categories.length)
    return 'body.categories: must not repeat a category'
  if (body.name === FEEDBACK && type !== 'boolean')
    return `body.data_type: "${FEEDBACK}" is the feedback, always boolean`
  return undefined
}

/**
 * Scores, feedback and properties after the fact (docs/scores.md): Tally's own score API and
 * Helicone's shapes, score configs. Writes are durable (through the event topic) when answered and
 * show in queries within seconds; reads come from ClickHouse.
 */
export function scoreRoutes(deps: {
  sql: Sql
  log: Logger
  config: Config
  clickhouse: ClickHouseClient
  limits: QueryLimits
  gate: QueryGate
  publisher: EventPublisher
  quota: OrganizationRateLimits
}): FastifyPluginAsyncZod {
  return async (app) => {
    const configs = await createScoreConfigs(deps.sql, deps.log)
    app.addHook('onClose', () => configs.close())
    const service = createScoreService({
      publisher: deps.publisher,
      configs,
      log: deps.log,
      countEvents: deps.quota.events,
    })
    const repo = createScoreRepo(deps.clickhouse, deps.limits)
    const graceMs = deps.config.TALLY_SCORE_ORPHAN_GRACE
    const list = (
      organizationId: string,
      q: Omit<Parameters<typeof repo.list>[0], 'organizationId' | 'graceMs'>,
    ) => deps.gate.run(organizationId, () => repo.list({ ...q, organizationId, graceMs }))

    app.post('/v1/scores', {
      schema: {
        tags: ['scores'],
        operationId: 'createScore',
        summary: 'Set a score of a request or a session (upsert)',
        description:
          'Upserts by id, or by target, name and source when no id is given. Answered once durable; the score applies as soon as its request or session is stored, even if that comes later (docs/scores.md).',
        body: createScoreBody,
        response: responses({ 202: envelope(acceptedScore) }, { body: true }),
      },
      config: { takesEvents: true },
      handler: async (request, reply) => {
        const { organizationId } = principalOf(request)
        const [id] = await service.score(organizationId, [request.body], () => 'body.value')
        return reply.code(202).send(ok({ id: id as string, status: 'accepted' as const }))
      },
    })

    app.post('/v1/scores/batch', {
      schema: {
        tags: ['scores'],
        operationId: 'createScores',
        summary: 'Set many scores at once (upserts)',
        description: `Up to ${MAX_SCORES_PER_BATCH} scores, each as POST /v1/scores takes it: checked together, and taken together once durable (a 400 names the first bad one and takes none). For evaluators grading many requests: one call instead of one per score.`,
        body: createScoresBody,
        response: responses({ 202: envelope(acceptedScores) }, { body: true }),
      },
      config: { takesEvents: true },
      handler: async (request, reply) => {
        const { organizationId } = principalOf(request)
        const ids = await service.score(organizationId, request.body.scores, (i) => `body.scores.${i}.value`)
        return reply.code(202).send(ok({ ids, status: 'accepted' as const }))
      },
    })

    app.get('/v1/scores', {
      schema: {
        tags: ['scores'],
        operationId: 'listScores',
        summary: 'List scores, newest first, with their status',
        querystring: listScoresQuery.extend({ cursor: cursorInput.optional() }),
        response: responses({ 200: pageEnvelope(z.array(score)) }, { query: true }),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const { cursor, limit, request_id, session_id, ...rest } = request.query
        const after = cursor
          ? decodeCursor(cursor, {
              organizationId,
              sort: LIST_SORT,
              value: z.number().int(),
              id: z.uuid(),
              path: 'querystring.cursor',
            })
          : undefined
        const page = await list(organizationId, {
          ...rest,
          requestId: request_id,
          sessionId: session_id,
          limit,
          after,
        })
        return {
          ...ok(page.map(present)),
          next_cursor: cursorAfter(organizationId, LIST_SORT, page, limit, (s) => [s.createdMs, s.id]),
        }
      },
    })

    app.delete('/v1/scores/:id', {
      schema: {
        tags: ['scores'],
        operationId: 'deleteScore',
        summary: 'Delete a stored score',
        description:
          'A score can be deleted once GET /v1/scores shows it (404 before, and for another organization’s).',
        params: scoreIdParams,
        response: responses({ 200: envelope(z.null()) }, { query: true, refuses: [404] }),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const [stored] = await list(organizationId, { id: request.params.id, limit: 1 })
        if (!stored) throw notFound('Score not found')
        await service.remove(organizationId, stored)
        return ok(null)
      },
    })

    app.post('/v1/request/:id/score', {
      schema: {
        tags: ['scores'],
        operationId: 'addRequestScores',
        summary: "Set scores of a request (Helicone's shape)",
        description: `Each name in scores is a score of the request from source api (upserted). At most ${MAX_SCORES_PER_CALL} per call.`,
        params: requestIdParams,
        body: heliconeScoresBody,
        response: responses({ 200: envelope(z.null()) }, { body: true }),
      },
      config: { takesEvents: true },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const entries = Object.entries(request.body.scores)
        if (entries.length === 0) throw badRequest('body.scores: must name at least one score')
        if (entries.length > MAX_SCORES_PER_CALL)
          throw badRequest(`body.scores: must name at most ${MAX_SCORES_PER_CALL} scores`)
        const inputs: ScoreInput[] = entries.map(([name, value]) => {
          const checked = scoreName.safeParse(name)
          if (!checked.success)
            throw badRequest(
              `body.scores: key ${JSON.stringify(name.slice(0, 50))} ${checked.error.issues[0]?.message}`,
            )
          return { target: { request_id: request.params.id }, name, value, source: 'api' }
        })
        await service.score(organizationId, inputs, (i) => `body.scores.${entries[i]?.[0]}`)
        return ok(null)
      },
    })

    app.post('/v1/request/:id/feedback', {
      schema: {
        tags: ['scores'],
        operationId: 'addRequestFeedback',
        summary: "Rate a request (Helicone's shape): the boolean score named feedback",
        params: requestIdParams,
        body: feedbackBody,
        response: responses({ 200: envelope(z.null()) }, { body: true }),
      },
      config: { takesEvents: true },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const input: ScoreInput = {
          target: { request_id: request.params.id },
          name: FEEDBACK,
          value: request.body.rating,
          source: 'api',
        }
        await service.score(organizationId, [input], () => 'body.rating')
        return ok(null)
      },
    })

    app.put('/v1/request/:id/property', {
      schema: {
        tags: ['scores'],
        operationId: 'setRequestProperty',
        summary: "Add or change a custom property of a request after the fact (Helicone's shape)",
        description:
          'The latest value of a key wins over the one the request was logged with, in filters, exports and SQL; the stored request is not rewritten.',
        params: requestIdParams,
        body: propertyBody,
        response: responses({ 200: envelope(z.null()) }, { body: true }),
      },
      config: { takesEvents: true },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        await service.setProperty(organizationId, request.params.id, request.body.key, request.body.value)
        return ok(null)
      },
    })

    app.post('/v1/score-configs', {
      schema: {
        tags: ['scores'],
        operationId: 'createScoreConfig',
        summary: 'Declare what values a score name takes',
        description: `Scores of the name are checked against it from then on (400 otherwise). At most ${MAX_CONFIGS} per organization; a name has one config (409).`,
        body: scoreConfigBody,
        response: responses({ 201: envelope(scoreConfig) }, { body: true, refuses: [409] }),
      },
      handler: async (request, reply) => {
        const { organizationId } = principalOf(request)
        const problem = configProblem(request.body)
        if (problem) throw badRequest(problem)
        const created = await configs.create(organizationId, request.body, MAX_CONFIGS)
        if (created === null)
          throw conflict(`A score config named ${JSON.stringify(request.body.name)} exists`)
        if ('held' in created)
          throw conflict(`This organization already holds ${created.held} score configs, the most it may`)
        return reply.code(201).send(ok(created))
      },
    })

    app.get('/v1/score-configs', {
      schema: {
        tags: ['scores'],
        operationId: 'listScoreConfigs',
        summary: "The organization's score configs, by name",
        response: responses({ 200: envelope(z.array(scoreConfig)) }),
      },
      handler: async (request) => ok(await configs.list(principalOf(request).organizationId)),
    })

    app.delete('/v1/score-configs/:id', {
      schema: {
        tags: ['scores'],
        operationId: 'deleteScoreConfig',
        summary: 'Delete a score config; stored scores stay as they are',
        params: scoreIdParams,
        response: responses({ 200: envelope(z.null()) }, { refuses: [404] }),
      },
      handler: async (request) => {
        if (!(await configs.delete(principalOf(request).organizationId, request.params.id)))
          throw notFound('Score config not found')
        return ok(null)
      },
    })
  }
}
