import { isDeepStrictEqual } from 'node:util'
import swagger, { type SwaggerTransform } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { createJsonSchemaTransformObject, jsonSchemaTransform } from 'fastify-type-provider-zod'
import type { OpenAPIV3_1 } from 'openapi-types'
import { z } from 'zod'
import { publicErrorResponses } from './envelope.ts'

/**
 * What the document shows of one operation: a request a caller may send, and the answer to it.
 * Each domain keeps its own (`<domain>/examples.ts`, by operationId); app.ts hands them all to
 * installOpenApi. Tested: each request is sent to a started Tally and accepted, each answer fits
 * its schema.
 */
export interface OperationExamples {
  /** Path and query parameters, by name. */
  parameters?: Record<string, string | number>
  /** A body the operation takes, shown under its JSON media type. */
  body?: unknown
  /** Its success answer (200, 201 or 202): JSON, or text where the operation answers text. */
  answer: unknown
}

const documentedBodies = new WeakMap<object, z.ZodType>()

/**
 * `validated` as a route's body schema, shown in the OpenAPI document as `documented`: for a body
 * that validation first normalizes, `documented` says everything a caller may send.
 */
export function documentedAs<T extends z.ZodType>(validated: T, documented: z.ZodType): T {
  documentedBodies.set(validated, documented)
  return validated
}

/** Each route's zod schemas as JSON Schema; schemas named with `.meta({ id })` become `$ref`s. */
const transform: SwaggerTransform = (input) => {
  const body = input.schema.body
  const documented = typeof body === 'object' && body !== null ? documentedBodies.get(body) : undefined
  return jsonSchemaTransform(documented ? { ...input, schema: { ...input.schema, body: documented } } : input)
}

/**
 * For a route whose body fastify hands over as raw bytes (no zod body schema validates it): the
 * document shows `body` as its request body, and `ok` as its 200 answer, by media type.
 */
export function rawBodyDocumented(
  body: Record<string, { schema: object }>,
  ok: { description: string; content: Record<string, { schema: object }> },
): SwaggerTransform {
  return (input) => {
    // The route's own 200 schema types its handler; the document shows `ok` instead.
    const { 200: _typed, ...others } = (input.schema.response ?? {}) as Record<string, unknown>
    const { schema, url } = transform({ ...input, schema: { ...input.schema, response: others } })
    const response = (schema.response ?? {}) as Record<string, unknown>
    return { url, schema: { ...schema, body: { content: body }, response: { ...response, 200: ok } } }
  }
}

/** For a route ending in fastify's catch-all `*`: the document names that parameter `name`. */
export function wildcardNamed(name: string): SwaggerTransform {
  return (input) => {
    const { schema, url } = transform(input)
    const params = schema.params as { properties?: Record<string, unknown>; required?: string[] } | undefined
    const { '*': wildcard, ...others } = params?.properties ?? {}
    return {
      url: url.replace(/\*$/, `:${name}`),
      schema: {
        ...schema,
        params: {
          ...params,
          properties: { ...others, [name]: wildcard ?? { type: 'string' } },
          required: [...(params?.required ?? []).filter((p) => p !== '*'), name],
        },
      },
    }
  }
}

const COMPONENT = '#/components/schemas/'
const INPUT = 'Input'

/** Every `#/components/schemas/…` name `value` refers to, and what those refer to in turn. */
function referencedSchemas(value: unknown, schemas: Record<string, unknown>): Set<string> {
  const found = new Set<string>()
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) visit(x)
    else if (v && typeof v === 'object')
      for (const [key, x] of Object.entries(v)) {
        if (key === '$ref' && typeof x === 'string' && x.startsWith(COMPONENT)) {
          const name = x.slice(COMPONENT.length)
          if (!(name in schemas)) throw new Error(`OpenAPI: ${x} is not a component`)
          if (!found.has(name)) {
            found.add(name)
            visit(schemas[name])
          }
        } else visit(x)
      }
  }
  visit(value)
  return found
}

function renameRefs(value: unknown, renames: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((x) => renameRefs(x, renames))
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value).map(([key, x]) => {
      if (key !== '$ref' || typeof x !== 'string' || !x.startsWith(COMPONENT))
        return [key, renameRefs(x, renames)]
      const name = x.slice(COMPONENT.length)
      return [key, `${COMPONENT}${renames.get(name) ?? name}`]
    }),
  )
}

/**
 * The named schemas come from zod's registry twice, `X` as answered and `XInput` as sent. The
 * document keeps the ones it uses: a schema only ever sent, or sent and answered alike, is `X`.
 */
