import { randomBytes, randomInt } from 'node:crypto'
import { connect, createServer } from 'node:net'
import { Redis } from 'ioredis'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientKey } from '../../services/api/http/auth-failures.ts'
import {
  createMemoryRateLimiter,
  createRedisRateLimiter,
  type RateLimiter,
} from '../../services/api/http/rate-limiter.ts'
import { callApi } from '../support/api.ts'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'

const redisUrl = engines().redisUrl

function limitsPerOrganization(name: string, env: () => Record<string, string>) {
  describe(`rate limits per organization (${name})`, () => {
    let tally: TestTally
    beforeAll(async () => {
      tally = await startTestTally({
        env: {
          TALLY_RATE_LIMIT_PER_MINUTE: '5',
          TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: '1000',
          TALLY_INTAKE_MAX_BYTES: String(200 * 1024),
          TALLY_RATE_LIMIT_BYTES_PER_MINUTE: String(300 * 1024),
          TALLY_MAX_API_KEYS_PER_ORG: '3',
          ...env(),
        },
      })
    })
    afterAll(() => tally.close())

    const newKey = async (org: { headers: Record<string, string> }) => {
      const res = await tally.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: org.headers,
        payload: { name: 'another', role: 'admin' },
      })
      return {
        status: res.statusCode,
        body: res.json(),
        headers: { authorization: `Bearer ${res.json().data?.api_key}` },
      }
    }
    const log = (headers: Record<string, string>, payload: unknown) =>
      tally.app.inject({ method: 'POST', url: '/v1/request/log', headers, payload: payload as object })
    const batch = (n: number) => Array.from({ length: n }, () => ({ model: 'gpt-4o' }))
    /** An intake whose body is not JSON: 400 once read. */
    const unreadable = (headers: Record<string, string>) =>
      tally.app.inject({
        method: 'POST',
        url: '/v1/request/log',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: '{"events": [not json',
      })

    it('counts down in headers, then answers 429 in the envelope with Retry-After, per organization whatever its key', async () => {
      const org = await tally.newOrg()
      // Creating the second key is the organization's first request.
      const second = await newKey(org)
      expect(second.status).toBe(201)
      const seen: string[] = []
      for (let i = 0; i < 4; i++) {
        const res = await tally.app.inject({
          method: 'GET',
          url: '/v1/api-keys',
          headers: i % 2 ? org.headers : second.headers,
        })
        expect(res.statusCode).toBe(200)
        expect(res.headers['ratelimit-limit']).toBe('5')
        seen.push(String(res.headers['ratelimit-remaining']))
      }
      expect(seen).toEqual(['3', '2', '1', '0'])
      const limited = await tally.app.inject({ method: 'GET', url: '/v1/api-keys', headers: second.headers })
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

    it('counts intake events: a batch that passes the events per minute is a 429 naming them', async () => {
      const org = await tally.newOrg()
      expect((await log(org.headers, batch(600))).statusCode).toBe(201)
      const limited = await log(org.headers, batch(600))
      expect(limited.statusCode).toBe(429)
      expect(limited.json().error).toMatch(/^Rate limit of 1000 events per minute exceeded; retry in \d+ s$/)
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      // Another organization's events are its own.
      expect((await log((await tally.newOrg()).headers, batch(600))).statusCode).toBe(201)
    })

    it('refuses an intake before reading its body while the organization has no events left; other routes answer', async () => {
      const org = await tally.newOrg()
      expect((await log(org.headers, batch(600))).statusCode).toBe(201)
      expect((await log(org.headers, batch(600))).statusCode).toBe(429)
      // Bodies that would be 400 once read are not read: the organization is out of events.
      const unread = await unreadable(org.headers)
      expect(unread.statusCode).toBe(429)
      expect(unread.json().error).toMatch(/^Rate limit of 1000 events per minute exceeded; retry in \d+ s$/)
      expect(Number(unread.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      const otlp = await tally.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...org.headers, 'content-type': 'application/x-protobuf' },
        payload: Buffer.from([0xff, 0xff, 0xff]),
      })
      expect(otlp.statusCode).toBe(429)
      expect(otlp.json().error).toMatch(/events per minute exceeded/)
      // Not an intake: answered as usual.
      expect(
        (await tally.app.inject({ method: 'GET', url: '/v1/api-keys', headers: org.headers })).statusCode,
      ).toBe(200)
      // With events left, the same body is read and refused for what it is.
      expect((await unreadable((await tally.newOrg()).headers)).statusCode).toBe(400)
    })

    it('counts request-body bytes, from Content-Length before the body is read or, chunked, once read', async () => {
      const org = await tally.newOrg()
      const event = (kb: number) => ({ model: 'gpt-4o', request: { text: 'x'.repeat(kb * 1024) } })
      // 300 KiB a minute: one 160 KiB body passes, a second one does not.
      expect((await log(org.headers, event(160))).statusCode).toBe(201)
      const limited = await log(org.headers, event(160))
      expect(limited.statusCode).toBe(429)
      expect(limited.json().error).toMatch(
        /^Rate limit of 307200 bytes of request bodies per minute exceeded/,
      )

      // A body without Content-Length is counted once read.
      const chunked = await tally.newOrg()
      const body = JSON.stringify(event(160))
      const send = () =>
        fetch(`${tally.url}/v1/request/log`, {
          method: 'POST',
          headers: { ...chunked.headers, 'content-type': 'application/json' },
          body: new Blob([body]).stream(),
          duplex: 'half',
        } as RequestInit)
      expect((await send()).status).toBe(201)
      expect((await send()).status).toBe(429)
    })

    it('holds at most TALLY_MAX_API_KEYS_PER_ORG keys: 409 beyond, even when created at once', async () => {
      const org = await tally.newOrg()
      const results = await Promise.all([newKey(org), newKey(org), newKey(org)])
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 409])
      expect(results.find((r) => r.status === 409)?.body.error).toBe(
        'This organization already holds 3 API keys, the most it may (TALLY_MAX_API_KEYS_PER_ORG); delete one first',
      )
      const listed = await tally.app.inject({ method: 'GET', url: '/v1/api-keys', headers: org.headers })
      expect(listed.json().data).toHaveLength(3)
    })
  })
}

