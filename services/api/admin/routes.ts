import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { BlobStore } from '../../shared/blobs/blob-store.ts'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import type { RetentionKeeper } from '../../shared/clickhouse/retention.ts'
import { AppError, notFound } from '../../shared/errors.ts'
import type { Logger } from '../../shared/logger.ts'
import { LockWaitExceeded } from '../../shared/migrate.ts'
import type { Sql } from '../../shared/postgres.ts'
import type { Scratch } from '../../shared/scratch.ts'
import { adminAuthHook } from '../http/auth.ts'
import type { AuthFailureLimit } from '../http/auth-failures.ts'
import { envelope, ok, responses } from '../http/envelope.ts'
import { pageOf } from '../http/paging.ts'
import { rateLimitHook } from '../http/rate-limit.ts'
import type { RateLimiter } from '../http/rate-limiter.ts'
import type { ApiKeyRepo } from '../keys/interface.ts'
import { createOrganizationRepo } from './repo.ts'
import {
  createdOrganization,
  createOrganizationBody,
  organization,
  organizationChangeBody,
  organizationParams,
  organizationsQuery,
} from './schemas.ts'
import { createOrganizationService, type OrganizationServiceDeps } from './service.ts'

export interface AdminDeps {
  /** TALLY_ADMIN_API_KEY */
  adminKey: string
  /** Failed authentications per client address, shared with the organizations' routes. */
  authFailures: AuthFailureLimit
  rateLimitPerMinute: number
  rateLimiter: RateLimiter
  sql: Sql
  clickhouse: ClickHouseClient
  blobs: BlobStore
  log: Logger
  keys: ApiKeyRepo
  /** The exports' repository (exports/repo.ts), given in by app.ts: a deletion waits for them to stop. */
  exports: OrganizationServiceDeps['exports']
  forgetKey: (keyHashHex: string) => void
  /** TALLY_EXPORT_LEASE: how long a deletion waits at most for the organization's exports to stop. */
  exportLeaseMs: number
  scratch: Scratch
  /** Applies an organization's own retention to ClickHouse as it is recorded (clickhouse/retention.ts). */
  retention: RetentionKeeper
}

/** The admin's calls share one rate-limit window, apart from every organization key's. */
const ADMIN_RATE_LIMIT_KEY = 'instance-admin'

const security = [{ admin: [] }]

/** The instance-admin API (/admin/v1): organizations, for whoever runs this Tally. */
export function adminRoutes(deps: AdminDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const repo = createOrganizationRepo(deps.sql, deps.clickhouse)
    const service = createOrganizationService({
      repo,
      exports: deps.exports,
      blobs: deps.blobs,
      log: deps.log,
      forgetKey: deps.forgetKey,
      exportLeaseMs: deps.exportLeaseMs,
      sweepScratch: () => deps.scratch.sweep(),
    })
    app.addHook('onRequest', adminAuthHook(deps.adminKey, deps.authFailures))
    app.addHook(
      'onRequest',
      rateLimitHook(deps.rateLimiter, deps.rateLimitPerMinute, () => ADMIN_RATE_LIMIT_KEY),
    )

    app.post('/admin/v1/organizations', {
      schema: {
        tags: ['admin'],
        operationId: 'createOrganization',
        security,
        summary: 'Create an organization with an admin API key, which is in this answer and never again',
        body: createOrganizationBody,
        response: responses({ 201: envelope(createdOrganization) }, { body: true }),
      },
      handler: async (request, reply) => {
        const { organization: created, secret } = await deps.keys.createOrganization(request.body.name)
        return reply.code(201).send(ok({ ...created, api_key: secret }))
      },
    })

    app.get('/admin/v1/organizations', {
      schema: {
        tags: ['admin'],
        operationId: 'listOrganizations',
        security,
        summary: 'List the organizations, oldest first',
        querystring: organizationsQuery,
        response: responses({ 200: envelope(z.array(organization)) }),
      },
      handler: async (request) => ok(await repo.list(pageOf(request.query, 'querystring'))),
    })

    app.patch('/admin/v1/organizations/:id', {
      schema: {
        tags: ['admin'],
        operationId: 'changeOrganization',
        security,
        summary:
          "Change an organization's settings: its own retention, in days (null: the instance's). " +
          'Applied to ClickHouse before the answer (rows older than the days are deleted by its merges from then on); ' +
          'on a 5xx nothing was changed: send it again.',
        params: organizationParams,
        body: organizationChangeBody,
        response: responses({ 200: envelope(organization) }, { body: true, refuses: [404] }),
      },
      handler: async (request) => {
        const changed = await deps.retention
          .change((tx) => repo.setRetention(tx, request.params.id, request.body.retention_days))
          .catch((err: unknown) => {
            // A migration, or another change, holds the lock past the route's wait: nothing changed.
            if (err instanceof LockWaitExceeded)
              throw new AppError(
                503,
                'retention_busy',
                'Another Tally process is migrating ClickHouse or changing a retention; nothing was changed, send it again',
                { retryAfterSeconds: 5 },
              )
            throw err
          })
        if (!changed) throw notFound('Organization not found')
        return ok(changed)
      },
    })

    app.delete('/admin/v1/organizations/:id', {
      schema: {
        tags: ['admin'],
        operationId: 'deleteOrganization',
        security,
        summary:
          'Delete an organization with all its data: keys, prompts and their bodies, webhooks and deliveries, request rows, exports and their files. ' +
          'Its running exports are stopped first (a 503 if they have not stopped within the export lease), and its events still on their way are dropped. ' +
          'On a 5xx, send it again: it resumes where it stopped.',
        params: organizationParams,
        response: responses({ 200: envelope(z.null()) }, { refuses: [404] }),
      },
      handler: async (request) => {
        if (!(await service.delete(request.params.id))) throw notFound('Organization not found')
        return ok(null)
      },
    })
  }
}
