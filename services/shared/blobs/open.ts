import { resolve } from 'node:path'
import { type Config, publicUrl } from '../config.ts'
import type { BlobStore } from './blob-store.ts'
import { createFilesystemBlobStore, type FilesystemBlobStore } from './filesystem.ts'
import { createS3BlobStore } from './s3.ts'

export async function openBlobStore(config: Config): Promise<BlobStore | FilesystemBlobStore> {
  if (config.S3_ENDPOINT && config.S3_BUCKET) {
    return createS3BlobStore({
      endpoint: config.S3_ENDPOINT,
      bucket: config.S3_BUCKET,
      region: config.S3_REGION,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    })
  }
  return createFilesystemBlobStore(resolve(config.TALLY_DATA_DIR, 'blobs'), publicUrl(config))
}

export function isFilesystemStore(store: BlobStore): store is FilesystemBlobStore {
  return store.kind === 'filesystem'
}
