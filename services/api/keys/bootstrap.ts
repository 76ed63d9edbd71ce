import { type Sql, transaction } from '../../shared/postgres.ts'
import { generateKeySecret, hashKey, keyPrefix } from './secret.ts'

/**
 * On the very first start of the database creates the first organization and its admin key: the
 * configured one, else a generated one that the caller prints once. The start is recorded, so a
 * database whose organizations were all deleted does not start over. Serialized by an advisory
 * lock so that processes starting together create exactly one.
 */
export async function bootstrapFirstOrganization(sql: Sql, configuredKey: string | undefined) {
  return transaction(sql, async (tx) => {
    await tx`select pg_advisory_xact_lock(7461680)`
    const [done] = await tx`insert into bootstrap default values on conflict do nothing returning 1`
    if (!done) return null
    const secret = configuredKey ?? generateKeySecret()
    const [org] = await tx<{ id: string }[]>`insert into organizations (name) values ('default') returning id`
    await tx`
      insert into api_keys (organization_id, name, key_hash, key_prefix, role)
      values (${(org as { id: string }).id}, 'bootstrap', ${hashKey(secret)}, ${keyPrefix(secret)}, 'admin')`
    return { organizationId: (org as { id: string }).id, secret, generated: configuredKey === undefined }
  })
}