// Windows in Redis outlive a test run: every run counts against addresses of its own.
const someIPv6 = () => `2001:db8:${randomInt(0x10000).toString(16)}:${randomInt(0x10000).toString(16)}::1`
const someIPv4 = () => `198.18.${randomInt(256)}.${randomInt(256)}`
const aGuess = () => `Bearer tly_${randomBytes(24).toString('base64url')}`
const PROXY = '192.0.2.10'
const ADMIN_KEY = `admin-${randomBytes(24).toString('hex')}`

function authFailuresPerAddress(name: string, env: () => Record<string, string>) {
  describe(`failed authentication per client address (${name})`, () => {
    let tally: TestTally
    beforeAll(async () => {
      tally = await startTestTally({
        env: {
          TALLY_AUTH_FAILURES_PER_MINUTE: '3',
          TALLY_TRUST_PROXY: PROXY,
          TALLY_ADMIN_API_KEY: ADMIN_KEY,
          ...env(),
        },
      })
    })
    afterAll(() => tally.close())

    const listKeys = (authorization: string, remoteAddress: string, headers: Record<string, string> = {}) =>
      tally.app.inject({
        method: 'GET',
        url: '/v1/api-keys',
        headers: { authorization, ...headers },
        remoteAddress,
      })

    it('answers 401 up to the limit, then 429 with Retry-After to that client, valid key or not; other clients are unaffected', async () => {
      const org = await tally.newOrg()
      const address = someIPv6()
      for (let i = 0; i < 3; i++) expect((await listKeys(aGuess(), address)).statusCode).toBe(401)
      const limited = await listKeys(aGuess(), address)
      expect(limited.statusCode).toBe(429)
      expect(limited.json()).toEqual({
        data: null,
        error: expect.stringMatching(
          /^More than 3 failed authentications in a minute from this address; retry in \d+ s$/,
        ),
      })
      const retryAfter = Number(limited.headers['retry-after'])
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)

      expect((await listKeys(org.headers.authorization, address)).statusCode).toBe(429)
      // Another address in the same IPv6 /64 is the same client.
      const neighbour = address.replace(/::1$/, '::2')
      expect((await listKeys(org.headers.authorization, neighbour)).statusCode).toBe(429)
      expect((await listKeys(org.headers.authorization, someIPv6())).statusCode).toBe(200)
      expect((await listKeys(org.headers.authorization, someIPv4())).statusCode).toBe(200)
    })

    it('counts failures on the instance-admin API with the others', async () => {
      const org = await tally.newOrg()
      const address = someIPv4()
      const listOrganizations = (authorization: string, remoteAddress: string) =>
        tally.app.inject({
          method: 'GET',
          url: '/admin/v1/organizations',
          headers: { authorization },
          remoteAddress,
        })
      for (let i = 0; i < 2; i++) expect((await listOrganizations(aGuess(), address)).statusCode).toBe(401)
      expect((await listKeys(aGuess(), address)).statusCode).toBe(401)
      expect((await listOrganizations(aGuess(), address)).statusCode).toBe(429)
      expect((await listOrganizations(`Bearer ${ADMIN_KEY}`, address)).statusCode).toBe(429)
      expect((await listKeys(org.headers.authorization, address)).statusCode).toBe(429)
      expect((await listOrganizations(`Bearer ${ADMIN_KEY}`, someIPv4())).statusCode).toBe(200)
    })

    it('behind a trusted proxy, counts the client the proxy forwards for', async () => {
      const org = await tally.newOrg()
      const client = someIPv4()
      const viaProxy = (authorization: string, forwardedFor: string) =>
        listKeys(authorization, PROXY, { 'x-forwarded-for': forwardedFor })
      for (let i = 0; i < 3; i++) expect((await viaProxy(aGuess(), client)).statusCode).toBe(401)
      expect((await viaProxy(aGuess(), client)).statusCode).toBe(429)
      expect((await viaProxy(org.headers.authorization, someIPv4())).statusCode).toBe(200)
      // An untrusted sender cannot pick the address it is counted under.
      const sender = someIPv4()
      for (let i = 0; i < 3; i++)
        expect((await listKeys(aGuess(), sender, { 'x-forwarded-for': someIPv4() })).statusCode).toBe(401)
      expect((await listKeys(aGuess(), sender, { 'x-forwarded-for': someIPv4() })).statusCode).toBe(429)
    })
  })
}

