import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { FilesystemBlobStore } from '../../shared/blobs/filesystem.ts'
import { AppError, notFound } from '../../shared/errors.ts'

/**
 * Serves the embedded blob store's signed links (the stand-in for presigned S3 GETs): no
 * Authorization header, the signature and expiry in the query string.
 */
export function signedBlobRoutes(store: FilesystemBlobStore): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/blobs/*', {
      schema: {
        tags: ['blobs'],
        summary: 'Fetch an object through a signed, expiring link',
        querystring: z.object({ expires: z.string(), signature: z.string() }),
      },
      handler: async (request, reply) => {
        const key = (request.params as { '*': string })['*']
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
