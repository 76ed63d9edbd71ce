import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Config } from '../../shared/config.ts'
import { badRequest, conflict, notFound } from '../../shared/errors.ts'
import { parseFilter } from '../../shared/filters/parse.ts'
import type { Sql } from '../../shared/postgres.ts'
import { literalHostProblem } from '../../shared/webhooks/address-guard.ts'
import { attemptDelivery } from '../../shared/webhooks/attempt.ts'
import { createDeliveryRepo } from '../../shared/webhooks/deliveries.ts'
import { webhookFilterProblem } from '../../shared/webhooks/filter.ts'
import {
  buildPayload,
  DEFAULT_WEBHOOK_EVENTS,
  testEvent,
  WEBHOOK_EVENTS,
  type WebhookEvent,
} from '../../shared/webhooks/payload.ts'
import { createSender } from '../../shared/webhooks/sender.ts'
import { principalOf } from '../http/auth.ts'
import { postgresPaging } from '../http/cursor.ts'
import { envelope, ok, pageEnvelope, responses } from '../http/envelope.ts'
import { pageOf } from '../http/paging.ts'
import { createWebhookRepo } from './repo.ts'
import {
  createBody,
  createdWebhook,
  delivery,
  deliveryParams,
  idParams,
  pageQuery,
  rotatedKey,
  testResult,
  type WebhookRow,
  webhook,
} from './schemas.ts'

const webhookNotFound = () => notFound('Webhook not found')
/** A route about one webhook, which may not exist (or be another organization's). */
const lookup = { refuses: [404] } as const

function present(row: WebhookRow): z.output<typeof webhook> {
  // An event a later Tally added is not one this version sends.
  const events = row.events.filter((e): e is WebhookEvent =>
    (WEBHOOK_EVENTS as readonly string[]).includes(e),
  )
  const isDefault =
    events.length === DEFAULT_WEBHOOK_EVENTS.length && events.every((e, i) => e === DEFAULT_WEBHOOK_EVENTS[i])
  return {
    id: row.id,
    destination: row.destination,
    config: {
      // Shown when not the default, as filter is when there is one: a webhook made before events
      // existed reads as it did.
      ...(isDefault ? {} : { events }),
      sampleRate: row.sample_rate,
      propertyFilters: row.property_filters,
      ...(row.filter_tree === null || row.filter_tree === undefined ? {} : { filter: row.filter_tree }),
    },
    includeData: row.include_data,
    state: row.state,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at,
  }
}

