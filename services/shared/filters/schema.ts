import { z } from 'zod'
import type { FilterType } from '../clickhouse/request-table.ts'
import { REQUEST_TABLE } from '../clickhouse/request-table.ts'
import {
  FEEDBACK,
  type FieldDef,
  OPERATORS,
  PROPERTIES,
  REQUEST_FIELDS,
  SCORE_AGGREGATES,
  SCORES,
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

const scoreValueCondition: Json = {
  anyOf: [condition('number'), condition('boolean'), condition('text')],
  description:
    'A number compares the score’s number (a boolean score is 1 or 0), true/false a boolean score, a string a category',
}

const scoreCondition = (description: string): Json => ({
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: scoreValueCondition,
  description,
})

const requestScores = scoreCondition(
  'One score name mapped to a condition: the request has a live score of the name that matches',
)

const sessionScoreFields: Json = Object.fromEntries([
  [SCORES, scoreCondition('One score name mapped to a condition on the session’s own score')],
  ...Object.entries(SCORE_AGGREGATES).map(([field, fn]) => [
    field,
    {
      type: 'object',
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: condition('number'),
      description: `One score name mapped to a number condition on the ${fn} of the scores of the session’s requests that the request-level conditions choose`,
    },
  ]),
])

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
    'The properties Helicone-Session-Id/-Name/-Path read the session, however it arrived. ' +
    'A property reads its latest value, set after the fact (PUT /v1/request/{id}/property) or logged; scores and feedback: docs/scores.md.',
  anyOf: [
    { const: 'all' },
    { type: 'object', maxProperties: 0 },
    oneOf({
      [REQUEST_TABLE]: oneOf({
        ...fieldConditions(REQUEST_FIELDS),
        [PROPERTIES]: propertyCondition,
        [SCORES]: requestScores,
        [FEEDBACK]: condition('boolean'),
      }),
    }),
    oneOf({ [PROPERTIES]: propertyCondition }),
    oneOf({ [SCORES]: requestScores }),
    oneOf({ [FEEDBACK]: condition('boolean') }, 'The boolean score named feedback (Helicone’s rating)'),
    oneOf(
      { [SESSION_TABLE]: oneOf({ ...fieldConditions(SESSION_FIELDS), ...sessionScoreFields }) },
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
