import { createReadStream } from 'node:fs'
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { assertBlobKey, type BlobStore } from './blob-store.ts'

export interface S3Options {
  endpoint: string
  bucket: string
  region: string
  accessKeyId?: string | undefined
  secretAccessKey?: string | undefined
}

/** The part size of multipart uploads (S3's minimum is 5 MiB). */
const UPLOAD_PART_BYTES = 16 * 1024 * 1024

/** Blobs in an S3-compatible bucket (AWS, MinIO, s3proxy); links are presigned GETs. */
export async function createS3BlobStore(options: S3Options): Promise<BlobStore> {
  const client = new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    forcePathStyle: true,
    // Older S3-compatible servers reject the CRC32 headers newer SDKs send by default.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(options.accessKeyId && options.secretAccessKey
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
  })
  const Bucket = options.bucket
  await ensureBucket(client, Bucket)

  return {
    kind: 's3',
    async put(Key, Body, ContentType) {
      assertBlobKey(Key)
      await client.send(new PutObjectCommand({ Bucket, Key, Body, ContentType }))
    },
    async putFile(Key, path, ContentType, signal) {
      assertBlobKey(Key)
      // One PUT up to a part's size, else a multipart upload: at most queueSize parts in memory.
      const upload = new Upload({
        client,
        params: { Bucket, Key, Body: createReadStream(path), ContentType },
        partSize: UPLOAD_PART_BYTES,
        queueSize: 2,
        leavePartsOnError: false,
      })
      const abort = () => void upload.abort()
      signal?.addEventListener('abort', abort, { once: true })
      try {
        await upload.done()
      } finally {
        signal?.removeEventListener('abort', abort)
      }
    },
    async get(Key) {
      assertBlobKey(Key)
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key }))
        return Buffer.from(
          await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
        )
      } catch (err) {
        if (isNotFound(err)) return null
        throw err
      }
    },
    async delete(Key) {
      assertBlobKey(Key)
      await client.send(new DeleteObjectCommand({ Bucket, Key }))
    },
    async deletePrefix(Prefix) {
      if (!Prefix.endsWith('/')) throw new Error(`blob prefix "${Prefix}" must end with /`)
      assertBlobKey(Prefix.slice(0, -1))
      // A page of at most 1,000 keys at a time, deleted in one request: memory stays bounded.
      for (;;) {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix, MaxKeys: 1_000 }))
        const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []))
        if (keys.length === 0) return
        await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys, Quiet: true } }))
      }
    },
    async signedUrl(Key, ttlMs) {
      assertBlobKey(Key)
      return getSignedUrl(client, new GetObjectCommand({ Bucket, Key }), {
        expiresIn: Math.ceil(ttlMs / 1000),
      })
    },
    async ping() {
      await client.send(new HeadBucketCommand({ Bucket }))
    },
    close() {
      client.destroy()
    },
  }
}

async function ensureBucket(client: S3Client, Bucket: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket }))
  } catch (err) {
    if (!isNotFound(err)) throw err
    try {
      await client.send(new CreateBucketCommand({ Bucket }))
    } catch (createErr) {
      const name = (createErr as Error).name
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw createErr
    }
  }
}

function isNotFound(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false
  return (
    err.name === 'NoSuchKey' ||
    err.name === 'NotFound' ||
    err.name === 'NoSuchBucket' ||
    err.$metadata.httpStatusCode === 404
  )
}
