import { createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Webhook signing and verification. This file depends on node:crypto only, so a receiver can
 * copy it as is. Two signatures travel with every delivery:
 * - `X-Service-Signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the hmac_key
 *   string exactly as the API returned it (UTF-8 bytes);
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp`
 *   (Unix seconds) and `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 *   keyed with the base64-decoded part of the `whsec_…` hmac_key, one per active key.
 */

const SECRET_PREFIX = 'whsec_'

/** A new hmac_key: `whsec_` and 32 random bytes in base64, as Standard Webhooks libraries expect. */
export function generateHmacKey(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

// Preparing an HMAC key costs more than hashing a small body: keep them, a bounded few.
const keyObjects = new Map<string, KeyObject>()
function keyObject(kind: 'service' | 'standard', hmacKey: string): KeyObject {
  const cacheKey = `${kind}:${hmacKey}`
  let key = keyObjects.get(cacheKey)
  if (!key) {
    const secret = hmacKey.startsWith(SECRET_PREFIX) ? hmacKey.slice(SECRET_PREFIX.length) : hmacKey
    key = createSecretKey(kind === 'service' ? Buffer.from(hmacKey, 'utf8') : Buffer.from(secret, 'base64'))
    if (keyObjects.size >= 10_000) keyObjects.clear()
    keyObjects.set(cacheKey, key)
  }
  return key
}

function serviceSignature(hmacKey: string, body: Uint8Array | string): string {
  return createHmac('sha256', keyObject('service', hmacKey)).update(body).digest('hex')
}

function standardSignature(
  hmacKey: string,
  id: string,
  timestamp: number,
  body: Uint8Array | string,
): string {
  const mac = createHmac('sha256', keyObject('standard', hmacKey))
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest('base64')
  return `v1,${mac}`
}

/**
 * The signature headers of one attempt. `keys` are the active keys, newest first; each makes one
 * `webhook-signature` entry. `X-Service-Signature` has room for one signature, so it is made with
 * the oldest active key — the one receivers already hold — until the rotation window closes: a
 * rotation never breaks a receiver at once, and it has 24 h to deploy the new key.
 */
export function signatureHeaders(input: {
  id: string
  timestamp: number
  body: Uint8Array | string
  keys: readonly string[]
}): Record<string, string> {
  const oldest = input.keys.at(-1)
  if (!oldest) throw new Error('a webhook needs at least one signing key')
  return {
    'x-service-signature': serviceSignature(oldest, input.body),
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': input.keys
      .map((key) => standardSignature(key, input.id, input.timestamp, input.body))
      .join(' '),
  }
}

export interface VerifyInput {
  /** The raw request body, before any JSON parsing. */
  body: Uint8Array | string
  /** Request headers (any case; Node's lower-cased object works as is). */
  headers: Record<string, string | string[] | undefined>
  /** Your hmac_key, or several while you roll over to a rotated one. */
  hmacKey: string | readonly string[]
  /** How far `webhook-timestamp` may be from now. Default 300 s. */
  toleranceSeconds?: number
  /** Now, in Unix milliseconds (for tests). */
  now?: number
}

export type VerifyResult = { ok: true } | { ok: false; reason: string }

/**
 * Verifies a delivery: `X-Service-Signature` must match the body under one of your keys
 * (constant-time), and the Standard Webhooks signature must match with a timestamp inside the
 * tolerance, which is what protects against replays. Answer 401 when `ok` is false.
 */
export function verifyWebhook(input: VerifyInput): VerifyResult {
  const keys = typeof input.hmacKey === 'string' ? [input.hmacKey] : [...input.hmacKey]
  const header = (name: string) => {
    const wanted = name.toLowerCase()
    const found = Object.entries(input.headers).find(([k]) => k.toLowerCase() === wanted)?.[1]
    return Array.isArray(found) ? found[0] : found
  }
  const given = header('x-service-signature')
  if (!given) return { ok: false, reason: 'missing X-Service-Signature' }
  if (!keys.some((key) => safeEqual(given, serviceSignature(key, input.body))))
    return { ok: false, reason: 'X-Service-Signature does not match' }

  const id = header('webhook-id')
  const timestamp = Number(header('webhook-timestamp'))
  const signatures = header('webhook-signature')
  if (!id || !Number.isInteger(timestamp) || !signatures)
    return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' }
  const tolerance = input.toleranceSeconds ?? 300
  const now = Math.floor((input.now ?? Date.now()) / 1000)
  if (Math.abs(now - timestamp) > tolerance)
    return { ok: false, reason: 'webhook-timestamp is outside the tolerance' }
  const expected = keys.map((key) => standardSignature(key, id, timestamp, input.body))
  const matches = signatures.split(' ').some((candidate) => expected.some((e) => safeEqual(candidate, e)))
  return matches ? { ok: true } : { ok: false, reason: 'webhook-signature does not match' }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
