import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createS3BlobStore } from '../../services/shared/blobs/s3.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { openEngines } from '../../services/shared/engines.ts'
import { openPostgres } from '../../services/shared/postgres.ts'
import { createShutdown } from '../../services/shared/shutdown.ts'
import { engines, processDataDir } from '../support/harness.ts'
import { silentServer } from '../support/silent-server.ts'
import { tcpProxy } from '../support/tcp-proxy.ts'

// An engine that accepts connections and never answers: every wait for it ends, naming the engine,
// where it is, and how long it waited.
describe('engines that never answer', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>
  beforeAll(async () => {
    silent = await silentServer()
  })
  afterAll(() => silent?.close())
  const log = pino({ level: 'silent' })

  it('Postgres: the start fails after TALLY_POSTGRES_CONNECT_TIMEOUT, naming it', async () => {
    expect(loadConfig({}).TALLY_POSTGRES_CONNECT_TIMEOUT).toBe(10_000)
    const config = loadConfig({
      DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${silent.port}/tally`,
      TALLY_POSTGRES_CONNECT_TIMEOUT: '300ms',
    })
    const opening = openPostgres(config, log)
    await expect(opening).rejects.toThrowError(
      `no connection to Postgres at postgres://postgres:***@127.0.0.1:${silent.port}/tally within 300 ms (TALLY_POSTGRES_CONNECT_TIMEOUT)`,
    )
    expect(silent.accepted()).toBeGreaterThan(0)
  })

  it('S3: the start fails after TALLY_S3_REQUEST_TIMEOUT, naming the request and the endpoint', async () => {
    expect(loadConfig({})).toMatchObject({
      TALLY_S3_CONNECT_TIMEOUT: 5_000,
      TALLY_S3_REQUEST_TIMEOUT: 30_000,
    })
    const endpoint = `http://127.0.0.1:${silent.port}`
    const opening = createS3BlobStore({
      endpoint,
      bucket: 'tally-exports',
      region: 'us-east-1',
      accessKeyId: 'tally',
      secretAccessKey: 'tally-secret',
      connectTimeoutMs: 200,
      requestTimeoutMs: 300,
    })
    await expect(opening).rejects.toThrowError(
      `S3 HEAD tally-exports at ${endpoint}: no answer within 300 ms (TALLY_S3_REQUEST_TIMEOUT)`,
    )
  })
})

// A ClickHouse server restarting beside a starting process (a shard back from a stop, the server's
// own upgrade) drops its connections: the start-up steps are run again until they pass, and a
// server that never takes them ends the start after TALLY_CLICKHOUSE_STARTUP_TIMEOUT, naming it.
describe('a ClickHouse that drops connections while a process starts', () => {
  const startThrough = async (proxyPort: number, env: Record<string, string> = {}) => {
    const lines: Array<Record<string, unknown>> = []
    let onLine: (line: Record<string, unknown>) => void = () => {}
    const log = pino(
      { level: 'info' },
      {
        write(text: string) {
          const line = JSON.parse(text) as Record<string, unknown>
          lines.push(line)
          onLine(line)
        },
      },
    )
    const url = new URL(engines().clickhouseUrl)
    url.host = `127.0.0.1:${proxyPort}`
    const database = `test_${process.pid}_startup_${randomUUID().slice(0, 8)}`
    const config = loadConfig({
      DATABASE_URL: engines().postgresUrl,
      CLICKHOUSE_URL: url.toString(),
      CLICKHOUSE_DATABASE: database,
      TALLY_DATA_DIR: processDataDir(),
      ...env,
    })
    const shutdown = createShutdown(log, 5_000)
    const open = () => openEngines(config, log, shutdown, { postgres: true, clickhouse: true })
    return {
      lines,
      database,
      open,
      whenLogged: (on: (line: Record<string, unknown>) => void) => {
        onLine = on
      },
      close: () => shutdown.run('test finished'),
    }
  }
  const proxyToClickHouse = () => {
    const target = new URL(engines().clickhouseUrl)
    return tcpProxy({ host: target.hostname, port: Number(target.port) })
  }

  it('retries the connection and a migration run cut in the middle, and the database is whole', async () => {
    const proxy = await proxyToClickHouse()
    const start = await startThrough(proxy.port)
    try {
      proxy.resetNext(2)
      let cut = false
      // After the first migration file, the server "restarts": open connections close and the
      // next two are reset at their first request.
      start.whenLogged((line) => {
        if (line.msg !== 'clickhouse_migration_applied' || cut) return
        cut = true
        proxy.dropConnections()
        proxy.resetNext(2)
      })
      const opened = await start.open()
      expect(cut).toBe(true)
      expect(proxy.resets()).toBe(4)
      const retries = start.lines.filter((l) => l.msg === 'clickhouse_startup_retry')
      expect(retries.map((l) => l.step)).toContain('connect')
      expect(retries.map((l) => l.step)).toContain('migrations')
      expect(retries.every((l) => l.level === 40 && l.engine === 'clickhouse')).toBe(true)
      // Every file recorded once, every table there: the cut run resumed where it stopped.
      const client = opened.clickhouse?.client
      if (!client) throw new Error('no ClickHouse handle')
      const recorded = await (
        await client.query({
          query: 'SELECT version, count() AS n FROM schema_migrations GROUP BY version ORDER BY version',
          format: 'JSONEachRow',
        })
      ).json<{ version: number; n: number }>()
      expect(recorded.length).toBeGreaterThan(1)
      expect(recorded.every((r) => Number(r.n) === 1)).toBe(true)
      const tables = await (
        await client.query({
          query: 'SELECT name FROM system.tables WHERE database = currentDatabase()',
          format: 'JSONEachRow',
        })
      ).json<{ name: string }>()
      expect(tables.map((t) => t.name)).toEqual(
        expect.arrayContaining(['request_response_rmt', 'request_hours', 'session_hours']),
      )
      await client.command({ query: `DROP DATABASE ${start.database}` })
    } finally {
      await start.close()
      await proxy.close()
    }
  })

  it('ends the start after TALLY_CLICKHOUSE_STARTUP_TIMEOUT when every connection is reset, naming it', async () => {
    expect(loadConfig({}).TALLY_CLICKHOUSE_STARTUP_TIMEOUT).toBe(60_000)
    const proxy = await proxyToClickHouse()
    const start = await startThrough(proxy.port, { TALLY_CLICKHOUSE_STARTUP_TIMEOUT: '1s' })
    try {
      proxy.resetNext(1_000_000)
      const began = Date.now()
      await expect(start.open()).rejects.toThrowError(
        new RegExp(
          `^ClickHouse at http://.*127\\.0\\.0\\.1:${proxy.port}/: connect failed for \\d+ ms while a server it needs was unavailable \\(TALLY_CLICKHOUSE_STARTUP_TIMEOUT 1000 ms, \\d+ attempts\\); the last failure: .*ECONNRESET`,
        ),
      )
      const waited = Date.now() - began
      // From the first failure until 1 s of failures, at most one attempt more.
      expect(waited).toBeGreaterThanOrEqual(1_000)
      expect(waited).toBeLessThan(5_000)
      expect(proxy.resets()).toBeGreaterThan(2)
    } finally {
      await start.close()
      await proxy.close()
    }
  })

  it('does not retry what the server refused: a wrong password ends the start at once', async () => {
    const proxy = await proxyToClickHouse()
    const url = new URL(engines().clickhouseUrl)
    const start = await startThrough(proxy.port, {
      CLICKHOUSE_URL: `http://nobody-${randomUUID().slice(0, 8)}:wrong@127.0.0.1:${proxy.port}${url.pathname}`,
    })
    try {
      await expect(start.open()).rejects.toThrowError(/Authentication failed|AUTHENTICATION_FAILED/)
      expect(start.lines.filter((l) => l.msg === 'clickhouse_startup_retry')).toEqual([])
    } finally {
      await start.close()
      await proxy.close()
    }
  })
})

