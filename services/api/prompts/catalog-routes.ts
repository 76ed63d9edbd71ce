import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { notFound } from '../../shared/errors.ts'
import { principalOf } from '../http/auth.ts'
import { envelope, ok, responses } from '../http/envelope.ts'
import { failingWith } from './failure.ts'
import type { PromptRepo } from './repo.ts'
import {
  createPromptBody,
  id,
  PROMPT_REQUEST_LIMIT_BYTES,
  prompt,
  promptName,
  promptPage,
  queryBody,
  tagList,
} from './schemas.ts'
import type { PromptService } from './service.ts'

const tags = ['prompts']
const promptParams = z.object({ promptId: id })

/** Prompts as a whole: create, search, rename, tag, delete, and the organization's tags and environments. */
export function promptCatalogRoutes(service: PromptService, repo: PromptRepo): FastifyPluginAsyncZod {
  /** Renames or retags a prompt: the prompt as it now is, or 404. */
  const update = async (
    organizationId: string,
    promptId: string,
    change: Parameters<PromptRepo['updatePrompt']>[2],
  ) => {
    const updated = await repo.updatePrompt(organizationId, promptId, change)
    if (!updated) throw notFound('Prompt not found')
    return ok(updated)
  }

  return async (app) => {
    app.post('/v1/prompt-2025', {
      bodyLimit: PROMPT_REQUEST_LIMIT_BYTES,
      schema: {
        tags,
        operationId: 'createPrompt',
        summary: 'Create a prompt with its first version, 1.0, deployed to production',
        body: createPromptBody,
        response: responses(
          { 201: envelope(z.object({ id: z.guid(), versionId: z.guid() })) },
          { body: true, refuses: [409] },
        ),
      },
      handler: async (request, reply) => {
        const created = await service.createPrompt(principalOf(request).organizationId, request.body)
        return reply.code(201).send(ok(created))
      },
    })

    app.post('/v1/prompt-2025/query', {
      errorHandler: failingWith('Failed to query prompts'),
      schema: {
        tags,
        operationId: 'queryPrompts',
        summary: 'Search prompts: partial name match ignoring case, any of the tags, newest first',
        body: queryBody,
        response: responses({ 200: envelope(z.array(prompt)) }, { body: true }),
      },
      handler: async (request) => {
        const { search, tagsFilter } = request.body
        return ok(
          await repo.queryPrompts(principalOf(request).organizationId, {
            search,
            tags: tagsFilter,
            ...promptPage(request.body),
          }),
        )
      },
    })

    app.get('/v1/prompt-2025/id/:promptId', {
      schema: {
        tags,
        operationId: 'getPrompt',
        summary: 'One prompt',
        params: promptParams,
        response: responses({ 200: envelope(prompt) }, { refuses: [404] }),
      },
      handler: async (request) =>
        ok(await service.prompt(principalOf(request).organizationId, request.params.promptId)),
    })

    app.post('/v1/prompt-2025/id/:promptId/rename', {
      schema: {
        tags,
        operationId: 'renamePrompt',
        summary: 'Rename a prompt (its versions are untouched)',
        params: promptParams,
        body: z.object({ name: promptName }),
        response: responses({ 200: envelope(prompt) }, { body: true, refuses: [404, 409] }),
      },
      handler: async (request) =>
        update(principalOf(request).organizationId, request.params.promptId, { name: request.body.name }),
    })

    app.patch('/v1/prompt-2025/id/:promptId/tags', {
      schema: {
        tags,
        operationId: 'setPromptTags',
        summary: "Replace a prompt's tags",
        params: promptParams,
        body: z.object({ tags: tagList }),
        response: responses({ 200: envelope(prompt) }, { body: true, refuses: [404] }),
      },
      handler: async (request) =>
        update(principalOf(request).organizationId, request.params.promptId, {
          tags: [...new Set(request.body.tags)],
        }),
    })

    app.delete('/v1/prompt-2025/:promptId', {
      schema: {
        tags,
        operationId: 'deletePrompt',
        summary: 'Delete a prompt with all its versions and their bodies, permanently',
        params: promptParams,
        response: responses({ 200: envelope(z.null()) }, { refuses: [404] }),
      },
      handler: async (request) => {
        await service.deletePrompt(principalOf(request).organizationId, request.params.promptId)
        return ok(null)
      },
    })

    // The names the organization's prompts use, each list distinct and sorted.
    for (const { path, operationId, summary, list } of [
      {
        path: '/v1/prompt-2025/tags',
        operationId: 'listPromptTags',
        summary: "Every tag on the organization's prompts, sorted",
        list: (organizationId: string) => repo.listTags(organizationId),
      },
      {
        path: '/v1/prompt-2025/environments',
        operationId: 'listPromptEnvironments',
        summary: "Every environment some version of the organization's prompts is deployed to, sorted",
        list: (organizationId: string) => repo.listEnvironments(organizationId),
      },
    ] as const) {
      app.get(path, {
        schema: {
          tags,
          operationId,
          summary,
          response: responses({ 200: envelope(z.array(z.string())) }),
        },
        handler: async (request) => ok(await list(principalOf(request).organizationId)),
      })
    }
  }
}
