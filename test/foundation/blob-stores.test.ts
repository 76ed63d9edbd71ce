import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BlobStore } from '../../services/shared/blobs/blob-store.ts'
import { createFilesystemBlobStore } from '../../services/shared/blobs/filesystem.ts'
import { createS3BlobStore } from '../../services/shared/blobs/s3.ts'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'

const s3 = engines().s3

/** The contract both stores keep; links are checked over real HTTP. */
function behavesAsABlobStore(
  name: string,
  open: () => Promise<{ store: BlobStore; fetchLink?: (url: string) => Promise<Response> }>,
) {
  describe(`${name} blob store`, () => {
    it('stores, reads, links and deletes an object', async () => {
      const { store, fetchLink = fetch } = await open()
      const key = `org/${randomUUID()}/prompt/v1.json`
      const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'hé' }] }))
      await store.put(key, body, 'application/json')
      expect((await store.get(key))?.equals(body)).toBe(true)

      const link = await store.signedUrl(key, 60_000)
      const res = await fetchLink(link)
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true)

      const tampered = new URL(link)
      tampered.pathname = tampered.pathname.replace('v1.json', 'v2.json')
      expect((await fetchLink(tampered.toString())).status).toBe(403)

      await store.delete(key)
      expect(await store.get(key)).toBeNull()
      await store.ping()
    })

    it('refuses keys that could escape their folder', async () => {
      const { store } = await open()
      await expect(store.put('../etc/passwd', Buffer.from('x'), 'text/plain')).rejects.toThrow(
        /invalid blob key/,
      )
      await expect(store.get('a/../../b')).rejects.toThrow(/invalid blob key/)
    })
  })
}

describe('filesystem links served by the API', () => {
  it('expire', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-blobs-'))
    try {
      const store = await createFilesystemBlobStore(dir, () => 'http://127.0.0.1:1')
      const url = new URL(await store.signedUrl('a/b.json', 1_000))
      const expires = url.searchParams.get('expires') as string
      const signature = url.searchParams.get('signature') as string
      expect(store.verifyLink('a/b.json', expires, signature)).toBe(true)
      expect(store.verifyLink('a/b.json', expires, signature, Date.now() + 5_000)).toBe(false)
      expect(store.verifyLink('a/c.json', expires, signature)).toBe(false)
      // Only the exact form the link carried: not upper case, not with anything after it.
      expect(store.verifyLink('a/b.json', expires, signature.toUpperCase())).toBe(false)
      expect(store.verifyLink('a/b.json', expires, `${signature}00`)).toBe(false)
      expect(store.verifyLink('a/b.json', expires, `${signature}zz`)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

let tally: TestTally
beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally.close())
behavesAsABlobStore('filesystem', async () => ({ store: tally.blobs }))

describe.skipIf(!s3)('S3', () => {
  behavesAsABlobStore('S3', async () => {
    if (!s3) throw new Error('unreachable')
    const bucket = `tally-test-${randomUUID().slice(0, 8)}`
    return {
      store: await createS3BlobStore({ ...s3, bucket, connectTimeoutMs: 5_000, requestTimeoutMs: 30_000 }),
    }
  })
})