limitsPerOrganization('in memory', () => ({}))
authFailuresPerAddress('in memory', () => ({}))
describe.skipIf(!redisUrl)('with Redis', () => {
  limitsPerOrganization('redis', () => ({ REDIS_URL: redisUrl ?? '' }))
  authFailuresPerAddress('redis', () => ({ REDIS_URL: redisUrl ?? '' }))

  it('shares one window between processes', async () => {
    const log = pino({ level: 'silent' })
    const a = createRedisRateLimiter(redisUrl ?? '', log)
    const b = createRedisRateLimiter(redisUrl ?? '', log)
    try {
      const key = `shared-${Date.now()}-${Math.random()}`
      await a.hit(key, 2)
      await b.hit(key, 2)
      expect((await a.hit(key, 2)).allowed).toBe(false)
      // Costs add up across processes too (events, bytes).
      const bytes = `${key}-bytes`
      expect(await a.hit(bytes, 100, { cost: 60 })).toMatchObject({ allowed: true, remaining: 40 })
      expect(await b.hit(bytes, 100, { cost: 41 })).toMatchObject({ allowed: false, remaining: 0 })
      // And the one-second windows: 30 + 30 within one second pass 50 a second, wherever counted
      // (a second that turns between the two hits is taken again).
      const burst = async (n: number): Promise<unknown> => {
        const k = `${key}-burst-${n}`
        const at = Math.floor(Date.now() / 1000)
        await a.hit(k, 1_000, { cost: 30, perSecond: 50 })
        const second = await b.hit(k, 1_000, { cost: 30, perSecond: 50 })
        return Math.floor(Date.now() / 1000) === at || n >= 3 ? second : burst(n + 1)
      }
      expect(await burst(1)).toMatchObject({ allowed: false, window: 'second', limit: 50 })
    } finally {
      await a.close()
      await b.close()
    }
  })
})

