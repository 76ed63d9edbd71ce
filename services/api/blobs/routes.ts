import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { FilesystemBlobStore } from '../../shared/blobs/filesystem.ts'
import { AppError, notFound } from '../../shared/errors.ts'
import { errorEnvelope, publicErrorResponses } from '../http/envelope.ts'
import { wildcardNamed } from '../http/openapi.ts'

/**
 * Serves the embedded blob store's signed links (the stand-in for presigned S3 GETs): no
 * Authorization header, the signature and expiry in the query string.
 */
export function signedBlobRoutes(store: FilesystemBlobStore): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/blobs/*', {
      // OpenAPI has no catch-all parameter: the document calls it {key}.
      config: { swaggerTransform: wildcardNamed('key') },
      schema: {
        tags: ['blobs'],
        operationId: 'getBlob',
        summary: 'Fetch an object through a signed, expiring link',
        security: [],
        params: z.object({ '*': z.string().describe("The object's key, slashes included") }),
        querystring: z.object({ expires: z.string(), signature: z.string() }),
        response: {
          200: {
            description: 'The object: a prompt body (JSON)',
            content: { 'application/json': { schema: z.unknown() } },
          },
          ...publicErrorResponses,
          403: errorEnvelope,
          404: errorEnvelope,
        },
      },
      handler: async (request, reply) => {
        const key = request.params['*']
        const { expires, signature } = request.query
        if (!store.verifyLink(key, expires, signature)) {
          throw new AppError(403, 'forbidden', 'signature: the link is invalid or has expired')
        }
        const body = await store.get(key)
        if (!body) throw notFound('Object not found')
        return reply
          .header('content-type', 'application/json')
          .header('cache-control', 'private, max-age=60')
          .send(body)
      },
    })
  }
}
