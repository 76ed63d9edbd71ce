import { createHash, randomBytes } from 'node:crypto'

const PREFIX = 'tly_'

/** A new API key secret: 256 random bits. Shown once; only its hash is kept. */
export function generateKeySecret(): string {
  return PREFIX + randomBytes(32).toString('base64url')
}

export function hashKey(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest()
}

/** What lists show so people can tell keys apart without the secret. */
export function keyPrefix(secret: string): string {
  return secret.slice(0, PREFIX.length + 8)
}
