import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../services/shared/config.ts'

// The settings that bound what a tenant and a broker fault can cost: defaults, and the
// combinations that could never work refused at start.
describe('configuration of bounds', () => {
  it('has bounds by default: queue and batch bytes, per-organization limits, consumer timeouts', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      TALLY_PUBLISH_QUEUE_MAX_BYTES: 64 * 1024 * 1024,
      TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG: 16 * 1024 * 1024,
      TALLY_INGEST_CHUNK_BYTES: 32 * 1024 * 1024,
      TALLY_WEBHOOK_HELD_BYTES: 64 * 1024 * 1024,
      TALLY_RATE_LIMIT_PER_MINUTE: 6_000,
      TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: 120_000,
      TALLY_RATE_LIMIT_BYTES_PER_MINUTE: 1024 * 1024 * 1024,
      TALLY_MAX_API_KEYS_PER_ORG: 100,
      TALLY_KAFKA_SESSION_TIMEOUT: 10_000,
      TALLY_CONSUMER_STALL_TIMEOUT: 60_000,
      TALLY_INTAKE_LOOKUP_TIMEOUT: 300,
      TALLY_EXPORT_MAX_PENDING: 20,
      TALLY_EXPORT_MAX_SCHEDULES: 20,
      TALLY_EXPORT_MAX_BYTES_PER_HOUR: 1024 * 1024 * 1024,
    })
    expect(config.TALLY_CONSUMER_INSTANCE_ID).toBeUndefined()
  })

  it('refuses limits the largest intake could never pass, and a per-organization queue over the whole', () => {
    expect(() => loadConfig({ TALLY_RATE_LIMIT_BYTES_PER_MINUTE: '1000000' })).toThrowError(
      'TALLY_RATE_LIMIT_BYTES_PER_MINUTE: must be at least TALLY_INTAKE_MAX_BYTES',
    )
    expect(() => loadConfig({ TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: '999' })).toThrowError(
      'TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: must be at least TALLY_INTAKE_MAX_EVENTS',
    )
    expect(() =>
      loadConfig({
        TALLY_PUBLISH_QUEUE_MAX_BYTES: '1000000',
        TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG: '2000000',
      }),
    ).toThrowError('TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG: must not exceed TALLY_PUBLISH_QUEUE_MAX_BYTES')
  })

  it('names a session timeout under the broker minimum and an instance id with spaces', () => {
    expect(() => loadConfig({ TALLY_KAFKA_SESSION_TIMEOUT: '2s' })).toThrowError(
      /TALLY_KAFKA_SESSION_TIMEOUT: must be at least 6s/,
    )
    expect(() => loadConfig({ TALLY_CONSUMER_INSTANCE_ID: 'ingest 1' })).toThrowError(
      /TALLY_CONSUMER_INSTANCE_ID: must be 1 to 200 characters without spaces/,
    )
    expect(loadConfig({ TALLY_CONSUMER_INSTANCE_ID: 'tally-ingest-0' }).TALLY_CONSUMER_INSTANCE_ID).toBe(
      'tally-ingest-0',
    )
  })
})
