import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'
import { tcpProxy } from '../support/tcp-proxy.ts'
import { promptClient, sampleBody } from './client.ts'

// S3 between Tally and the real store through a proxy the test stalls or closes: a prompt write
// whose body cannot be stored is a 503 to retry, never a 500, and leaves no version behind.
describe.skipIf(!engines().s3)('prompt writes while S3 does not answer', () => {
  let tally: TestTally
  let proxy: Awaited<ReturnType<typeof tcpProxy>>
  beforeAll(async () => {
    const s3 = engines().s3
    if (!s3) throw new Error('this suite needs S3')
    const target = new URL(s3.endpoint)
    proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) })
    tally = await startTestTally({
      s3: true,
      env: {
        S3_ENDPOINT: `http://127.0.0.1:${proxy.port}`,
        TALLY_S3_CONNECT_TIMEOUT: '500ms',
        TALLY_S3_REQUEST_TIMEOUT: '1s',
      },
    })
  })
  afterAll(async () => {
    await tally?.close()
    await proxy?.close()
  })

  const newVersion = (promptId: string, base: string) => ({
    method: 'POST' as const,
    url: '/v1/prompt-2025/update',
    payload: {
      promptId,
      promptVersionId: base,
      newMajorVersion: false,
      commitMessage: 'while S3 is away',
      promptBody: sampleBody({ temperature: 0.5 }),
    },
  })

  const versionCount = async (api: ReturnType<typeof promptClient>, promptId: string) => {
    const res = await api.post('/v1/prompt-2025/query/total-versions', { promptId })
    return (res.data as { totalVersions: number }).totalVersions
  }

  it('answers 503 with Retry-After when S3 stops answering, writes nothing, and serves once it answers', async () => {
    const org = await tally.newOrg()
    const api = promptClient(tally, org)
    const { id, versionId } = await api.create()
    proxy.pause()
    const res = await tally.app.inject({ ...newVersion(id, versionId), headers: org.headers })
    proxy.resume()
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toBe('5')
    expect(res.json()).toEqual({
      data: null,
      error: 'Object storage is unavailable for now; retry the request',
    })
    expect(await versionCount(api, id)).toBe(1)
    const again = await tally.app.inject({ ...newVersion(id, versionId), headers: org.headers })
    expect(again.statusCode).toBe(201)
    expect(await versionCount(api, id)).toBe(2)
  })

  it('answers 503 when S3 refuses connections (nothing listens), and writes nothing', async () => {
    const org = await tally.newOrg()
    const api = promptClient(tally, org)
    const { id, versionId } = await api.create()
    await proxy.close()
    const res = await tally.app.inject({ ...newVersion(id, versionId), headers: org.headers })
    expect(res.statusCode).toBe(503)
    expect(res.json().error).toBe('Object storage is unavailable for now; retry the request')
    expect(await versionCount(api, id)).toBe(1)
  })
})