export function webhookRoutes(deps: { sql: Sql; config: Config }): FastifyPluginAsyncZod {
  return async (app) => {
    const repo = createWebhookRepo(deps.sql)
    const deliveries = createDeliveryRepo(deps.sql)
    const sender = createSender({
      allowPrivateNetworks: deps.config.TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      connectionsPerDestination: 4,
      caFile: deps.config.TALLY_WEBHOOK_CA_FILE,
    })
    app.addHook('onClose', () => sender.close())

    const owned = async (organizationId: string, id: string) => {
      const row = await repo.get(organizationId, id)
      if (!row) throw webhookNotFound()
      return row
    }

    app.post('/v1/webhooks', {
      schema: {
        tags: ['webhooks'],
        operationId: 'createWebhook',
        summary: 'Register a webhook. hmac_key is in this answer and never again.',
        description: `An organization holds at most ${deps.config.TALLY_MAX_WEBHOOKS_PER_ORG} webhooks (409 beyond).`,
        body: createBody,
        response: responses({ 201: envelope(createdWebhook) }, { body: true, refuses: [409] }),
      },
      handler: async (request, reply) => {
        const { organizationId } = principalOf(request)
        const { destination, config, includeData } = request.body
        const refused = deps.config.TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS
          ? undefined
          : literalHostProblem(destination)
        if (refused) throw badRequest(`body.destination: ${refused}`)
        // The query language's own checks, request-level only, and a webhook's bounds: a 400
        // naming the place.
        if (config.filter !== undefined) {
          const problem = webhookFilterProblem(parseFilter(config.filter, { path: 'body.config.filter' }))
          if (problem) throw badRequest(problem)
        }
        const max = deps.config.TALLY_MAX_WEBHOOKS_PER_ORG
        const created = await repo.createCapped(
          {
            organizationId,
            destination,
            includeData,
            events: config.events,
            sampleRate: config.sampleRate,
            propertyFilters: config.propertyFilters,
            filter: config.filter,
          },
          max,
        )
        if ('held' in created) {
          throw conflict(
            `This organization already holds ${created.held} webhooks, the most it may (TALLY_MAX_WEBHOOKS_PER_ORG); delete one first`,
          )
        }
        return reply.code(201).send(ok({ ...present(created.webhook), hmac_key: created.hmacKey }))
      },
    })

    app.get('/v1/webhooks', {
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhooks',
        summary: "List the organization's webhooks (never their keys)",
        response: responses({ 200: envelope(z.array(webhook)) }),
      },
      handler: async (request) => ok((await repo.list(principalOf(request).organizationId)).map(present)),
    })

    app.delete('/v1/webhooks/:id', {
      schema: {
        tags: ['webhooks'],
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook; deliveries stop at once, in-flight ones may land',
        params: idParams,
        response: responses({ 200: envelope(z.null()) }, lookup),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        if (!(await repo.delete(organizationId, request.params.id))) throw webhookNotFound()
        return ok(null)
      },
    })

    app.post('/v1/webhooks/:id/test', {
      schema: {
        tags: ['webhooks'],
        operationId: 'testWebhook',
        summary: 'Send a test event (metadata.event "webhook.test") now and report what happened',
        params: idParams,
        response: responses({ 200: envelope(testResult) }, lookup),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const row = await owned(organizationId, request.params.id)
        const requestId = randomUUID()
        const event = testEvent(organizationId, requestId, new Date())
        const delivery = {
          id: randomUUID(),
          webhookId: row.id,
          requestId,
          body: buildPayload(event, row.include_data, 'webhook.test'),
        }
        const keys = await repo.activeKeys(row.id)
        // Deleted since it was looked up: its keys went with it.
        if (keys.length === 0) throw webhookNotFound()
        const attempt = await attemptDelivery(sender, { destination: row.destination, keys }, delivery)
        // Deleted while the test was sent: nothing to record it under.
        if (!(await deliveries.recordTest(delivery, attempt))) throw webhookNotFound()
        const { result } = attempt
        return ok({
          delivery_id: delivery.id,
          delivered: result.ok,
          status: result.status,
          duration_ms: result.durationMs,
          error: result.error,
        })
      },
    })

    app.get('/v1/webhooks/:id/deliveries', {
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: "The webhook's deliveries, newest first, with their last attempt",
        description: 'Pages by offset, or by cursor: pass the next_cursor of the previous answer.',
        params: idParams,
        querystring: pageQuery,
        response: responses({ 200: pageEnvelope(z.array(delivery)) }, lookup),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const { cursor, status } = request.query
        const { offset, limit } = pageOf(request.query, 'querystring', { cursor })
        // A cursor is bound to the webhook's list as well as the organization.
        const paging = postgresPaging(
          organizationId,
          `webhooks/${request.params.id}/deliveries`,
          'querystring.cursor',
        )
        const after = paging.after(cursor)
        const row = await owned(organizationId, request.params.id)
        return paging.page(await repo.listDeliveries(row.id, { offset, limit, status, after }), limit)
      },
    })

    app.post('/v1/webhooks/:id/deliveries/:deliveryId/retry', {
      schema: {
        tags: ['webhooks'],
        operationId: 'retryWebhookDelivery',
        summary: 'Make a delivery due now with a fresh retry schedule (re-enables a webhook disabled by 410)',
        params: deliveryParams,
        response: responses({ 200: envelope(delivery) }, lookup),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const row = await owned(organizationId, request.params.id)
        const retried = await repo.retryDelivery(organizationId, row.id, request.params.deliveryId)
        if (!retried) throw notFound('Delivery not found')
        return ok(retried)
      },
    })

    app.post('/v1/webhooks/:id/rotate-key', {
      schema: {
        tags: ['webhooks'],
        operationId: 'rotateWebhookKey',
        summary:
          'Issue a new hmac_key; the old one keeps signing beside it for 24 h, during which another rotation is refused (409)',
        params: idParams,
        response: responses({ 200: envelope(rotatedKey) }, { refuses: [404, 409] }),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const rotated = await repo.rotateKey(organizationId, request.params.id)
        if (!rotated) throw webhookNotFound()
        if (!rotated.rotated)
          throw conflict(
            `Key rotation refused: the previous key keeps signing until ${rotated.overlapEndsAt.toISOString()}; ` +
              'rotate again after that, once your receiver has the current key',
          )
        return ok({
          id: request.params.id,
          hmac_key: rotated.hmacKey,
          previous_key_expires_at: rotated.previousKeyExpiresAt,
        })
      },
    })
  }
}
