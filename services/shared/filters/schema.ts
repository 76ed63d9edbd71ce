import { z } from 'zod'
import type { FilterType } from '../clickhouse/request-table.ts'
import { REQUEST_TABLE } from '../clickhouse/request-table.ts'
import {
  type FieldDef,
  OPERATORS,
  PROPERTIES,
  REQUEST_FIELDS,
  SESSION_FIELDS,
  SESSION_TABLE,
} from './fields.ts'

type Json = Record<string, unknown>

const NODE = { $ref: '#/components/schemas/FilterNode' }

const VALUES: Record<FilterType, Json> = {
  text: { type: 'string' },
  number: { type: 'number' },
  timestamp: {
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    description: 'Unix milliseconds or ISO 8601 with an offset',
  },
  boolean: { type: 'boolean' },
}

/** An object with exactly one of `properties`. */
const oneOf = (properties: Json, description?: string): Json => ({
  type: 'object',
  properties,
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
  ...(description ? { description } : {}),
})

const condition = (type: FilterType) =>
  oneOf(Object.fromEntries(OPERATORS[type].map((op) => [op, VALUES[type]])))

const fieldConditions = (fields: ReadonlyMap<string, FieldDef>) =>
  Object.fromEntries([...fields].map(([name, field]) => [name, condition(field.type)]))

const propertyCondition: Json = {
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: condition('text'),
  description: 'One property name mapped to a text condition; a missing property reads as ""',
}

/**
 * The filter language (docs/requests.md, docs/sessions.md) as the OpenAPI document shows it,
 * derived from its vocabulary in fields.ts. compile.ts checks a filter and names the field and
 * the rule a bad one breaks, so this schema takes any value: it only documents.
 */
export const filterNode = z.unknown().meta({
  id: 'FilterNode',
  description:
    '"all" or {} (everything), a condition {table: {field: {operator: value}}}, or a branch {left, operator, right}. ' +
    'Operators are spelled with hyphens; not_equals and not_contains are taken as not-equals and not-contains. ' +
    'The properties Helicone-Session-Id/-Name/-Path read the session, however it arrived.',
  anyOf: [
    { const: 'all' },
    { type: 'object', maxProperties: 0 },
    oneOf({
      [REQUEST_TABLE]: oneOf({ ...fieldConditions(REQUEST_FIELDS), [PROPERTIES]: propertyCondition }),
    }),
    oneOf({ [PROPERTIES]: propertyCondition }),
    oneOf(
      { [SESSION_TABLE]: oneOf(fieldConditions(SESSION_FIELDS)) },
      'Session-level conditions: POST /v1/session/query and /v1/session/count only',
    ),
    {
      type: 'object',
      properties: { left: NODE, operator: { enum: ['and', 'or'] }, right: NODE },
      required: ['left', 'operator', 'right'],
      additionalProperties: false,
    },
  ],
})
