import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../services/shared/config.ts'
import { finalOutcome, nextAfter } from '../../services/shared/webhooks/retry-policy.ts'
import type { SendResult } from '../../services/shared/webhooks/sender.ts'

const failed = (over: Partial<SendResult> = {}): SendResult => ({
  ok: false,
  status: 503,
  durationMs: 1,
  responseBody: null,
  error: 'unavailable',
  retryAfterMs: null,
  ...over,
})
const delivered = failed({ ok: true, status: 204, error: null })

describe('the webhook retry policy', () => {
  const schedule = loadConfig({}).TALLY_WEBHOOK_RETRY_SCHEDULE

  it('waits each step of the default schedule within ±10%, then fails without disabling', () => {
    expect(schedule.length).toBeGreaterThan(1)
    schedule.forEach((step, attempt) => {
      for (const random of [0, 0.5, 0.999999]) {
        const next = nextAfter(failed(), attempt, schedule, () => random)
        expect(next.status).toBe('pending')
        const { delayMs } = next as { delayMs: number }
        expect(delayMs).toBeGreaterThanOrEqual(Math.round(step * 0.9))
        expect(delayMs).toBeLessThanOrEqual(Math.round(step * 1.1))
      }
    })
    expect(nextAfter(failed(), schedule.length, schedule)).toEqual({ status: 'failed', disable: false })
    expect(nextAfter(failed(), schedule.length + 5, schedule)).toEqual({ status: 'failed', disable: false })
  })

  it('never retries sooner than Retry-After, and caps Retry-After at a day', () => {
    expect(nextAfter(failed({ retryAfterMs: 120_000 }), 0, [1_000], () => 0.5)).toEqual({
      status: 'pending',
      delayMs: 120_000,
    })
    expect(nextAfter(failed({ retryAfterMs: 30 * 86_400_000 }), 0, [1_000], () => 0.5)).toEqual({
      status: 'pending',
      delayMs: 86_400_000,
    })
    // Retry-After does not extend a used-up schedule.
    expect(nextAfter(failed({ retryAfterMs: 1_000 }), 1, [1_000])).toEqual({
      status: 'failed',
      disable: false,
    })
  })

  it('delivers on 2xx, disables on 410, and a final attempt is never retried', () => {
    expect(nextAfter(delivered, 3, schedule)).toEqual({ status: 'delivered' })
    expect(nextAfter(failed({ status: 410 }), 0, schedule)).toEqual({ status: 'failed', disable: true })
    expect(finalOutcome(delivered)).toEqual({ status: 'delivered' })
    expect(finalOutcome(failed({ status: 410 }))).toEqual({ status: 'failed', disable: false })
  })

  it('takes a schedule of durations from the configuration and refuses a bad one by name', () => {
    expect(loadConfig({ TALLY_WEBHOOK_RETRY_SCHEDULE: '1s, 2m,1h' }).TALLY_WEBHOOK_RETRY_SCHEDULE).toEqual([
      1_000, 120_000, 3_600_000,
    ])
    expect(() => loadConfig({ TALLY_WEBHOOK_RETRY_SCHEDULE: '1s,later' })).toThrowError(
      /TALLY_WEBHOOK_RETRY_SCHEDULE: "later" is not a duration/,
    )
  })
})
