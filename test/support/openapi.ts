import { Ajv2020 } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document as JSON
export type OpenApiDocument = any

const COMPONENT = '#/components/schemas/'

/** The schema with its component references pointing at `$defs`, where `validatorFor` puts them. */
function toDefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toDefs)
  if (!schema || typeof schema !== 'object') return schema
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith(COMPONENT)
        ? `#/$defs/${value.slice(COMPONENT.length)}`
        : toDefs(value),
    ]),
  )
}

/**
 * Checks JSON against the schemas of an OpenAPI 3.1 document (JSON Schema 2020-12) with Ajv in
 * strict mode: `schema` is any schema of the document, named components resolved.
 */
export function validatorFor(document: OpenApiDocument) {
  const ajv = new Ajv2020({ allErrors: true, strict: true })
  formats.default(ajv)
  const defs = toDefs(document.components?.schemas ?? {})
  const compiled = new Map<unknown, ReturnType<typeof ajv.compile>>()
  return (schema: unknown, value: unknown): string[] => {
    let validate = compiled.get(schema)
    if (!validate) {
      validate = ajv.compile({ ...(toDefs(schema) as object), $defs: defs })
      compiled.set(schema, validate)
    }
    if (validate(value)) return []
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
    )
  }
}

/** The JSON schema a path (as the document writes it) declares for an answer with `status`. */
export function responseSchema(document: OpenApiDocument, method: string, path: string, status: number) {
  const response = document.paths?.[path]?.[method.toLowerCase()]?.responses?.[String(status)]
  if (!response) throw new Error(`${method} ${path} does not declare ${status}`)
  const schema = response.content?.['application/json']?.schema
  if (!schema) throw new Error(`${method} ${path} declares no JSON body for ${status}`)
  return schema
}
