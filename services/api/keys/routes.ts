import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { badRequest, conflict, notFound } from '../../shared/errors.ts'
import { principalOf, requireAdmin } from '../http/auth.ts'
import { envelope, ok, responses } from '../http/envelope.ts'
import { uuidInput } from '../http/inputs.ts'
import type { ApiKeyRepo } from './repo.ts'
import { apiKey, createdApiKey, keyRole } from './schemas.ts'

const createBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  role: keyRole.default('member').describe('admin keys can manage keys; default member'),
})

const idParams = z.object({ id: uuidInput })

export function apiKeyRoutes(
  repo: ApiKeyRepo,
  onDeleted: (keyHashHex: string) => void,
  maxKeysPerOrg: number,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/v1/api-keys', {
      schema: {
        tags: ['api-keys'],
        operationId: 'createApiKey',
        summary: 'Create an API key (admin keys only). The secret is in this answer and never again.',
        description: `An organization holds at most ${maxKeysPerOrg} keys (409 beyond).`,
        body: createBody,
        response: responses({ 201: envelope(createdApiKey) }, { body: true, refuses: [403, 409] }),
      },
      handler: async (request, reply) => {
        const { organizationId } = requireAdmin(request)
        const created = await repo.createCapped({ organizationId, ...request.body }, maxKeysPerOrg)
        if ('held' in created)
          throw conflict(
            `This organization already holds ${created.held} API keys, the most it may (TALLY_MAX_API_KEYS_PER_ORG); delete one first`,
          )
        return reply.code(201).send(ok({ ...created.key, api_key: created.secret }))
      },
    })

    app.get('/v1/api-keys', {
      schema: {
        tags: ['api-keys'],
        operationId: 'listApiKeys',
        summary: "List the organization's API keys (never their secrets)",
        response: responses({ 200: envelope(z.array(apiKey)) }),
      },
      handler: async (request) => ok(await repo.list(principalOf(request).organizationId)),
    })

    app.delete('/v1/api-keys/:id', {
      schema: {
        tags: ['api-keys'],
        operationId: 'deleteApiKey',
        summary:
          'Delete an API key (admin keys only); it stops working at once. The last admin key of an organization cannot be deleted (409).',
        params: idParams,
        response: responses({ 200: envelope(z.null()) }, { refuses: [403, 404, 409] }),
      },
      handler: async (request) => {
        const principal = requireAdmin(request)
        if (principal.keyId === request.params.id) throw badRequest('id: a key cannot delete itself')
        const result = await repo.delete(principal.organizationId, request.params.id)
        if (result === 'not_found') throw notFound('API key not found')
        if (result === 'last_admin_key')
          throw conflict('id: the last admin key of an organization cannot be deleted')
        onDeleted(result.deleted)
        return ok(null)
      },
    })
  }
}
