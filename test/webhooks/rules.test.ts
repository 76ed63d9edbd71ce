import { describe, expect, it } from 'vitest'
import { matchesTree } from '../../services/dispatcher/evaluate-filter.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { isBlockedAddress } from '../../services/shared/webhooks/address-guard.ts'
import { webhookFilter } from '../../services/shared/webhooks/filter.ts'
import { isSampled, type PropertyFilter, testEvent } from '../../services/shared/webhooks/payload.ts'
import { nextAfter } from '../../services/shared/webhooks/retry-policy.ts'
import { parseRetryAfter, type SendResult } from '../../services/shared/webhooks/sender.ts'

const result = (over: Partial<SendResult>): SendResult => ({
  ok: false,
  status: 500,
  durationMs: 1,
  responseBody: null,
  error: 'x',
  retryAfterMs: null,
  ...over,
})

/** The dispatcher's decision for propertyFilters alone. */
const matchesFilters = (event: RequestEvent, filters: PropertyFilter[]) =>
  matchesTree(webhookFilter(filters, null).tree, event)

const base = testEvent(
  '00000000-0000-4000-8000-000000000001',
  '00000000-0000-4000-8000-000000000002',
  new Date(0),
)

describe('delivery rules', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.0.0.1', true],
    ['172.31.255.255', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.100.100.200', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['0:0:0:0:0:ffff:a00:1', true],
    ['::ffff:8.8.8.8', false],
    ['fd00:ec2::254', true],
    ['fe80::1', true],
    ['not an address', true],
    ['93.184.215.14', false],
    ['8.8.8.8', false],
    ['2606:4700:4700::1111', false],
  ])('treat %s as blocked: %s', (address, blocked) => {
    expect(isBlockedAddress(address)).toBe(blocked)
  })

  it('follow the schedule with ±10% jitter, never sooner than Retry-After, and fail after the last step', () => {
    const schedule = [1_000, 5_000]
    expect(nextAfter(result({ ok: true, status: 200 }), 0, schedule)).toEqual({ status: 'delivered' })
    expect(nextAfter(result({}), 0, schedule, () => 0)).toEqual({ status: 'pending', delayMs: 900 })
    expect(nextAfter(result({}), 1, schedule, () => 1)).toEqual({ status: 'pending', delayMs: 5_500 })
    expect(nextAfter(result({}), 2, schedule)).toEqual({ status: 'failed', disable: false })
    expect(nextAfter(result({ retryAfterMs: 60_000 }), 0, schedule, () => 0.5)).toEqual({
      status: 'pending',
      delayMs: 60_000,
    })
    expect(nextAfter(result({ status: 410 }), 0, schedule)).toEqual({ status: 'failed', disable: true })
  })

  it('read Retry-After as seconds or as a date', () => {
    const now = Date.parse('2026-11-22T10:00:00Z')
    expect(parseRetryAfter('120', now)).toBe(120_000)
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now)).toBe(30_000)
    expect(parseRetryAfter('soon', now)).toBeNull()
    expect(parseRetryAfter(undefined, now)).toBeNull()
  })

  it('sample deterministically, about as often as asked', () => {
    const ids = Array.from(
      { length: 10_000 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    )
    const hits = ids.filter((id) => isSampled('webhook', id, 30)).length
    expect(hits).toBeGreaterThan(2_800)
    expect(hits).toBeLessThan(3_200)
    expect(ids.filter((id) => isSampled('webhook', id, 30)).length).toBe(hits)
    expect(ids.some((id) => isSampled('webhook', id, 0))).toBe(false)
    expect(ids.every((id) => isSampled('webhook', id, 100))).toBe(true)
  })

  it('match filters by exact key and value', () => {
    const props = (properties: Record<string, string>) => ({ ...base, properties })
    expect(matchesFilters(props({ env: 'prod' }), [])).toBe(true)
    expect(matchesFilters(props({ env: 'prod' }), [{ key: 'env', value: 'prod' }])).toBe(true)
    expect(matchesFilters(props({ env: 'prod' }), [{ key: 'Env', value: 'prod' }])).toBe(false)
    expect(
      matchesFilters(props({ env: 'prod' }), [
        { key: 'env', value: 'prod' },
        { key: 'team', value: '' },
      ]),
    ).toBe(false)
    expect(matchesFilters(props({}), [{ key: 'toString', value: 'x' }])).toBe(false)
  })

  it("match Helicone's session properties against the session, however it arrived", () => {
    const native = { ...base, session_id: 's-1', session_name: 'Checkout', properties: { env: 'prod' } }
    expect(matchesFilters(native, [{ key: 'Helicone-Session-Id', value: 's-1' }])).toBe(true)
    expect(matchesFilters(native, [{ key: 'Helicone-Session-Name', value: 'Checkout' }])).toBe(true)
    expect(matchesFilters(native, [{ key: 'Helicone-Session-Id', value: 's-2' }])).toBe(false)
    // No path: no match, as for a property that is not there, even for the value "".
    expect(matchesFilters(native, [{ key: 'Helicone-Session-Path', value: '' }])).toBe(false)
    // Only the exact spelling is a session property; another spelling is a property like any other.
    expect(matchesFilters(native, [{ key: 'helicone-session-id', value: 's-1' }])).toBe(false)
    // A property of that name that disagrees with the session does not count: the session does.
    const disagreeing = { ...native, properties: { 'Helicone-Session-Id': 'other' } }
    expect(matchesFilters(disagreeing, [{ key: 'Helicone-Session-Id', value: 'other' }])).toBe(false)
  })

  it('match a present property of value "" only where it is there', () => {
    const filters = [{ key: 'team', value: '' }]
    expect(matchesFilters({ ...base, properties: { team: '' } }, filters)).toBe(true)
    expect(matchesFilters({ ...base, properties: {} }, filters)).toBe(false)
  })

  it('decide config.filter with propertyFilters: both must hold', () => {
    const filter = {
      left: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
      operator: 'or',
      right: { request_response_rmt: { cost: { gt: 1 } } },
    }
    const decide = (event: RequestEvent) =>
      matchesTree(webhookFilter([{ key: 'env', value: 'prod' }], filter).tree, event)
    const prod = { ...base, properties: { env: 'prod' } }
    expect(decide({ ...prod, model: 'gpt-4o' })).toBe(true)
    expect(decide({ ...prod, model: 'other', cost_usd: 2 })).toBe(true)
    expect(decide({ ...prod, model: 'other', cost_usd: 0.5 })).toBe(false)
    expect(decide({ ...base, properties: { env: 'dev' }, model: 'gpt-4o' })).toBe(false)
  })

  it('match nothing for a stored filter this version cannot read, and say why', () => {
    const { tree, problem } = webhookFilter([], { request_response_rmt: { retired_field: { equals: 1 } } })
    expect(matchesTree(tree, base)).toBe(false)
    expect(problem).toMatch(/^config\.filter\.request_response_rmt\.retired_field: unknown field/)
  })
})
