/** Immutable objects (prompt bodies) by key, with expiring links that need no auth header. */
export interface BlobStore {
  readonly kind: 's3' | 'filesystem'
  put(key: string, body: Buffer, contentType: string): Promise<void>
  /**
   * Stores a local file's bytes under `key`, streamed: memory stays bounded whatever its size
   * (S3: a multipart upload beyond one part). Durable once it resolves, as put.
   */
  putFile(key: string, path: string, contentType: string, signal?: AbortSignal): Promise<void>
  /** The object's bytes, or null when there is none. */
  get(key: string): Promise<Buffer | null>
  delete(key: string): Promise<void>
  /** Deletes every object whose key starts with `prefix` (a folder: it ends with "/"). */
  deletePrefix(prefix: string): Promise<void>
  /** A GET link to the object that works without credentials until it expires. */
  signedUrl(key: string, ttlMs: number): Promise<string>
  /** Throws when the store cannot be reached. */
  ping(): Promise<void>
  close(): void
}

/**
 * The store did not answer in time, could not be reached, or answered that it cannot serve now
 * (a 5xx): nothing the caller sent is at fault, and the same request may succeed later.
 */
export class BlobStoreUnavailable extends Error {}

const KEY = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/

export function assertBlobKey(key: string): void {
  if (!KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`invalid blob key "${key}"`)
  }
}