describe.skipIf(!redisUrl)('the Redis limiter’s script', () => {
  it('counts on after Redis forgot it (a restart, SCRIPT FLUSH): sent again by its text', async () => {
    const limiter = createRedisRateLimiter(redisUrl ?? '', pino({ level: 'silent' }))
    const admin = new Redis(redisUrl ?? '')
    try {
      const key = `flushed-${Date.now()}-${Math.random()}`
      expect(await limiter.hit(key, 2)).toMatchObject({ allowed: true, remaining: 1 })
      await admin.script('FLUSH')
      expect(await limiter.hit(key, 2)).toMatchObject({ allowed: true, remaining: 0 })
      expect((await limiter.hit(key, 2)).allowed).toBe(false)
    } finally {
      await limiter.close()
      admin.disconnect()
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
  it('with a per-second allowance, a minute’s worth cannot arrive in one second; the minute still caps', async () => {
    let now = 60_000 * 200
    const limiter = createMemoryRateLimiter(() => now)
    const hit = (cost: number) => limiter.hit('events', 100, { cost, perSecond: 40 })
    expect(await hit(30)).toMatchObject({ allowed: true, remaining: 70, window: 'minute' })
    expect(await hit(20)).toMatchObject({ allowed: false, limit: 40, window: 'second', resetMs: 1_000 })
    now += 1_000
    expect(await hit(20)).toMatchObject({ allowed: true, window: 'minute' })
    now += 1_000
    // Over the minute too: the minute is what to wait for.
    expect(await hit(40)).toMatchObject({ allowed: false, limit: 100, window: 'minute', resetMs: 58_000 })
    await limiter.close()
  })

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

describe('failed authentication and Postgres', () => {
  it('a repeated unknown key, and any key from an address over the limit, is answered without a look-up', async () => {
    const tally = await startTestTally({ env: { TALLY_AUTH_FAILURES_PER_MINUTE: '3' } })
    try {
      const address = someIPv4()
      const guess = aGuess()
      const listKeys = (authorization: string) =>
        tally.app.inject({
          method: 'GET',
          url: '/v1/api-keys',
          headers: { authorization },
          remoteAddress: address,
        })
      expect((await listKeys(guess)).statusCode).toBe(401)
      // From here on, a look-up in Postgres would fail (500).
      await tally.sql.end()
      expect((await listKeys(guess)).statusCode).toBe(401)
      expect((await listKeys(guess)).statusCode).toBe(401)
      expect((await listKeys(guess)).statusCode).toBe(429)
      expect((await listKeys(aGuess())).statusCode).toBe(429)
    } finally {
      await tally.close()
    }
  })
})

describe('the client a limit counts', () => {
  it('is an IPv4 address, or the /64 of an IPv6 one', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9')
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9')
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64')
    expect(clientKey('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64')
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(clientKey('::1')).toBe('0:0:0:0::/64')
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(clientKey('64:ff9b::203.0.113.9')).toBe('64:ff9b:0:0::/64')
  })
})

/** hitAll on a limiter: every window of a request counted at once, nothing after a refusal. */
function hitAllCounts(name: string, open: () => RateLimiter) {
  describe(`counting a request's windows at once (${name})`, () => {
    it('counts each in order and stops after the first refused: what follows it is not counted', async () => {
      const limiter = open()
      try {
        const key = `all-${Date.now()}-${Math.random()}`
        const hits = [
          { key: `${key}-requests`, limit: 2 },
          { key: `${key}-bytes`, limit: 1_000, cost: 300, perSecond: 500 },
          { key: `${key}-events`, limit: 10, cost: 0, perSecond: 5 },
        ]
        expect(await limiter.hitAll(hits)).toMatchObject([
          { allowed: true, remaining: 1 },
          { allowed: true, remaining: 700, window: 'minute' },
          { allowed: true, remaining: 10 },
        ])
        // The bytes' second refuses (600 > 500): the events after it are not looked at.
        expect(await limiter.hitAll(hits)).toMatchObject([
          { allowed: true, remaining: 0 },
          { allowed: false, limit: 500, window: 'second' },
        ])
        // The requests' minute refuses: nothing after it is counted, the bytes stay at 600.
        expect(await limiter.hitAll(hits)).toMatchObject([{ allowed: false, remaining: 0, window: 'minute' }])
        expect(await limiter.hit(`${key}-bytes`, 1_000, { cost: 0 })).toMatchObject({ remaining: 400 })
      } finally {
        await limiter.close()
      }
    })
  })
}
hitAllCounts('in memory', () => createMemoryRateLimiter(() => 1_000))
describe.skipIf(!redisUrl)('with Redis', () => {
  hitAllCounts('redis', () => createRedisRateLimiter(redisUrl ?? '', pino({ level: 'silent' })))

  it("counts an intake's request, bytes and events look in one round trip, its events in a second", async () => {
    // A proxy in front of Redis that counts the scripts sent through it.
    const target = new URL(redisUrl ?? '')
    let scripts = 0
    const proxy = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname)
      client.on('data', (d: Buffer) => {
        scripts += (d.toString('latin1').match(/evalsha/gi) ?? []).length
        upstream.write(d)
      })
      upstream.on('data', (d) => client.write(d))
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        a.on('close', () => b.destroy())
        a.on('error', () => b.destroy())
      }
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const { port } = proxy.address() as { port: number }
    const tally = await startTestTally({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } })
    try {
      const org = await tally.newOrg()
      const log = () =>
        callApi(tally.app, 'POST', '/v1/request/log', { as: org, body: [{ model: 'gpt-4o' }] })
      expect((await log()).status).toBe(201) // the script loaded, the connection made
      const before = scripts
      expect((await log()).status).toBe(201)
      expect(scripts - before).toBe(2)
    } finally {
      await tally.close()
      proxy.close()
    }
  })
})
