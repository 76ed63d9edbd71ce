import { describe, expect, it } from 'vitest'
import type { ScoreConfig } from '../../services/api/scores/schemas.ts'
import { checkValue, derivedScoreId } from '../../services/api/scores/service.ts'
import { AppError } from '../../services/shared/errors.ts'
import { compileRequestFilter, compileSessionFilter } from '../../services/shared/filters/compile.ts'

const ORG = '3b1f6c2e-8d4a-4f1b-9c2e-7a5d3e1f0b9c'
const REQUEST = '7b7e961d-254e-5401-8ee5-9452b893e55b'

function refusal(run: () => unknown): string {
  try {
    run()
  } catch (err) {
    if (err instanceof AppError && err.status === 400) return err.message
    throw err
  }
  throw new Error('it was taken')
}

const config = (fields: Partial<ScoreConfig>): ScoreConfig => ({
  id: '00000000-0000-4000-8000-000000000000',
  name: 'x',
  data_type: 'numeric',
  min: null,
  max: null,
  categories: null,
  description: '',
  created_at: new Date(0),
  ...fields,
})

describe('score values', () => {
  it('take their type from the value when the name has no config', () => {
    expect(checkValue('a', 0.5, undefined, 'body.value')).toEqual({
      dataType: 'numeric',
      value: 0.5,
      stringValue: '',
    })
    expect(checkValue('a', true, undefined, 'body.value')).toEqual({
      dataType: 'boolean',
      value: 1,
      stringValue: '',
    })
    expect(checkValue('a', 'good', undefined, 'body.value')).toEqual({
      dataType: 'categorical',
      value: 0,
      stringValue: 'good',
    })
    // feedback is boolean, always.
    expect(refusal(() => checkValue('feedback', 1, undefined, 'body.value'))).toMatch(
      /body.value: must be true or false/,
    )
  })

  it('follow a config: range, type and categories, named in the message', () => {
    const range = config({ name: 'h', min: 0, max: 1 })
    expect(refusal(() => checkValue('h', 1.01, range, 'body.value'))).toBe(
      'body.value: must be between 0 and 1 (the score config of "h")',
    )
    expect(refusal(() => checkValue('h', -1, config({ min: 0 }), 'p'))).toMatch(/must be at least 0/)
    expect(refusal(() => checkValue('h', true, range, 'p'))).toMatch(/must be a number/)
    expect(refusal(() => checkValue('h', Number.NaN, undefined, 'p'))).toMatch(/finite/)
    expect(refusal(() => checkValue('h', Number.POSITIVE_INFINITY, undefined, 'p'))).toMatch(/finite/)
    const mood = config({ data_type: 'categorical', categories: ['good', 'bad'] })
    expect(checkValue('m', 'bad', mood, 'p').stringValue).toBe('bad')
    expect(refusal(() => checkValue('m', 'Bad', mood, 'p'))).toMatch(/must be one of "good", "bad"/)
    expect(refusal(() => checkValue('b', 0, config({ data_type: 'boolean' }), 'p'))).toMatch(/true or false/)
  })
})

describe('derived score ids', () => {
  it('are one UUID per organization, target, name and source', () => {
    const id = derivedScoreId(ORG, { request_id: REQUEST }, 'h', 'api')
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(derivedScoreId(ORG, { request_id: REQUEST.toUpperCase() }, 'h', 'api')).toBe(id)
    const others = [
      derivedScoreId(ORG.replace('3b', '4b'), { request_id: REQUEST }, 'h', 'api'),
      derivedScoreId(ORG, { session_id: REQUEST }, 'h', 'api'),
      derivedScoreId(ORG, { request_id: REQUEST }, 'h', 'eval'),
      derivedScoreId(ORG, { request_id: REQUEST }, 'H', 'api'),
      // No concatenation can pass for another key.
      derivedScoreId(ORG, { session_id: 'a\u0000b' }, 'c', 'api'),
      derivedScoreId(ORG, { session_id: 'a' }, 'b\u0000c', 'api'),
    ]
    expect(new Set([id, ...others]).size).toBe(others.length + 1)
  })
})

describe('score leaves of the filter language', () => {
  it('compile to bound conditions on the organization’s live scores', () => {
    const compiled = compileRequestFilter({ scores: { "h'); DROP": { gte: 0.7 } } })
    expect(compiled.sql).toBe(
      "request_id IN (SELECT request_id FROM scores FINAL WHERE organization_id = {org:UUID} AND is_deleted = 0 AND name = {f0:String} AND target_kind = 'request' AND data_type != 'categorical' AND value >= {f1:Float64})",
    )
    expect(compiled.params).toEqual({ f0: "h'); DROP", f1: '0.7' })
    expect(compileRequestFilter({ feedback: { equals: true } }, { organization: '{o:UUID}' }).sql).toContain(
      "organization_id = {o:UUID} AND is_deleted = 0 AND name = {f0:String} AND target_kind = 'request' AND data_type = 'boolean' AND value = 1",
    )
  })

  it('put session scores in HAVING, aggregates over the request-level condition', () => {
    const compiled = compileSessionFilter({
      left: { request_response_rmt: { status: { equals: 500 } } },
      operator: 'and',
      right: { sessions_request_response_rmt: { avg_score: { h: { gte: 0.5 } } } },
    })
    expect(compiled.where).toBe('status = {f0:Float64}')
    // In the aggregation's own HAVING, over the rows the WHERE chose: a joined column per condition.
    expect(compiled.having).toBe('avg(score_0) >= {f2:Float64}')
    expect(compiled.scoreJoin).toContain('avgIfOrNull(value, name = {f1:String}) AS score_0')
    expect(compiled.scoreJoin).toContain('AND name IN ({f1:String})')
    expect(compileSessionFilter('all').scoreJoin).toBe('')
    const own = compileSessionFilter({
      sessions_request_response_rmt: { scores: { resolved: { equals: true } } },
    })
    expect(own.where).toBe('true')
    expect(own.having).toMatch(
      /^session_id IN \(SELECT session_id FROM scores FINAL .* target_kind = 'session'/,
    )
  })

  it('refuse a score where it cannot be: an aggregate of categories, a like on a number', () => {
    expect(
      refusal(() =>
        compileSessionFilter({
          sessions_request_response_rmt: { max_score: { tone: { equals: 'polite' } } },
        }),
      ),
    ).toMatch(/max_score.tone: compares the max of numbers/)
    expect(refusal(() => compileRequestFilter({ scores: { h: { like: 3 } } }))).toMatch(/unknown operator/)
    expect(refusal(() => compileRequestFilter({ request_response_rmt: { scores: { h: {} } } }))).toMatch(
      /body.filter.request_response_rmt.scores.h: must have exactly one operator/,
    )
  })
})
