import { describe, expect, it } from 'vitest'
import {
  CONFIG_VARIABLES,
  durationText,
  loadConfig,
  parseDuration,
  publicUrl,
} from '../../services/shared/config.ts'

describe('configuration', () => {
  it('has defaults for everything, so a bare environment starts embedded', () => {
    const config = loadConfig({})
    expect(config.PORT).toBe(8787)
    expect(config.HOST).toBe('127.0.0.1')
    expect(config.TALLY_DATA_DIR).toBe('./.tally')
    expect(config.DATABASE_URL).toBeUndefined()
    expect(config.TALLY_ADMIN_API_KEY).toBeUndefined()
    expect(config.KAFKA_BROKERS).toBeUndefined()
    expect(config.TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(false)
    expect(config.TALLY_WEBHOOK_RETRY_SCHEDULE[0]).toBe(5_000)
    expect(config.TALLY_WEBHOOK_RETRY_SCHEDULE.at(-1)).toBe(86_400_000)
  })

  it('reads every variable left empty, or only whitespace, as unset', () => {
    const defaults = loadConfig({})
    for (const name of CONFIG_VARIABLES) {
      for (const blank of ['', '  ', '\t\n']) {
        expect({ name, blank, config: loadConfig({ [name]: blank }) }).toEqual({
          name,
          blank,
          config: defaults,
        })
      }
    }
    // As a compose file or a .env with `TALLY_DATA_DIR=` gives it: the default, never the working directory.
    expect(loadConfig({ TALLY_DATA_DIR: '' }).TALLY_DATA_DIR).toBe('./.tally')
  })

  it('reads values without the whitespace around them', () => {
    const config = loadConfig({
      TALLY_DATA_DIR: ' /var/lib/tally\n',
      PORT: ' 9000 ',
      TALLY_LOG_LEVEL: 'warn ',
    })
    expect(config).toMatchObject({ TALLY_DATA_DIR: '/var/lib/tally', PORT: 9000, TALLY_LOG_LEVEL: 'warn' })
  })

  it('names every bad variable and its rule', () => {
    expect(() => loadConfig({ PORT: 'eighty', TALLY_WEBHOOK_RETRY_SCHEDULE: '5s,soon' })).toThrowError(
      /PORT: .*\n.*TALLY_WEBHOOK_RETRY_SCHEDULE: "soon" is not a duration/,
    )
    expect(() => loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrowError(
      /S3_BUCKET: required when S3_ENDPOINT is set/,
    )
    expect(() => loadConfig({ TALLY_LOG_LEVEL: 'loud' })).toThrowError(/TALLY_LOG_LEVEL/)
    expect(() => loadConfig({ TALLY_BOOTSTRAP_API_KEY: 'secret' })).toThrowError(
      /TALLY_BOOTSTRAP_API_KEY: must be at least 32/,
    )
    expect(() => loadConfig({ TALLY_ADMIN_API_KEY: 'secret' })).toThrowError(
      /TALLY_ADMIN_API_KEY: must be at least 32/,
    )
    const key = 'k'.repeat(32)
    expect(() => loadConfig({ TALLY_ADMIN_API_KEY: key, TALLY_BOOTSTRAP_API_KEY: key })).toThrowError(
      /TALLY_ADMIN_API_KEY: must differ from TALLY_BOOTSTRAP_API_KEY/,
    )
  })

  it('has query limits that the sessions benchmark stays inside, each settable', () => {
    const config = loadConfig({})
    expect(config.TALLY_QUERY_MAX_EXECUTION_TIME).toBe(10_000)
    expect(config.TALLY_QUERY_MAX_ROWS_TO_READ).toBe(100_000_000)
    expect(config.TALLY_QUERY_MAX_THREADS).toBeGreaterThanOrEqual(1)
    const set = loadConfig({ TALLY_QUERY_MAX_EXECUTION_TIME: '500ms', TALLY_QUERY_MAX_MEMORY: '1048576' })
    expect(set.TALLY_QUERY_MAX_EXECUTION_TIME).toBe(500)
    expect(set.TALLY_QUERY_MAX_MEMORY).toBe(1_048_576)
    expect(() => loadConfig({ TALLY_QUERY_MAX_EXECUTION_TIME: '10ms' })).toThrowError(
      /TALLY_QUERY_MAX_EXECUTION_TIME: must be at least 100ms/,
    )
    expect(() => loadConfig({ TALLY_QUERY_MAX_ROWS_TO_READ: '0' })).toThrowError(
      /TALLY_QUERY_MAX_ROWS_TO_READ/,
    )
  })

  it('names a duration variable that is not a duration', () => {
    expect(() => loadConfig({ TALLY_KAFKA_SEND_TIMEOUT: 'soon' })).toThrowError(
      /TALLY_KAFKA_SEND_TIMEOUT: "soon" is not a duration/,
    )
  })

  it("bounds the engines' connect and request timeouts both ways: a timer past 2^31 ms would fire at once", () => {
    expect(loadConfig({ TALLY_POSTGRES_CONNECT_TIMEOUT: '2500ms' }).TALLY_POSTGRES_CONNECT_TIMEOUT).toBe(
      2_500,
    )
    for (const [name, over] of [
      ['TALLY_POSTGRES_CONNECT_TIMEOUT', '10m'],
      ['TALLY_S3_CONNECT_TIMEOUT', '10m'],
      ['TALLY_S3_REQUEST_TIMEOUT', '1h'],
    ] as const) {
      expect(() => loadConfig({ [name]: '30d' })).toThrowError(`${name}: must be at most ${over}`)
      expect(() => loadConfig({ [name]: '10ms' })).toThrowError(`${name}: must be at least 100ms`)
    }
  })

  it('refuses any timer setting past 24 days (a timer past 2^31 ms fires at once), and huge numbers', () => {
    const timers = CONFIG_VARIABLES.filter((name) => {
      const value = loadConfig({})[name]
      return typeof value === 'number' && /_(TIMEOUT|TTL|LEASE|DELAY|INTERVAL|TIME)$/.test(name)
    })
    expect(timers.length).toBeGreaterThan(15)
    for (const name of timers) {
      expect(() => loadConfig({ [name]: '25d' }), name).toThrowError(`${name}: must be at most`)
      expect(() => loadConfig({ [name]: '99999999999999999999999d' }), name).toThrowError(name)
    }
    // Those with no tighter bound of their own take the longest a timer can wait.
    for (const name of [
      'TALLY_SIGNED_LINK_TTL',
      'TALLY_EXPORT_SETTLE_DELAY',
      'TALLY_WEBHOOK_CLAIM_TTL',
    ] as const) {
      expect(loadConfig({ [name]: '24d' })[name]).toBe(24 * 86_400_000)
    }
    for (const name of ['TALLY_WEBHOOK_RETRY_SCHEDULE', 'TALLY_EXPORT_RETRY_SCHEDULE'] as const) {
      expect(() => loadConfig({ [name]: '5s,30d' })).toThrowError(`${name}: wait 2 must be at most 24d`)
    }
    // A window is not a timer: a year is allowed, not more.
    expect(loadConfig({ TALLY_EXPORT_MAX_WINDOW: '366d' }).TALLY_EXPORT_MAX_WINDOW).toBe(366 * 86_400_000)
    expect(() => loadConfig({ TALLY_EXPORT_MAX_WINDOW: '367d' })).toThrowError('must be at most 366d')
  })

  it('gives each shutdown step a deadline', () => {
    expect(loadConfig({}).TALLY_SHUTDOWN_STEP_TIMEOUT).toBe(15_000)
    expect(() => loadConfig({ TALLY_SHUTDOWN_STEP_TIMEOUT: '5ms' })).toThrowError(
      /TALLY_SHUTDOWN_STEP_TIMEOUT: must be at least 100ms/,
    )
  })

  it('gives HTTP clients deadlines, the headers one within the whole request one', () => {
    const config = loadConfig({})
    expect(config.TALLY_HTTP_HEADERS_TIMEOUT).toBe(10_000)
    expect(config.TALLY_HTTP_REQUEST_TIMEOUT).toBe(30_000)
    expect(() => loadConfig({ TALLY_HTTP_HEADERS_TIMEOUT: '40s' })).toThrowError(
      /TALLY_HTTP_HEADERS_TIMEOUT: must not exceed TALLY_HTTP_REQUEST_TIMEOUT/,
    )
  })

  it('limits failed authentications per address, and trusts only the proxies it is given', () => {
    const config = loadConfig({})
    expect(config.TALLY_AUTH_FAILURES_PER_MINUTE).toBe(60)
    expect(config.TALLY_TRUST_PROXY).toBe(false)
    expect(loadConfig({ TALLY_TRUST_PROXY: '10.0.0.0/8, 2001:db8::1, loopback' }).TALLY_TRUST_PROXY).toEqual([
      '10.0.0.0/8',
      '2001:db8::1',
      'loopback',
    ])
    expect(() => loadConfig({ TALLY_TRUST_PROXY: 'true' })).toThrowError(
      /TALLY_TRUST_PROXY: "true" is not an address, a CIDR range/,
    )
  })

  it('names the address the API listens on, the port it was given with PORT=0, an IPv6 host in brackets', () => {
    expect(publicUrl(loadConfig({}))).toBe('http://127.0.0.1:8787')
    expect(publicUrl(loadConfig({ PORT: '0' }), 41234)).toBe('http://127.0.0.1:41234')
    expect(publicUrl(loadConfig({ HOST: '::1', PORT: '0' }), 41234)).toBe('http://[::1]:41234')
    expect(publicUrl(loadConfig({ HOST: '::' }))).toBe('http://[::]:8787')
    expect(publicUrl(loadConfig({ TALLY_PUBLIC_URL: 'https://tally.example.com' }), 41234)).toBe(
      'https://tally.example.com',
    )
  })

  it('parses durations', () => {
    expect(parseDuration('250ms')).toBe(250)
    expect(parseDuration('2m')).toBe(120_000)
    expect(() => parseDuration('2 minutes')).toThrow()
  })

  it('writes durations back in the largest unit that divides them, as parseDuration reads them', () => {
    for (const [ms, text] of [
      [2_678_400_000, '31d'],
      [7_200_000, '2h'],
      [120_000, '2m'],
      [90_000, '90s'],
      [1_500, '1500ms'],
    ] as const) {
      expect(durationText(ms)).toBe(text)
      expect(parseDuration(text)).toBe(ms)
    }
  })
})
