import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { principalOf } from '../http/auth.ts'
import { envelope, ok, responses } from '../http/envelope.ts'
import { failingWith } from './failure.ts'
import {
  environmentChangeBody,
  environmentVersionBody,
  id,
  linkedVersion,
  newVersionBody,
  PRODUCTION,
  PROMPT_REQUEST_LIMIT_BYTES,
  promptBody,
  promptIdBody,
  promptVersion,
  versionCounts,
  versionIdBody,
  versionsBody,
  versionWithBody,
} from './schemas.ts'
import type { PromptService } from './service.ts'

type EnvironmentChange = z.infer<typeof environmentChangeBody>

const tags = ['prompts']
/** A route with a JSON body that names a prompt or version, which may not exist. */
const lookupWithBody = { body: true, refuses: [404] } as const

/** Versions: create, list, count, look up (v1 with a link to the body, v2 with the body), deploy, delete. */
export function promptVersionRoutes(service: PromptService): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/v1/prompt-2025/update', {
      bodyLimit: PROMPT_REQUEST_LIMIT_BYTES,
      schema: {
        tags,
        operationId: 'createPromptVersion',
        summary: 'Create a new version from a base version: a new major, or the next minor of its major',
        body: newVersionBody,
        response: responses({ 201: envelope(z.object({ id: z.guid() })) }, lookupWithBody),
      },
      handler: async (request, reply) => {
        const created = await service.createVersion(principalOf(request).organizationId, request.body)
        return reply.code(201).send(ok(created))
      },
    })

    app.post('/v1/prompt-2025/query/versions', {
      errorHandler: failingWith('Failed to retrieve versions'),
      schema: {
        tags,
        operationId: 'queryPromptVersions',
        summary:
          "A prompt's versions, metadata only, newest first; only one major when majorVersion is given",
        body: versionsBody,
        response: responses({ 200: envelope(z.array(promptVersion)) }, lookupWithBody),
      },
      handler: async (request) => {
        const { promptId, majorVersion } = request.body
        return ok(await service.listVersions(principalOf(request).organizationId, promptId, majorVersion))
      },
    })

    app.post('/v1/prompt-2025/query/total-versions', {
      schema: {
        tags,
        operationId: 'countPromptVersions',
        summary: 'How many versions a prompt has, and how many distinct major versions',
        body: promptIdBody,
        response: responses({ 200: envelope(versionCounts) }, lookupWithBody),
      },
      handler: async (request) =>
        ok(await service.countVersions(principalOf(request).organizationId, request.body.promptId)),
    })

    for (const api of ['v1', 'v2'] as const) {
      const withBody = api === 'v2'
      const response = responses(
        { 200: envelope(withBody ? versionWithBody : linkedVersion) },
        lookupWithBody,
      )
      const what = withBody ? 'with its body inline' : 'with s3_url, a link to its body'
      const suffix = withBody ? 'WithBody' : ''
      const answer = async (version: z.infer<typeof linkedVersion>) =>
        ok(withBody ? { ...version, prompt_body: await service.body(version) } : version)

      app.post(`/${api}/prompt-2025/query/version`, {
        schema: {
          tags,
          operationId: `getPromptVersion${suffix}`,
          summary: `One version ${what}`,
          body: versionIdBody,
          response,
        },
        handler: async (request) =>
          answer(await service.version(principalOf(request).organizationId, request.body.promptVersionId)),
      })

      app.post(`/${api}/prompt-2025/query/production-version`, {
        schema: {
          tags,
          operationId: `getProductionVersion${suffix}`,
          summary: `The production version ${what}`,
          body: promptIdBody,
          response,
        },
        handler: async (request) =>
          answer(
            await service.environmentVersion(
              principalOf(request).organizationId,
              request.body.promptId,
              PRODUCTION,
            ),
          ),
      })

      app.post(`/${api}/prompt-2025/query/environment-version`, {
        schema: {
          tags,
          operationId: `getEnvironmentVersion${suffix}`,
          summary: `The version deployed to an environment ${what}`,
          body: environmentVersionBody,
          response,
        },
        handler: async (request) => {
          const { promptId, environment } = request.body
          return answer(
            await service.environmentVersion(principalOf(request).organizationId, promptId, environment),
          )
        },
      })
    }

    app.get('/v1/prompt-2025/:promptVersionId/prompt-body', {
      schema: {
        tags,
        operationId: 'getPromptBody',
        summary: 'The body of a version: messages, model and parameters',
        params: z.object({ promptVersionId: id }),
        response: responses({ 200: envelope(promptBody) }, { refuses: [404] }),
      },
      handler: async (request) => {
        const version = await service.version(
          principalOf(request).organizationId,
          request.params.promptVersionId,
        )
        return ok(await service.body(version))
      },
    })

    // Deploy and undeploy: the same body and answer, the environment changed one way or the other.
    for (const { path, operationId, summary, change } of [
      {
        path: '/v1/prompt-2025/update/environment',
        operationId: 'deployPromptVersion',
        summary: 'Deploy a version to an environment, moving the environment from the version that held it',
        change: (organizationId: string, body: EnvironmentChange) =>
          service.assignEnvironment(organizationId, body),
      },
      {
        path: '/v1/prompt-2025/remove/environment',
        operationId: 'undeployPromptVersion',
        summary: 'Take a version out of an environment (production can only be moved, never removed)',
        change: (organizationId: string, body: EnvironmentChange) =>
          service.removeEnvironment(organizationId, body),
      },
    ] as const) {
      app.post(path, {
        schema: {
          tags,
          operationId,
          summary,
          body: environmentChangeBody,
          response: responses({ 200: envelope(promptVersion) }, lookupWithBody),
        },
        handler: async (request) => ok(await change(principalOf(request).organizationId, request.body)),
      })
    }

    app.delete('/v1/prompt-2025/:promptId/:versionId', {
      schema: {
        tags,
        operationId: 'deletePromptVersion',
        summary: 'Delete a version and its body, permanently; refused for the production version',
        params: z.object({ promptId: id, versionId: id }),
        response: responses({ 200: envelope(z.null()) }, { refuses: [404] }),
      },
      handler: async (request) => {
        const { promptId, versionId } = request.params
        await service.deleteVersion(principalOf(request).organizationId, promptId, versionId)
        return ok(null)
      },
    })
  }
}
