import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, copyFile, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { assertBlobKey, type BlobStore } from './blob-store.ts'

export interface FilesystemBlobStore extends BlobStore {
  /** The object's file and size, to stream it; null when there is none. */
  locate(key: string): Promise<{ path: string; size: number } | null>
  /** Checks a link made by signedUrl: the key, its expiry (Unix seconds) and the signature. */
  verifyLink(key: string, expires: string, signature: string, now?: number): boolean
}

/**
 * Durable before the caller commits a row that points at it: the file written beside `path`
 * under a temporary name and synced, renamed into place, then its folder synced.
 */
async function install(path: string, write: (tmp: string) => Promise<void>): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const tmp = `${path}.${randomUUID()}.tmp`
  try {
    await write(tmp)
    const file = await open(tmp, 'r+')
    try {
      await file.sync()
    } finally {
      await file.close()
    }
    await rename(tmp, path)
  } catch (err) {
    await rm(tmp, { force: true })
    throw err
  }
  const folder = await open(dirname(path), 'r')
  try {
    await folder.sync()
  } finally {
    await folder.close()
  }
}

/**
 * Blobs as files under `dir`, written atomically (temp file, then rename). Links are signed
 * with an HMAC key kept beside them, so they survive restarts and are served by the API at
 * `${baseUrl()}/blobs/<key>?expires=…&signature=…` (a function: the port may be known only once listening).
 */
export async function createFilesystemBlobStore(
  dir: string,
  baseUrl: () => string,
): Promise<FilesystemBlobStore> {
  await mkdir(join(dir, 'objects'), { recursive: true })
  // Prompt bodies and every organization's export files: Tally's user only (not the engines' users).
  await chmod(dir, 0o700)
  const secretFile = join(dir, 'link-secret')
  let secret: Buffer
  if (existsSync(secretFile)) secret = await readFile(secretFile)
  else {
    secret = randomBytes(32)
    await writeFile(secretFile, secret, { mode: 0o600, flag: 'wx' }).catch(async (err) => {
      // Another process wrote it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      secret = await readFile(secretFile)
    })
  }
  const pathOf = (key: string) => {
    assertBlobKey(key)
    return join(dir, 'objects', key)
  }
  const sign = (key: string, expires: string) =>
    createHmac('sha256', secret).update(`${key}\n${expires}`).digest('hex')

  return {
    kind: 'filesystem',
    async put(key, body) {
      await install(pathOf(key), (tmp) => writeFile(tmp, body))
    },
    async putFile(key, source, _contentType, signal) {
      signal?.throwIfAborted()
      await install(pathOf(key), (tmp) => copyFile(source, tmp))
    },
    async locate(key) {
      const path = pathOf(key)
      try {
        const info = await stat(path)
        return info.isFile() ? { path, size: info.size } : null
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
        throw err
      }
    },
    async get(key) {
      try {
        return await readFile(pathOf(key))
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
        throw err
      }
    },
    async delete(key) {
      await rm(pathOf(key), { force: true })
    },
    async deletePrefix(prefix) {
      if (!prefix.endsWith('/')) throw new Error(`blob prefix "${prefix}" must end with /`)
      await rm(pathOf(prefix.slice(0, -1)), { recursive: true, force: true })
    },
    async signedUrl(key, ttlMs) {
      assertBlobKey(key)
      const expires = String(Math.floor((Date.now() + ttlMs) / 1000))
      const base = baseUrl()
      const url = new URL(`blobs/${key}`, base.endsWith('/') ? base : `${base}/`)
      url.searchParams.set('expires', expires)
      url.searchParams.set('signature', sign(key, expires))
      return url.toString()
    },
    verifyLink(key, expires, signature, now = Date.now()) {
      if (!/^\d{1,12}$/.test(expires) || Number(expires) * 1000 < now) return false
      // The exact form the link was made with (lower-case hex, nothing more): Buffer.from(…, 'hex')
      // would accept upper case and ignore trailing junk.
      const expected = Buffer.from(sign(key, expires))
      const given = Buffer.from(signature)
      return given.length === expected.length && timingSafeEqual(given, expected)
    },
    async ping() {
      await mkdir(join(dir, 'objects'), { recursive: true })
    },
    close() {},
  }
}
