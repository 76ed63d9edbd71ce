import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'
import { blobStoreScenarios } from './blob-store-scenarios.ts'

let tally: TestTally
let s3: S3Client
beforeAll(async () => {
  tally = await startTestTally({ s3: true, env: { TALLY_SIGNED_LINK_TTL: '2s' } })
  const e = engines().s3
  if (!e) throw new Error('this suite needs S3')
  s3 = new S3Client({
    endpoint: e.endpoint,
    region: e.region,
    forcePathStyle: true,
    credentials: { accessKeyId: e.accessKeyId, secretAccessKey: e.secretAccessKey },
  })
})
afterAll(async () => {
  s3?.destroy()
  await tally?.close()
})

describe('prompt bodies in S3', () => {
  it('runs against the S3 store', () => {
    expect(tally.blobs.kind).toBe('s3')
  })

  blobStoreScenarios(
    () => tally,
    async (prefix) => {
      const out = await s3.send(new ListObjectsV2Command({ Bucket: engines().s3?.bucket, Prefix: prefix }))
      return (out.Contents ?? []).map((o) => o.Key as string)
    },
  )
})
