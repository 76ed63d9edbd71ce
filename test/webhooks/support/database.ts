import { engines } from '../../support/harness.ts'
import { createScratchDatabase } from '../../support/scratch-database.ts'

/**
 * A database of this test file's own. Every Tally process's dispatcher claims due deliveries from
 * the whole table, as it must in production; other suites' Tallys on the shared test database run
 * with other settings (no test CA, private networks refused), so they must not see our retries.
 */
export function ownDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  return createScratchDatabase(engines().postgresUrl, 'tally_webhooks')
}
