import { resolve } from 'node:path'
import type { Config } from '../config.ts'
import type { BlobStore } from './blob-store.ts'
import { createFilesystemBlobStore, type FilesystemBlobStore } from './filesystem.ts'
import { createS3BlobStore } from './s3.ts'

/** `baseUrl` is where the API answers, for the embedded store's links. */
export async function openBlobStore(
  config: Config,
  baseUrl: () => string,
): Promise<BlobStore | FilesystemBlobStore> {
  if (config.S3_ENDPOINT && config.S3_BUCKET) {
    return createS3BlobStore({
      endpoint: config.S3_ENDPOINT,
      bucket: config.S3_BUCKET,
      region: config.S3_REGION,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
      connectTimeoutMs: config.TALLY_S3_CONNECT_TIMEOUT,
      requestTimeoutMs: config.TALLY_S3_REQUEST_TIMEOUT,
    })
  }
  return createFilesystemBlobStore(resolve(config.TALLY_DATA_DIR, 'blobs'), baseUrl)
}

export function isFilesystemStore(store: BlobStore): store is FilesystemBlobStore {
  return store.kind === 'filesystem'
}
