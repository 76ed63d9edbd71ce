import type { Logger } from '../../shared/logger.ts'
import { createNotifiedCache } from '../../shared/notified-cache.ts'
import { createCapped, type Sql, transaction } from '../../shared/postgres.ts'
import type { ScoreConfig, ScoreDataType } from './schemas.ts'

/** Every change to an organization's score configs is announced here with its id. */
const CHANNEL = 'tally_score_configs'

interface ConfigRow {
  id: string
  name: string
  data_type: ScoreDataType
  min_value: number | null
  max_value: number | null
  categories: string[] | null
  description: string
  created_at: Date
}

const present = (row: ConfigRow): ScoreConfig => ({
  id: row.id,
  name: row.name,
  data_type: row.data_type,
  min: row.min_value,
  max: row.max_value,
  categories: row.categories,
  description: row.description,
  created_at: row.created_at,
})

export interface NewScoreConfig {
  name: string
  data_type: ScoreDataType
  min?: number | undefined
  max?: number | undefined
  categories?: string[] | undefined
  description: string
}

/**
 * Score configs in Postgres, and each API process's copy of an organization's configs, which
 * every change forgets in all processes at once (LISTEN/NOTIFY), so a value is checked against the
 * config as it is now.
 */
export async function createScoreConfigs(sql: Sql, log: Logger) {
  const cache = await createNotifiedCache<Map<string, ScoreConfig>>(sql, log, {
    channel: CHANNEL,
    name: 'score_config_cache',
    ttlMs: 60_000,
    maxEntries: 10_000,
  })
  const columns = sql`id, name, data_type, min_value, max_value, categories, description, created_at`
  const list = async (organizationId: string) =>
    (
      await sql<ConfigRow[]>`select ${columns} from score_configs
        where organization_id = ${organizationId} order by name`
    ).map(present)
  return {
    list,
    /** The organization's configs by name, from this process's copy when it has one. */
    async byName(organizationId: string): Promise<Map<string, ScoreConfig>> {
      const configs = await cache.get(
        organizationId,
        async () => new Map((await list(organizationId)).map((c) => [c.name, c])),
      )
      return configs ?? new Map()
    },
    /** Creates a config; null when the name has one already; `{held}` past `max` configs. */
    async create(
      organizationId: string,
      input: NewScoreConfig,
      max: number,
    ): Promise<ScoreConfig | null | { held: number }> {
      const created = await createCapped(sql, 'score_configs', organizationId, max, async (tx) => {
        const [row] = await tx<ConfigRow[]>`
          insert into score_configs (organization_id, name, data_type, min_value, max_value, categories, description)
          values (${organizationId}, ${input.name}, ${input.data_type}, ${input.min ?? null}, ${input.max ?? null},
                  ${input.categories ? tx.json(input.categories) : null}, ${input.description})
          on conflict (organization_id, name) do nothing
          returning ${columns}`
        if (row) await tx`select pg_notify(${CHANNEL}, ${organizationId})`
        return row ? present(row) : null
      })
      // This process at once; the others when the notification reaches them.
      cache.forget(organizationId)
      return created
    },
    async delete(organizationId: string, id: string): Promise<boolean> {
      const rows = await transaction(sql, async (tx) => {
        const deleted =
          await tx`delete from score_configs where organization_id = ${organizationId} and id = ${id} returning id`
        if (deleted.length > 0) await tx`select pg_notify(${CHANNEL}, ${organizationId})`
        return deleted
      })
      cache.forget(organizationId)
      return rows.length > 0
    },
    close: () => cache.close(),
  }
}

export type ScoreConfigs = Awaited<ReturnType<typeof createScoreConfigs>>
