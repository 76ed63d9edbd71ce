import { describe, expect, it } from 'vitest'
import { generateHmacKey, signatureHeaders, verifyWebhook } from '../../services/shared/webhooks/signature.ts'

const NOW = Date.UTC(2026, 10, 1, 12, 0, 0)
const TIMESTAMP = Math.floor(NOW / 1000)
const body = JSON.stringify({ version: '2026-11-01', metrics: { cost_usd: 0.25 } })

function signed(keys: string[], over: { body?: string; timestamp?: number } = {}) {
  return signatureHeaders({
    id: 'msg_1',
    timestamp: over.timestamp ?? TIMESTAMP,
    body: over.body ?? body,
    keys,
  })
}

describe('webhook signatures', () => {
  const key = generateHmacKey()

  it('makes whsec_ keys of 32 random bytes', () => {
    expect(key).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(key.slice(6), 'base64')).toHaveLength(32)
    expect(generateHmacKey()).not.toBe(key)
  })

  it('verifies what it signed, with headers in any case', () => {
    const headers = signed([key])
    expect(verifyWebhook({ body, headers, hmacKey: key, now: NOW })).toEqual({ ok: true })
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]))
    expect(verifyWebhook({ body: Buffer.from(body), headers: upper, hmacKey: key, now: NOW })).toEqual({
      ok: true,
    })
  })

  it('refuses a tampered body, a tampered signature, another key and missing headers', () => {
    const headers = signed([key])
    const refused = (input: Partial<Parameters<typeof verifyWebhook>[0]>) =>
      verifyWebhook({ body, headers, hmacKey: key, now: NOW, ...input })
    expect(refused({ body: body.replace('0.25', '0.26') })).toEqual({
      ok: false,
      reason: 'X-Service-Signature does not match',
    })
    const flipped = headers['x-service-signature']?.replace(/^./, (c) => (c === '0' ? '1' : '0'))
    expect(refused({ headers: { ...headers, 'x-service-signature': flipped } })).toMatchObject({ ok: false })
    const mac = headers['webhook-signature']?.slice(3) as string
    const otherMac = Buffer.from(mac, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))
    expect(
      refused({
        headers: { ...headers, 'webhook-signature': `v1,${Buffer.from(otherMac).toString('base64')}` },
      }),
    ).toEqual({ ok: false, reason: 'webhook-signature does not match' })
    // The Standard Webhooks id is signed too: another id with the same signature fails.
    expect(refused({ headers: { ...headers, 'webhook-id': 'msg_2' } })).toEqual({
      ok: false,
      reason: 'webhook-signature does not match',
    })
    expect(refused({ hmacKey: generateHmacKey() })).toEqual({
      ok: false,
      reason: 'X-Service-Signature does not match',
    })
    expect(refused({ headers: {} })).toEqual({ ok: false, reason: 'missing X-Service-Signature' })
    const { 'webhook-id': _, ...withoutId } = headers
    expect(refused({ headers: withoutId })).toEqual({
      ok: false,
      reason: 'missing webhook-id, webhook-timestamp or webhook-signature',
    })
  })

  it('refuses a replay outside the tolerance, on either side', () => {
    const headers = signed([key])
    expect(verifyWebhook({ body, headers, hmacKey: key, now: NOW + 300_000 })).toEqual({ ok: true })
    for (const now of [NOW + 301_000, NOW - 301_000]) {
      expect(verifyWebhook({ body, headers, hmacKey: key, now })).toEqual({
        ok: false,
        reason: 'webhook-timestamp is outside the tolerance',
      })
    }
    expect(
      verifyWebhook({ body, headers, hmacKey: key, now: NOW + 10_000, toleranceSeconds: 5 }),
    ).toMatchObject({
      ok: false,
    })
  })

  it('signs with every active key while rotating; X-Service-Signature with the oldest', () => {
    const newer = generateHmacKey()
    const headers = signed([newer, key])
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2)
    expect(headers['x-service-signature']).toBe(signed([key])['x-service-signature'])
    // A receiver holding only the old key, or both, accepts it.
    expect(verifyWebhook({ body, headers, hmacKey: key, now: NOW })).toEqual({ ok: true })
    expect(verifyWebhook({ body, headers, hmacKey: [newer, key], now: NOW })).toEqual({ ok: true })
    expect(() => signed([])).toThrow('a webhook needs at least one signing key')
  })
})
