import { randomUUID } from 'node:crypto'
import type { BlobStore } from '../../shared/blobs/blob-store.ts'
import { badRequest, notFound } from '../../shared/errors.ts'
import type { Logger } from '../../shared/logger.ts'
import { type Sql, type TxSql, transaction } from '../../shared/postgres.ts'
import type { LookupCache } from './cache.ts'
import type { PromptRepo, VersionRow } from './repo.ts'
import { type LinkedVersion, PRODUCTION, type PromptBody, type PromptVersion } from './schemas.ts'

const FIRST_COMMIT_MESSAGE = 'First version.'

export interface PromptServiceDeps {
  sql: Sql
  blobs: BlobStore
  log: Logger
  repo: PromptRepo
  cache: LookupCache<CachedLookup>
  linkTtlMs: number
}

/** A looked-up version with its signed link, and when that link is due for renewal. */
export interface CachedLookup {
  version: LinkedVersion
  renewAt: number
}

const promptNotFound = () => notFound('Prompt not found')
const versionNotFound = () => notFound('Prompt version not found')

/** One object per version, under its organization and prompt. */
const storageKey = (organizationId: string, promptId: string, versionId: string) =>
  `prompts/${organizationId}/${promptId}/${versionId}.json`

function toVersion(row: VersionRow): PromptVersion {
  const { storage_key, ...rest } = row
  return { ...rest, storage_url: storage_key }
}

/**
 * Prompts and their versions. A version's body is written to object storage first, under the
 * version's own id, and its row inserted after in one transaction; if the transaction fails the
 * body is deleted again. So a version row never exists without its body, and a crash between the
 * two leaves at worst an unreferenced object, never a broken version.
 */