describe.skipIf(!engines().s3)('an S3 that stops answering under a running store', () => {
  it('fails the upload of an export manifest and of a file, naming each, instead of waiting for ever', async () => {
    const s3 = engines().s3
    if (!s3) throw new Error('unreachable')
    const target = new URL(s3.endpoint)
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) })
    const endpoint = `http://127.0.0.1:${proxy.port}`
    const bucket = `tally-test-${randomUUID().slice(0, 8)}`
    const store = await createS3BlobStore({
      ...s3,
      endpoint,
      bucket,
      connectTimeoutMs: 1_000,
      requestTimeoutMs: 500,
    })
    try {
      const earlier = `exports/${randomUUID()}/manifest.json`
      await store.put(earlier, Buffer.from('{}'), 'application/json')
      proxy.pause()
      const manifest = `exports/${randomUUID()}/manifest.json`
      await expect(store.put(manifest, Buffer.from('{"files":[]}'), 'application/json')).rejects.toThrowError(
        `S3 PUT ${bucket}/${manifest} at ${endpoint}: no answer within 500 ms (TALLY_S3_REQUEST_TIMEOUT)`,
      )
      const file = join(processDataDir(), `part-${randomUUID()}.csv`)
      writeFileSync(file, 'a,b\n1,2\n')
      await expect(
        store.putFile(`exports/${randomUUID()}/part-00001.csv`, file, 'text/csv'),
      ).rejects.toThrowError(
        new RegExp(
          `^S3 upload of ${bucket}/exports/.+/part-00001\\.csv at ${endpoint}: timed out \\(TALLY_S3_CONNECT_TIMEOUT 1000 ms, TALLY_S3_REQUEST_TIMEOUT 500 ms\\)`,
        ),
      )
      // Named as the SDK names its timeouts: the export worker tells the owner a step took too long.
      await expect(store.delete(`exports/${randomUUID()}/part-00001.csv`)).rejects.toMatchObject({
        name: 'TimeoutError',
      })
      await expect(store.get(earlier)).rejects.toThrowError(
        `S3 GET ${bucket}/${earlier} at ${endpoint}: no answer within 500 ms`,
      )
      // Answering again, it serves again (what it held, the timed-out PUT among it, may still land).
      proxy.resume()
      expect(String(await store.get(earlier))).toBe('{}')
    } finally {
      store.close()
      await proxy.close()
    }
  })
})
