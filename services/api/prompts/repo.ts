import { z } from 'zod'
import { conflict } from '../../shared/errors.ts'
import type { Sql, TxSql } from '../../shared/postgres.ts'
import { type prompt, promptVersion, type versionCounts } from './schemas.ts'

export const PROMPTS_CHANNEL = 'tally_prompts'

/** A prompt as stored is a prompt as answered. */
export type PromptRow = z.output<typeof prompt>

/** A version as stored: what the routes answer as `storage_url` is the row's `storage_key`. */
const versionRow = promptVersion.omit({ storage_url: true }).extend({ storage_key: z.string() })
export type VersionRow = z.output<typeof versionRow>

export interface NewVersion {
  id: string
  promptId: string
  organizationId: string
  major: number
  minor: number
  model: string
  commitMessage: string
  storageKey: string
}

type Db = Sql | TxSql

const UNIQUE_VIOLATION = '23505'

/** `%`, `_` and `\` match themselves in a search, not as LIKE wildcards. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** Prompts, versions and environments in Postgres. Every read is scoped to one organization. */
export function createPromptRepo(sql: Sql) {
  const versionColumns = (db: Db) => db`
    v.id, v.prompt_id, v.model, v.major_version, v.minor_version, v.commit_message, v.created_at,
    v.storage_key,
    array(select e.environment from prompt_environments e where e.version_id = v.id order by e.environment)
      as environments`

  return {
    async insertPrompt(
      tx: TxSql,
      input: { id: string; organizationId: string; name: string; tags: string[] },
    ): Promise<PromptRow> {
      try {
        const [row] = await tx<PromptRow[]>`
          insert into prompts (id, organization_id, name, tags)
          values (${input.id}, ${input.organizationId}, ${input.name}, ${input.tags})
          returning id, name, tags, created_at`
        return row as PromptRow
      } catch (err) {
        if ((err as { code?: string }).code === UNIQUE_VIOLATION)
          throw conflict(`body.name: a prompt named "${input.name}" already exists`)
        throw err
      }
    },

    /** The prompt, locked until the transaction ends: version numbers and environments change under it. */
    async lockPrompt(tx: TxSql, organizationId: string, promptId: string): Promise<PromptRow | null> {
      const [row] = await tx<PromptRow[]>`
        select id, name, tags, created_at from prompts
        where id = ${promptId} and organization_id = ${organizationId} for update`
      return row ?? null
    },

    async findPrompt(organizationId: string, promptId: string): Promise<PromptRow | null> {
      const [row] = await sql<PromptRow[]>`
        select id, name, tags, created_at from prompts
        where id = ${promptId} and organization_id = ${organizationId}`
      return row ?? null
    },

    async queryPrompts(
      organizationId: string,
      q: { search: string; tags: string[]; limit: number; offset: number },
    ): Promise<PromptRow[]> {
      return sql<PromptRow[]>`
        select id, name, tags, created_at from prompts
        where organization_id = ${organizationId}
          and name ilike ${likePattern(q.search)}
          ${q.tags.length > 0 ? sql`and tags && ${q.tags}::text[]` : sql``}
        order by created_at desc, id desc
        limit ${q.limit} offset ${q.offset}`
    },

    async updatePrompt(
      organizationId: string,
      promptId: string,
      change: { name: string } | { tags: string[] },
    ): Promise<PromptRow | null> {
      try {
        const [row] = await sql<PromptRow[]>`
          update prompts set ${sql(change)}
          where id = ${promptId} and organization_id = ${organizationId}
          returning id, name, tags, created_at`
        return row ?? null
      } catch (err) {
        if ((err as { code?: string }).code === UNIQUE_VIOLATION && 'name' in change)
          throw conflict(`body.name: a prompt named "${change.name}" already exists`)
        throw err
      }
    },

    /** Deletes the prompt with its versions; returns their storage keys. */
    async deletePrompt(tx: TxSql, organizationId: string, promptId: string): Promise<string[] | null> {
      const keys = await tx<{ storage_key: string }[]>`
        select storage_key from prompt_versions
        where prompt_id = ${promptId} and organization_id = ${organizationId}`
      const deleted = await tx`
        delete from prompts where id = ${promptId} and organization_id = ${organizationId} returning id`
      return deleted.length === 0 ? null : keys.map((k) => k.storage_key)
    },

    async findVersion(organizationId: string, versionId: string, db: Db = sql): Promise<VersionRow | null> {
      const [row] = await db<VersionRow[]>`
        select ${versionColumns(db)} from prompt_versions v
        where v.id = ${versionId} and v.organization_id = ${organizationId}`
      return row ?? null
    },

    async findEnvironmentVersion(
      organizationId: string,
      promptId: string,
      environment: string,
    ): Promise<VersionRow | null> {
      const [row] = await sql<VersionRow[]>`
        select ${versionColumns(sql)} from prompt_environments pe
        join prompt_versions v on v.id = pe.version_id
        where pe.prompt_id = ${promptId} and pe.environment = ${environment}
          and v.organization_id = ${organizationId}`
      return row ?? null
    },

    /** Newest first; the numbers break ties between versions created in the same instant. */
    async listVersions(organizationId: string, promptId: string, major?: number): Promise<VersionRow[]> {
      return sql<VersionRow[]>`
        select ${versionColumns(sql)} from prompt_versions v
        where v.prompt_id = ${promptId} and v.organization_id = ${organizationId}
          ${major === undefined ? sql`` : sql`and v.major_version = ${major}`}
        order by v.created_at desc, v.major_version desc, v.minor_version desc`
    },

    async countVersions(organizationId: string, promptId: string) {
      const [row] = await sql<z.output<typeof versionCounts>[]>`
        select count(*)::int as "totalVersions", count(distinct major_version)::int as "majorVersions"
        from prompt_versions where prompt_id = ${promptId} and organization_id = ${organizationId}`
      return row ?? { totalVersions: 0, majorVersions: 0 }
    },

    /** The next free numbers: a new major after the highest, or the next minor within `major`. */
    async nextNumbers(tx: TxSql, promptId: string, major: number | null) {
      if (major === null) {
        const [row] = await tx<{ major: number }[]>`
          select coalesce(max(major_version), 0)::int + 1 as major from prompt_versions
          where prompt_id = ${promptId}`
        return { major: (row as { major: number }).major, minor: 0 }
      }
      const [row] = await tx<{ minor: number }[]>`
        select coalesce(max(minor_version), -1)::int + 1 as minor from prompt_versions
        where prompt_id = ${promptId} and major_version = ${major}`
      return { major, minor: (row as { minor: number }).minor }
    },

    async insertVersion(tx: TxSql, v: NewVersion): Promise<void> {
      await tx`
        insert into prompt_versions
          (id, prompt_id, organization_id, major_version, minor_version, model, commit_message, storage_key)
        values (${v.id}, ${v.promptId}, ${v.organizationId}, ${v.major}, ${v.minor}, ${v.model},
                ${v.commitMessage}, ${v.storageKey})`
    },

    /** Gives the environment to the version, taking it from whichever version held it. */
    async assignEnvironment(tx: TxSql, promptId: string, environment: string, versionId: string) {
      await tx`
        insert into prompt_environments (prompt_id, environment, version_id)
        values (${promptId}, ${environment}, ${versionId})
        on conflict (prompt_id, environment)
        do update set version_id = excluded.version_id, assigned_at = now()`
    },

    async removeEnvironment(tx: TxSql, promptId: string, environment: string, versionId: string) {
      const rows = await tx`
        delete from prompt_environments
        where prompt_id = ${promptId} and environment = ${environment} and version_id = ${versionId}
        returning 1`
      return rows.length > 0
    },

    async deleteVersion(tx: TxSql, promptId: string, versionId: string): Promise<void> {
      await tx`delete from prompt_versions where id = ${versionId} and prompt_id = ${promptId}`
    },

    async listTags(organizationId: string): Promise<string[]> {
      const rows = await sql<{ tag: string }[]>`
        select distinct unnest(tags) as tag from prompts where organization_id = ${organizationId} order by tag`
      return rows.map((r) => r.tag)
    },

    async listEnvironments(organizationId: string): Promise<string[]> {
      const rows = await sql<{ environment: string }[]>`
        select distinct pe.environment from prompt_environments pe
        join prompts p on p.id = pe.prompt_id
        where p.organization_id = ${organizationId} order by pe.environment`
      return rows.map((r) => r.environment)
    },

    /** Tells every API process (this one included) that the prompt's look-ups changed. */
    async notifyChanged(tx: TxSql, promptId: string): Promise<void> {
      await tx`select pg_notify(${PROMPTS_CHANNEL}, ${promptId})`
    },
  }
}

export type PromptRepo = ReturnType<typeof createPromptRepo>