export function createPromptService(deps: PromptServiceDeps) {
  const { sql, blobs, log, repo, cache } = deps

  async function withStoredBody<T>(key: string, body: PromptBody, write: () => Promise<T>): Promise<T> {
    await blobs.put(key, Buffer.from(JSON.stringify(body)), 'application/json')
    try {
      return await write()
    } catch (err) {
      await blobs
        .delete(key)
        .catch((deleteErr: unknown) => log.error({ err: deleteErr, key }, 'prompt_body_cleanup_failed'))
      throw err
    }
  }

  /** After a committed delete: the rows are gone, so a leftover object is only wasted space. */
  async function deleteBodies(keys: string[]) {
    for (const key of keys) {
      await blobs.delete(key).catch((err: unknown) => log.warn({ err, key }, 'prompt_body_delete_failed'))
    }
  }

  async function withLink(version: PromptVersion): Promise<CachedLookup> {
    const renewAt = Date.now() + deps.linkTtlMs / 2
    const s3_url = await blobs.signedUrl(version.storage_url, deps.linkTtlMs)
    return { version: { ...version, s3_url }, renewAt }
  }

  /** The hot path: cached, and the link re-signed once half its lifetime has passed. */
  async function lookUp(
    key: string,
    load: () => Promise<VersionRow | null>,
    missing: () => Promise<Error>,
  ): Promise<LinkedVersion> {
    const found = await cache.get(key, async () => {
      const row = await load()
      return row && withLink(toVersion(row))
    })
    if (!found) throw await missing()
    if (found.renewAt > Date.now()) return found.version
    const renewed = await withLink(found.version)
    cache.refresh(key, renewed)
    return renewed.version
  }

  /** The version, checked to belong to the prompt, inside a transaction holding the prompt's lock. */
  async function lockedVersion(tx: TxSql, org: string, promptId: string, versionId: string) {
    if (!(await repo.lockPrompt(tx, org, promptId))) throw promptNotFound()
    const version = await repo.findVersion(org, versionId, tx)
    if (!version || version.prompt_id !== promptId) throw versionNotFound()
    return version
  }

  return {
    async createPrompt(org: string, input: { name: string; tags: string[]; promptBody: PromptBody }) {
      const promptId = randomUUID()
      const versionId = randomUUID()
      const key = storageKey(org, promptId, versionId)
      await withStoredBody(key, input.promptBody, () =>
        transaction(sql, async (tx) => {
          await repo.insertPrompt(tx, {
            id: promptId,
            organizationId: org,
            name: input.name,
            tags: [...new Set(input.tags)],
          })
          await repo.insertVersion(tx, {
            id: versionId,
            promptId,
            organizationId: org,
            major: 1,
            minor: 0,
            model: input.promptBody.model,
            commitMessage: FIRST_COMMIT_MESSAGE,
            storageKey: key,
          })
          await repo.assignEnvironment(tx, promptId, PRODUCTION, versionId)
        }),
      )
      return { id: promptId, versionId }
    },

    /** A new major (highest + 1, minor 0) or minor (base's major, highest minor + 1) version. */
    async createVersion(
      org: string,
      input: {
        promptId: string
        promptVersionId: string
        newMajorVersion: boolean
        environment?: string | undefined
        commitMessage: string
        promptBody: PromptBody
      },
    ) {
      // Ids that are not this organization's fail here, before anything is stored.
      const base = await repo.findVersion(org, input.promptVersionId)
      if (!base || base.prompt_id !== input.promptId) throw versionNotFound()
      const versionId = randomUUID()
      const key = storageKey(org, input.promptId, versionId)
      await withStoredBody(key, input.promptBody, () =>
        transaction(sql, async (tx) => {
          // The prompt's lock serializes concurrent creations: each sees the others' numbers.
          const locked = await lockedVersion(tx, org, input.promptId, input.promptVersionId)
          const next = await repo.nextNumbers(
            tx,
            input.promptId,
            input.newMajorVersion ? null : locked.major_version,
          )
          await repo.insertVersion(tx, {
            id: versionId,
            promptId: input.promptId,
            organizationId: org,
            ...next,
            model: input.promptBody.model,
            commitMessage: input.commitMessage,
            storageKey: key,
          })
          if (input.environment)
            await repo.assignEnvironment(tx, input.promptId, input.environment, versionId)
          await repo.notifyChanged(tx, input.promptId)
        }),
      )
      cache.forget(input.promptId)
      return { id: versionId }
    },

    async assignEnvironment(
      org: string,
      input: { promptId: string; promptVersionId: string; environment: string },
    ) {
      await transaction(sql, async (tx) => {
        await lockedVersion(tx, org, input.promptId, input.promptVersionId)
        await repo.assignEnvironment(tx, input.promptId, input.environment, input.promptVersionId)
        await repo.notifyChanged(tx, input.promptId)
      })
      cache.forget(input.promptId)
      return toVersion((await repo.findVersion(org, input.promptVersionId)) ?? throwVersionNotFound())
    },

    async removeEnvironment(
      org: string,
      input: { promptId: string; promptVersionId: string; environment: string },
    ) {
      if (input.environment === PRODUCTION)
        throw badRequest(
          'body.environment: production can only be moved to another version (POST /v1/prompt-2025/update/environment), never removed',
        )
      await transaction(sql, async (tx) => {
        await lockedVersion(tx, org, input.promptId, input.promptVersionId)
        if (!(await repo.removeEnvironment(tx, input.promptId, input.environment, input.promptVersionId)))
          throw badRequest(`body.environment: this version is not deployed to "${input.environment}"`)
        await repo.notifyChanged(tx, input.promptId)
      })
      cache.forget(input.promptId)
      return toVersion((await repo.findVersion(org, input.promptVersionId)) ?? throwVersionNotFound())
    },

    async deleteVersion(org: string, promptId: string, versionId: string) {
      const key = await transaction(sql, async (tx) => {
        const version = await lockedVersion(tx, org, promptId, versionId)
        if (version.environments.includes(PRODUCTION))
          throw badRequest(
            'versionId: this is the production version; move production to another version before deleting it',
          )
        await repo.deleteVersion(tx, promptId, versionId)
        await repo.notifyChanged(tx, promptId)
        return version.storage_key
      })
      cache.forget(promptId)
      await deleteBodies([key])
    },

    async deletePrompt(org: string, promptId: string) {
      const keys = await transaction(sql, async (tx) => {
        const keys = await repo.deletePrompt(tx, org, promptId)
        if (!keys) throw promptNotFound()
        await repo.notifyChanged(tx, promptId)
        return keys
      })
      cache.forget(promptId)
      await deleteBodies(keys)
    },

    async prompt(org: string, promptId: string) {
      return (await repo.findPrompt(org, promptId)) ?? throwPromptNotFound()
    },

    async listVersions(org: string, promptId: string, major?: number) {
      const rows = await repo.listVersions(org, promptId, major)
      // A prompt always has a version (production cannot go): none at all means no such prompt.
      if (rows.length === 0 && !(await repo.findPrompt(org, promptId))) throw promptNotFound()
      return rows.map(toVersion)
    },

    async countVersions(org: string, promptId: string) {
      const counts = await repo.countVersions(org, promptId)
      if (counts.totalVersions === 0) throw promptNotFound()
      return counts
    },

    version: (org: string, versionId: string) =>
      lookUp(
        `v:${org}:${versionId}`,
        () => repo.findVersion(org, versionId),
        async () => versionNotFound(),
      ),

    environmentVersion: (org: string, promptId: string, environment: string) =>
      lookUp(
        `e:${org}:${promptId}:${environment}`,
        () => repo.findEnvironmentVersion(org, promptId, environment),
        async () =>
          (await repo.findPrompt(org, promptId))
            ? notFound(`No version of this prompt is deployed to "${environment}"`)
            : promptNotFound(),
      ),

    /** The stored body of a version the caller may see. */
    async body(version: PromptVersion): Promise<PromptBody> {
      const bytes = await blobs.get(version.storage_url)
      if (!bytes) throw new Error(`prompt body ${version.storage_url} is missing from object storage`)
      return JSON.parse(bytes.toString('utf8')) as PromptBody
    },
  }
}

function throwVersionNotFound(): never {
  throw versionNotFound()
}

function throwPromptNotFound(): never {
  throw promptNotFound()
}

export type PromptService = ReturnType<typeof createPromptService>
