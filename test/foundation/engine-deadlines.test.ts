import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createS3BlobStore } from '../../services/shared/blobs/s3.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { openPostgres } from '../../services/shared/postgres.ts'
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
