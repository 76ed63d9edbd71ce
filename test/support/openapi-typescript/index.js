// openapi-typescript builds its output with TypeScript 5's compiler API, which the project's
// TypeScript 7 does not have: this package gives it a TypeScript 5 of its own (npm nests both here).
import openapiTS, { astToString } from 'openapi-typescript'

/**
 * TypeScript declarations (`paths`, `components`, `operations`, `webhooks`) for an OpenAPI
 * document. A field with a default stays optional (`--default-non-nullable false`): Tally's
 * request schemas fill in their defaults, and its answers list every field they always carry
 * as required.
 */
export async function generateTypes(document) {
  return astToString(await openapiTS(document, { defaultNonNullable: false }))
}