function nameSchemas(document: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  const { components = {}, ...rest } = document
  const schemas = (components.schemas ?? {}) as Record<string, unknown>
  const used = referencedSchemas(rest, schemas)
  const renames = new Map<string, string>()
  for (const name of used) {
    const plain = name.slice(0, -INPUT.length)
    if (name.endsWith(INPUT) && plain in schemas) {
      if (!used.has(plain) || isDeepStrictEqual(schemas[name], schemas[plain])) renames.set(name, plain)
    }
  }
  const kept = [...used].filter((name) => !renames.has(name) || !used.has(renames.get(name) as string))
  const named = Object.fromEntries(
    kept
      .map((name) => [renames.get(name) ?? name, renameRefs(schemas[name], renames)] as const)
      .sort(([a], [b]) => a.localeCompare(b)),
  )
  return {
    ...(renameRefs(rest, renames) as OpenAPIV3_1.Document),
    components: { ...components, schemas: named as Record<string, OpenAPIV3_1.SchemaObject> },
  }
}

const RESPONSE_DESCRIPTIONS: Record<string, string> = {
  200: 'OK',
  201: 'Created',
  400: 'A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule',
  401: 'No valid API key: send Authorization: Bearer <API_KEY>',
  403: 'Not allowed with this key (or this link)',
  404: "Not found, or not the caller's organization's",
  409: 'Conflicts with the current state: `error` says how',
  413: 'The body is larger than this endpoint accepts',
  415: "The body's Content-Type is not application/json",
  422: 'The query exceeded a query limit: `error` names it and its value',
  429: "Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries",
  500: 'Internal error: `error` carries the request id',
  503: 'Not available now: retry',
}

/** fastify-swagger calls every answer without a description of its own "Default Response". */
function describeResponses(document: OpenAPIV3_1.Document): void {
  for (const item of Object.values(document.paths ?? {}))
    for (const operation of Object.values(item ?? {}))
      for (const [status, response] of Object.entries(
        (operation as OpenAPIV3_1.OperationObject).responses ?? {},
      )) {
        const described = RESPONSE_DESCRIPTIONS[status]
        if ('description' in response && response.description === 'Default Response' && described)
          response.description = described
      }
}

/**
 * Only the security schemes some operation names: without TALLY_ADMIN_API_KEY there are no
 * /admin/v1 routes, so the `admin` scheme is left out rather than declared unused.
 */
function keepUsedSecuritySchemes(document: OpenAPIV3_1.Document): void {
  const schemes = document.components?.securitySchemes
  if (!schemes) return
  const used = new Set((document.security ?? []).flatMap((requirement) => Object.keys(requirement)))
  for (const item of Object.values(document.paths ?? {}))
    for (const operation of Object.values(item ?? {}))
      for (const requirement of (operation as OpenAPIV3_1.OperationObject).security ?? [])
        for (const name of Object.keys(requirement)) used.add(name)
  for (const name of Object.keys(schemes)) if (!used.has(name)) delete schemes[name]
}

type Json = unknown
type JsonObject = Record<string, Json>
const NULL_TYPE = (schema: Json) =>
  !!schema &&
  typeof schema === 'object' &&
  Object.keys(schema).length === 1 &&
  (schema as JsonObject).type === 'null'
const isObject = (value: Json): value is JsonObject =>
  !!value && typeof value === 'object' && !Array.isArray(value)

/**
 * One schema as code generators (openapi-generator's typescript-fetch, java, python) read it,
 * meaning the same values: `key` is the property name it sits under, `member` whether it is one
 * alternative of an anyOf/oneOf.
 * - "T or null" is written one way: `type: [T, "null"]` (for a `$ref` or several alternatives,
 *   which `type` cannot say, the `{type: "null"}` alternative stays in the anyOf); a lone
 *   `{type: "null"}` (the envelope's `error` on success, `data` on failure) becomes
 *   `type: ["string" | "object", "null"]`, as the envelope is described everywhere.
 * - A number whose allowed values are all whole (pageSize) is an integer; an integer that may
 *   exceed 32 bits (Unix milliseconds, byte counts) says `format: int64`.
 * - A string `const` without a type (FilterNode's "all") is a string with one allowed value: a
 *   java client otherwise writes every filter as that untyped alternative.
 * - `default: {}` is left out (generators write it as code that does not compile); the service
 *   still applies it.
 * - A boolean allowed one value says so in its description instead of a one-value enum, and a
 *   date-time string that is one alternative of several keeps its pattern, not its format: Java
 *   generators turn either into code that does not compile.
 */
