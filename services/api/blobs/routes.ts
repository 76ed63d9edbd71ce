import { createReadStream } from 'node:fs'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { FilesystemBlobStore } from '../../shared/blobs/filesystem.ts'
import { fileContentType } from '../../shared/clickhouse/file-formats.ts'
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
            description: 'The object: a prompt body or an export manifest (JSON), or an export file',
            content: {
              'application/json': { schema: z.unknown() },
              'application/vnd.apache.parquet': { schema: z.string().meta({ format: 'binary' }) },
              'text/csv': { schema: z.string() },
              'application/x-ndjson': { schema: z.string() },
            },
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
        const found = await store.locate(key)
        if (!found) throw notFound('Object not found')
        // Streamed: an export file may be far larger than memory should hold.
        return (
          reply
            // Export files by their ending; everything else (prompt bodies, manifests) is JSON.
            .header('content-type', fileContentType(key) ?? 'application/json')
            .header('content-length', found.size)
            .header('cache-control', 'private, max-age=60')
            .send(createReadStream(found.path))
        )
      },
    })
  }
}
