import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { inject } from 'vitest'
import { createApiKeyRepo } from '../../services/api/keys/repo.ts'
import type { BlobStore } from '../../services/shared/blobs/blob-store.ts'
import type { ClickHouseClient } from '../../services/shared/clickhouse/client.ts'
import { type Config, loadConfig } from '../../services/shared/config.ts'
import type { EventPublisher } from '../../services/shared/events/transport.ts'
import { createLogger } from '../../services/shared/logger.ts'
import type { Sql } from '../../services/shared/postgres.ts'
import { createShutdown } from '../../services/shared/shutdown.ts'
import { type Roles, startTally } from '../../services/standalone/compose.ts'
import type { TestEngines } from './engines.ts'

export const engines = (): TestEngines => inject('engines')

/** A data directory for this test file (vitest gives every test file a process of its own). */
export const processDataDir = () => {
  const dir = join(tmpdir(), `tally-test-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  return dir
}

/** What data teams sign in with at this test file's analyst doors. */
const ANALYST_PASSWORD = randomBytes(24).toString('base64url')

/** The shared ClickHouse server, in a database of this test file's own. */
export const clickhouseEnv = () => ({
  CLICKHOUSE_URL: engines().clickhouseUrl,
  CLICKHOUSE_SQL_URL: engines().clickhouseSqlUrl ?? '',
  CLICKHOUSE_ANALYST_URL: engines().clickhouseAnalystUrl ?? '',
  TALLY_ANALYST_PASSWORD: ANALYST_PASSWORD,
  CLICKHOUSE_DATABASE: `test_${process.pid}`,
})

export interface TestOrg {
  organizationId: string
  apiKey: string
  headers: { authorization: string }
}

export interface TestTally {
  app: FastifyInstance
  url: string
  config: Config
  sql: Sql
  clickhouse: ClickHouseClient
  blobs: BlobStore
  publisher: EventPublisher
  /** The analyst door: where data teams' ClickHouse clients connect, and what they sign in with. */
  analyst: { url: string; username: string; password: string } | undefined
  /** A fresh organization with an admin key: tests isolate by organization, never by truncating. */
  newOrg(): Promise<TestOrg>
  close(): Promise<void>
}

export interface TestTallyOptions {
  kafka?: boolean
  s3?: boolean
  env?: Record<string, string>
  roles?: Roles
}

/** Starts Tally exactly as production composes it, on the engines the global setup provided. */
export async function startTestTally(options: TestTallyOptions = {}): Promise<TestTally> {
  const e = engines()
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    TALLY_DATA_DIR: processDataDir(),
    TALLY_LOG_LEVEL: process.env.TALLY_TEST_LOG_LEVEL ?? 'silent',
    ...clickhouseEnv(),
    DATABASE_URL: e.postgresUrl,
    // Every test file shares one ClickHouse database: a rollup builder per test Tally would build
    // every file's rows. The rollup's tests build it themselves (test/metrics/metrics-rollup.test.ts).
    TALLY_METRICS_ROLLUP_INTERVAL: '24d',
    ...options.env,
  }
  if (options.kafka) {
    if (!e.kafkaBrokers) throw new Error('this suite needs Kafka')
    const run = randomUUID().slice(0, 8)
    Object.assign(env, {
      KAFKA_BROKERS: e.kafkaBrokers,
      TALLY_REQUEST_TOPIC: `tally.test.${run}`,
      TALLY_DLQ_TOPIC: `tally.test.${run}.dlq`,
      // One consumer group per test Tally: a group shared with another run would split the partitions.
      TALLY_CONSUMER_GROUP_PREFIX: `run-${run}.`,
      TALLY_TOPIC_PARTITIONS: '2',
      ...options.env,
    })
  }
  if (options.s3) {
    if (!e.s3) throw new Error('this suite needs S3')
    Object.assign(env, {
      S3_ENDPOINT: e.s3.endpoint,
      S3_BUCKET: e.s3.bucket,
      S3_REGION: e.s3.region,
      S3_ACCESS_KEY_ID: e.s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: e.s3.secretAccessKey,
      ...options.env,
    })
  }
  const config = loadConfig(env)
  const log = createLogger(config, 'tally-test')
  const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
  const started = await startTally(
    config,
    log,
    shutdown,
    options.roles ?? { api: true, ingest: true, dispatcher: true, exporter: true },
  )
  const { app, url, publisher, engines: opened, analyst } = started
  if (!app || !url || !publisher || !opened.postgres || !opened.clickhouse || !opened.blobs) {
    await shutdown.run('incomplete test start')
    throw new Error('startTestTally needs the api role')
  }
  const keys = createApiKeyRepo(opened.postgres.sql)
  return {
    app,
    url,
    config,
    sql: opened.postgres.sql,
    clickhouse: opened.clickhouse.client,
    blobs: opened.blobs,
    publisher,
    analyst,
    async newOrg() {
      const { organization, secret } = await keys.createOrganization(`test-${randomUUID().slice(0, 8)}`)
      return {
        organizationId: organization.id,
        apiKey: secret,
        headers: { authorization: `Bearer ${secret}` },
      }
    },
    close: () => shutdown.run('test finished'),
  }
}
