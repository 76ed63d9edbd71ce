import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryRateLimiter, createRedisRateLimiter } from '../../services/shared/rate-limit.ts'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'

const redisUrl = engines().redisUrl

function limitsPerKey(name: string, env: () => Record<string, string>) {
  describe(`rate limits (${name})`, () => {
    let tally: TestTally
    beforeAll(async () => {
      tally = await startTestTally({ env: { TALLY_RATE_LIMIT_PER_MINUTE: '5', ...env() } })
    })
    afterAll(() => tally.close())

    it('counts down in headers, then answers 429 in the envelope with Retry-After, per key', async () => {
      const org = await tally.newOrg()
      const seen: string[] = []
      for (let i = 0; i < 5; i++) {
        const res = await tally.app.inject({ method: 'GET', url: '/v1/api-keys', headers: org.headers })
        expect(res.statusCode).toBe(200)
        expect(res.headers['ratelimit-limit']).toBe('5')
        seen.push(String(res.headers['ratelimit-remaining']))
      }
      expect(seen).toEqual(['4', '3', '2', '1', '0'])
      const limited = await tally.app.inject({ method: 'GET', url: '/v1/api-keys', headers: org.headers })
      expect(limited.statusCode).toBe(429)
      expect(limited.json()).toEqual({
        data: null,
        error: expect.stringMatching(/Rate limit of 5 requests per minute exceeded/),
      })
      const retryAfter = Number(limited.headers['retry-after'])
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(Number(limited.headers['ratelimit-reset'])).toBe(retryAfter)

      const other = await tally.newOrg()
      expect(
        (await tally.app.inject({ method: 'GET', url: '/v1/api-keys', headers: other.headers })).statusCode,
      ).toBe(200)
    })
  })
}

limitsPerKey('in memory', () => ({}))
describe.skipIf(!redisUrl)('with Redis', () => {
  limitsPerKey('redis', () => ({ REDIS_URL: redisUrl ?? '' }))

  it('shares one window between processes', async () => {
    const log = pino({ level: 'silent' })
    const a = createRedisRateLimiter(redisUrl ?? '', log)
    const b = createRedisRateLimiter(redisUrl ?? '', log)
    try {
      const key = `shared-${Date.now()}-${Math.random()}`
      await a.hit(key, 2)
      await b.hit(key, 2)
      expect((await a.hit(key, 2)).allowed).toBe(false)
    } finally {
      await a.close()
      await b.close()
    }
  })
})

describe('when Redis does not answer', () => {
  it('lets requests through at once rather than failing them', async () => {
    const { freePort } = await import('../../services/shared/net.ts')
    const limiter = createRedisRateLimiter(`redis://127.0.0.1:${await freePort()}`, pino({ level: 'silent' }))
    try {
      const started = Date.now()
      expect(await limiter.hit('k', 1)).toMatchObject({ allowed: true, limit: 1 })
      expect(Date.now() - started).toBeLessThan(2_000)
    } finally {
      await limiter.close()
    }
  })
})

describe('memory limiter windows', () => {
  it('resets when the minute turns', async () => {
    let now = 60_000 * 100 + 59_000
    const limiter = createMemoryRateLimiter(() => now)
    await limiter.hit('k', 1)
    expect((await limiter.hit('k', 1)).allowed).toBe(false)
    now += 1_000
    expect(await limiter.hit('k', 1)).toMatchObject({ allowed: true, remaining: 0, resetMs: 60_000 })
    await limiter.close()
  })
})