function forGenerators(schema: Json, key?: string, member = false): Json {
  if (Array.isArray(schema)) return schema.map((x) => forGenerators(x))
  if (!isObject(schema)) return schema
  let x: JsonObject = Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      (k === 'anyOf' || k === 'oneOf') && Array.isArray(v)
        ? v.map((m) => forGenerators(m, undefined, true))
        : k === 'properties' && isObject(v)
          ? Object.fromEntries(Object.entries(v).map(([name, p]) => [name, forGenerators(p, name)]))
          : forGenerators(v),
    ]),
  )
  for (const union of ['anyOf', 'oneOf'] as const) {
    const members = x[union]
    if (!Array.isArray(members)) continue
    const others = members.filter((m) => !NULL_TYPE(m))
    const [only] = others
    if (
      others.length === 1 &&
      others.length < members.length &&
      isObject(only) &&
      typeof only.type === 'string'
    ) {
      const { [union]: _, ...rest } = x
      x = { ...rest, ...only, type: [only.type, 'null'] }
      if (Array.isArray(only.enum)) x.enum = [...only.enum, null]
    } else if (members.length > 1) {
      for (const m of members)
        if (isObject(m) && m.type === 'string' && m.format === 'date-time') {
          delete m.format
          m.description ??= 'An ISO 8601 date-time'
        }
    }
  }
  if ('const' in x && x.type === undefined && typeof x.const === 'string') {
    const { const: value, ...rest } = x
    x = { type: 'string', enum: [value], ...rest }
  }
  if (isObject(x.default) && Object.keys(x.default).length === 0) delete x.default
  if (x.type === 'number' && Array.isArray(x.enum) && x.enum.every((v) => Number.isInteger(v)))
    x.type = 'integer'
  const INT32 = 2 ** 31
  if (
    (x.type === 'integer' || (Array.isArray(x.type) && x.type.includes('integer'))) &&
    x.format === undefined &&
    ((typeof x.maximum === 'number' && x.maximum >= INT32) ||
      (typeof x.minimum === 'number' && x.minimum < -INT32))
  )
    x.format = 'int64'
  if (x.type === 'boolean' && Array.isArray(x.enum) && x.enum.length === 1) {
    const {
      enum: [value],
      ...rest
    } = x as JsonObject & { enum: unknown[] }
    x = { ...rest, description: [rest.description, `Always ${String(value)}.`].filter(Boolean).join(' ') }
  }
  if (NULL_TYPE(x) && !member) x = { type: [key === 'data' ? 'object' : 'string', 'null'] }
  return x
}

const LOG_BODY = ['LogEvent', 'LogEventList', 'LogEventBatch'] as const

/**
 * The document as generators read it (forGenerators on every schema), with
 * - the three bodies of POST /v1/request/log as named schemas: one `LogEvent`, a `LogEventList`
 *   or a `LogEventBatch` ({events}), as a oneOf (a value is exactly one of them: LogEvent takes no
 *   `events` key), which typescript-fetch types as a union where it merges an anyOf into one type;
 * - the POST Tally sends to webhook destinations as a callback of createWebhook, tagged
 *   `webhook-deliveries`: a top-level `webhooks` entry makes typescript-fetch overwrite the
 *   webhook management API with it.
 */
function shapeForGenerators(document: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  const shaped = forGenerators(document) as OpenAPIV3_1.Document & { paths: Record<string, JsonObject> }
  const schemas = (shaped.components?.schemas ?? {}) as Record<string, JsonObject>
  const log = (shaped.paths['/v1/request/log']?.post as JsonObject | undefined)?.requestBody as
    | JsonObject
    | undefined
  const content = (log?.content as Record<string, { schema: JsonObject }> | undefined)?.['application/json']
  const alternatives = content?.schema.anyOf
  if (content && Array.isArray(alternatives) && alternatives.length === 3) {
    const [one, list, batch] = alternatives as JsonObject[]
    schemas.LogEventList = { ...list, description: 'Several events, each a LogEvent' }
    schemas.LogEventBatch = { ...batch, description: 'Several events under `events`' }
    if (one?.$ref === `${COMPONENT}LogEvent`)
      content.schema = { oneOf: LOG_BODY.map((name) => ({ $ref: `${COMPONENT}${name}` })) }
  }
  const { webhooks, ...rest } = shaped as typeof shaped & {
    webhooks?: Record<string, OpenAPIV3_1.PathItemObject>
  }
  const create = rest.paths['/v1/webhooks']?.post as OpenAPIV3_1.OperationObject | undefined
  if (webhooks && create)
    create.callbacks = Object.fromEntries(
      Object.entries(webhooks).map(([name, item]) => [name, { '{$request.body#/destination}': item }]),
    )
  return {
    ...rest,
    components: { ...rest.components, schemas: schemas as Record<string, OpenAPIV3_1.SchemaObject> },
  }
}

/** The first of `content`'s media types that is JSON, else its first: where an example goes. */
function exampleHolder(content: Record<string, OpenAPIV3_1.MediaTypeObject> | undefined) {
  if (!content) return undefined
  const types = Object.keys(content)
  const type = types.find((t) => t === 'application/json') ?? types[0]
  return type === undefined ? undefined : content[type]
}

