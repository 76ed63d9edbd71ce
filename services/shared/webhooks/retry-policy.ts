import type { SendResult } from './sender.ts'

/** What follows an attempt: delivered, failed for good (disabling the webhook or not), or tried again later. */
export type Next =
  | { status: 'delivered' }
  | { status: 'failed'; disable: boolean }
  | { status: 'pending'; delayMs: number }

// A Retry-After longer than a day is the receiver's mistake, not a plan.
const MAX_RETRY_AFTER_MS = 86_400_000

/**
 * What follows an attempt: 2xx is delivered; 410 fails and disables the webhook; anything else
 * waits the next step of the schedule (±10% jitter, never less than Retry-After) until the
 * schedule is used up, then fails.
 */
export function nextAfter(
  result: SendResult,
  roundAttemptsBefore: number,
  schedule: readonly number[],
  random: () => number = Math.random,
): Next {
  if (result.ok) return { status: 'delivered' }
  if (result.status === 410) return { status: 'failed', disable: true }
  const step = schedule[roundAttemptsBefore]
  if (step === undefined) return { status: 'failed', disable: false }
  const jittered = Math.round(step * (0.9 + 0.2 * random()))
  const retryAfter = Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)
  return { status: 'pending', delayMs: Math.max(jittered, retryAfter) }
}

/**
 * The outcome of an attempt that is never tried again nor disables its webhook, whatever the
 * receiver answered: a test event, or a delivery of a webhook disabled since it was recorded.
 */
export function finalOutcome(result: SendResult): Next {
  return result.ok ? { status: 'delivered' } : { status: 'failed', disable: false }
}
