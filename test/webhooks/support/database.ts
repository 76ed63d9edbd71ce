import { randomUUID } from 'node:crypto'
import postgres from 'postgres'
import { engines } from '../../support/harness.ts'

/**
 * A database of this test file's own. Every Tally process's dispatcher claims due deliveries from
 * the whole table, as it must in production; other suites' Tallys on the shared test database run
 * with other settings (no test CA, private networks refused), so they must not see our retries.
 */
export async function ownDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = engines().postgresUrl
  const name = `tally_webhooks_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  const admin = postgres(base, { onnotice: () => {}, max: 1 })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(base)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}
