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
import { SOCKET_ERROR_CODES } from '../net.ts'
import { assertBlobKey, type BlobStore, BlobStoreUnavailable } from './blob-store.ts'

export interface S3Options {
  endpoint: string
  bucket: string
  region: string
  accessKeyId?: string | undefined
  secretAccessKey?: string | undefined
  /** How long connecting to the endpoint may take (TALLY_S3_CONNECT_TIMEOUT). */
  connectTimeoutMs: number
  /**
   * How long one request may take until its answer starts, and one operation in all, its retries
   * and the body of its answer included (TALLY_S3_REQUEST_TIMEOUT). A multipart upload has it per part.
   */
  requestTimeoutMs: number
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
    // Without these the SDK waits for ever on an endpoint that accepts and never answers.
    requestHandler: {
      connectionTimeout: options.connectTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  })
  const Bucket = options.bucket
  const within = deadline(options)
  await ensureBucket(client, Bucket, within)

  return {
    kind: 's3',
    async put(Key, Body, ContentType) {
      assertBlobKey(Key)
      await within(`PUT ${Bucket}/${Key}`, (abortSignal) =>
        client.send(new PutObjectCommand({ Bucket, Key, Body, ContentType }), { abortSignal }),
      )
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
        // Its whole length is the caller's (signal): each of its requests has the request timeout.
        await upload.done()
      } catch (err) {
        const what = `upload of ${Bucket}/${Key}`
        throw timedOut(err, what, options) ?? unavailable(err, what, options) ?? err
      } finally {
        signal?.removeEventListener('abort', abort)
      }
    },
    async get(Key) {
      assertBlobKey(Key)
      try {
        return await within(`GET ${Bucket}/${Key}`, async (abortSignal) => {
          const out = await client.send(new GetObjectCommand({ Bucket, Key }), { abortSignal })
          return Buffer.from(
            await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
          )
        })
      } catch (err) {
        if (isNotFound(err)) return null
        throw err
      }
    },
    async delete(Key) {
      assertBlobKey(Key)
      await within(`DELETE ${Bucket}/${Key}`, (abortSignal) =>
        client.send(new DeleteObjectCommand({ Bucket, Key }), { abortSignal }),
      )
    },
    async deletePrefix(Prefix) {
      if (!Prefix.endsWith('/')) throw new Error(`blob prefix "${Prefix}" must end with /`)
      assertBlobKey(Prefix.slice(0, -1))
      // A page of at most 1,000 keys at a time, deleted in one request: memory stays bounded.
      for (;;) {
        const page = await within(`LIST ${Bucket}/${Prefix}`, (abortSignal) =>
          client.send(new ListObjectsV2Command({ Bucket, Prefix, MaxKeys: 1_000 }), { abortSignal }),
        )
        const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []))
        if (keys.length === 0) return
        await within(`DELETE ${keys.length} objects under ${Bucket}/${Prefix}`, (abortSignal) =>
          client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys, Quiet: true } }), {
            abortSignal,
          }),
        )
      }
    },
    async signedUrl(Key, ttlMs) {
      assertBlobKey(Key)
      return getSignedUrl(client, new GetObjectCommand({ Bucket, Key }), {
        expiresIn: Math.ceil(ttlMs / 1000),
      })
    },
    async ping() {
      await within(`HEAD ${Bucket}`, (abortSignal) =>
        client.send(new HeadBucketCommand({ Bucket }), { abortSignal }),
      )
    },
    close() {
      client.destroy()
    },
  }
}

/** An S3 operation that did not end in time, named as the SDK names its own timeouts. */
class S3Timeout extends BlobStoreUnavailable {
  override name = 'TimeoutError'
}

/**
 * An S3 that could not be reached (a socket error) or answered that it cannot serve now (5xx,
 * SlowDown after the SDK's own retries), as an error naming the operation; else undefined.
 */
function unavailable(err: unknown, what: string, options: S3Options): Error | undefined {
  const e = err as { code?: string; name?: string; message?: string; $metadata?: { httpStatusCode?: number } }
  const status = e?.$metadata?.httpStatusCode
  const socket = e?.code !== undefined && SOCKET_ERROR_CODES.includes(e.code)
  if (!socket && !(status !== undefined && status >= 500) && e?.name !== 'SlowDown') return undefined
  return new BlobStoreUnavailable(
    `S3 ${what} at ${options.endpoint}: unavailable (${status ?? e.code ?? e.name}): ${e.message ?? ''}`,
    { cause: err },
  )
}

type Within = <T>(what: string, operation: (abortSignal: AbortSignal) => Promise<T>) => Promise<T>

/**
 * Runs one operation, its retries included, within the request timeout. Its timing out fails it
 * with an error naming the operation, the endpoint and the wait, never the SDK's bare
 * TimeoutError or AbortError.
 */
function deadline(options: S3Options): Within {
  return async (what, operation) => {
    const signal = AbortSignal.timeout(options.requestTimeoutMs)
    try {
      return await operation(signal)
    } catch (err) {
      if (signal.aborted)
        throw new S3Timeout(
          `S3 ${what} at ${options.endpoint}: no answer within ${options.requestTimeoutMs} ms (TALLY_S3_REQUEST_TIMEOUT)`,
          { cause: err },
        )
      throw timedOut(err, what, options) ?? unavailable(err, what, options) ?? err
    }
  }
}

/** A request the SDK gave up on (no connection, or no answer, in time), as an error naming it; else undefined. */
function timedOut(err: unknown, what: string, options: S3Options): Error | undefined {
  if ((err as Error | undefined)?.name !== 'TimeoutError') return undefined
  return new S3Timeout(
    `S3 ${what} at ${options.endpoint}: timed out (TALLY_S3_CONNECT_TIMEOUT ${options.connectTimeoutMs} ms, ` +
      `TALLY_S3_REQUEST_TIMEOUT ${options.requestTimeoutMs} ms): ${(err as Error).message}`,
    { cause: err },
  )
}

async function ensureBucket(client: S3Client, Bucket: string, within: Within): Promise<void> {
  try {
    await within(`HEAD ${Bucket}`, (abortSignal) =>
      client.send(new HeadBucketCommand({ Bucket }), { abortSignal }),
    )
  } catch (err) {
    if (!isNotFound(err)) throw err
    try {
      await within(`CREATE bucket ${Bucket}`, (abortSignal) =>
        client.send(new CreateBucketCommand({ Bucket }), { abortSignal }),
      )
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
