import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { jsonSchemaTransform } from 'fastify-type-provider-zod'

/** OpenAPI 3 from the routes' zod schemas, at /openapi.json, with a docs page at /docs. */
export async function installOpenApi(app: FastifyInstance, serverUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tally API',
        version: '1.0.0',
        description:
          'Prompts with immutable versions, request logging and search, sessions and signed webhooks. ' +
          'Every JSON answer is the envelope { data, error }. Authenticate with Authorization: Bearer <API_KEY>.',
      },
      servers: [{ url: serverUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          admin: {
            type: 'http',
            scheme: 'bearer',
            description: 'TALLY_ADMIN_API_KEY, for the /admin/v1 routes only',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