/** Each operation's examples (by operationId) as those of its parameters, body and answer. */
function placeExamples(document: OpenAPIV3_1.Document, examples: Record<string, OperationExamples>): void {
  for (const item of Object.values(document.paths ?? {}))
    for (const operation of Object.values(item ?? {}) as OpenAPIV3_1.OperationObject[]) {
      const example = operation?.operationId ? examples[operation.operationId] : undefined
      if (!example) continue
      for (const parameter of (operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[]) {
        const value = example.parameters?.[parameter.name]
        if (value !== undefined) parameter.example = value
      }
      const body = exampleHolder(
        (operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content,
      )
      if (body && example.body !== undefined) body.example = example.body
      const success = (operation.responses?.['200'] ??
        operation.responses?.['201'] ??
        operation.responses?.['202']) as OpenAPIV3_1.ResponseObject | undefined
      const answer = exampleHolder(success?.content)
      if (answer) answer.example = example.answer
    }
}

const withComponents = createJsonSchemaTransformObject({})

const DOCUMENT_EXAMPLE: OperationExamples = {
  answer: {
    openapi: '3.1.0',
    info: { title: 'Tally API', version: '1.0.0' },
    servers: [{ url: 'http://127.0.0.1:8787' }],
    paths: { '/v1/request/log': { post: { operationId: 'logRequests' } } },
  },
}

const TAGS: OpenAPIV3_1.TagObject[] = [
  { name: 'prompts', description: 'Prompts with immutable versions, environments and stored bodies' },
  { name: 'requests', description: "Log model requests (Tally's intake and Helicone's) and query them" },
  { name: 'sessions', description: 'Requests grouped by session, with their totals' },
  {
    name: 'scores',
    description: 'Scores, feedback and properties given after the fact, and score configs (docs/scores.md)',
  },
  {
    name: 'metrics',
    description: 'Measures over time by dimension, for dashboards (docs/metrics.md)',
  },
  {
    name: 'sql',
    description: "Read-only SQL over your organization's requests and sessions (docs/data-teams.md)",
  },
  {
    name: 'webhooks',
    description: 'Webhooks: signed deliveries of every processed request to your endpoint',
  },
  {
    name: 'webhook-deliveries',
    description:
      "What Tally POSTs to a webhook's destination (the callbacks `requestCompleted` and `scoreCreated` of createWebhook)",
  },
  {
    name: 'exports',
    description:
      "Exact exports of a window's requests to the object store (Parquet, CSV, JSONL), once or on a schedule",
  },
  { name: 'api-keys', description: "The organization's API keys" },
  { name: 'models', description: 'The model price table behind cost_usd' },
  { name: 'admin', description: 'The instance-admin API (TALLY_ADMIN_API_KEY): organizations' },
  { name: 'health', description: 'Liveness, readiness and Prometheus metrics, without an API key' },
  {
    name: 'blobs',
    description:
      'Signed links to prompt bodies and export files in the embedded blob store, without an API key',
  },
  { name: 'openapi', description: 'This document' },
]

/**
 * OpenAPI 3.1 from the routes' zod schemas, at /openapi.json, with a docs page at /docs. Its
 * server is `serverUrl()` as each request finds it: with PORT=0 it is known only once the API listens.
 * `webhooks` are the requests Tally itself sends (webhooks/openapi.ts), shown as callbacks.
 */
export async function installOpenApi(
  app: FastifyInstance,
  serverUrl: () => string,
  webhooks: Record<string, OpenAPIV3_1.PathItemObject>,
  examples: Record<string, OperationExamples>,
): Promise<void> {
  const withServer = <T extends object>(document: T) => ({ ...document, servers: [{ url: serverUrl() }] })
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
      tags: TAGS,
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
      webhooks,
    },
    transform,
    transformObject: (input) => {
      const document = nameSchemas(withComponents(input) as OpenAPIV3_1.Document)
      describeResponses(document)
      keepUsedSecuritySchemes(document)
      const shaped = shapeForGenerators(document)
      // After shaping: examples are values, which shaping (made for schemas) must not touch.
      placeExamples(shaped, { ...examples, getOpenApiDocument: DOCUMENT_EXAMPLE })
      return shaped
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs', transformSpecification: withServer })
  app.get('/openapi.json', {
    schema: {
      tags: ['openapi'],
      operationId: 'getOpenApiDocument',
      summary: 'This document: OpenAPI 3.1',
      security: [],
      response: {
        200: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }),
        ...publicErrorResponses,
      },
    },
    handler: async () => withServer(app.swagger()),
  })
}
