/**
 * `npm run clients:types`: writes clients/typescript/tally-api.ts, the openapi-typescript types
 * (`paths`, `components`, `operations`) of the OpenAPI document of an api role started on embedded
 * engines with an admin key (so that the /admin/v1 routes are in it). Use them with openapi-fetch
 * (docs/api.md). test/api/openapi-document.test.ts fails when the file differs from what this writes.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { generateTypes } from 'tally-openapi-typescript'
import { loadConfig } from '../services/shared/config.ts'
import { createLogger } from '../services/shared/logger.ts'
import { createShutdown } from '../services/shared/shutdown.ts'
import { ALL_ROLES, startTally } from '../services/standalone/compose.ts'

const file = resolve(import.meta.dirname, '../clients/typescript/tally-api.ts')
const dir = mkdtempSync(join(tmpdir(), 'tally-types-'))
// Traversable: embedded Postgres runs as its own system user when this runs as root.
chmodSync(dir, 0o711)
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  TALLY_DATA_DIR: join(dir, 'data'),
  TALLY_LOG_LEVEL: 'warn',
  TALLY_ADMIN_API_KEY: randomBytes(32).toString('hex'),
})
const log = createLogger(config, 'clients-types')
const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
try {
  const { url } = await startTally(config, log, shutdown, ALL_ROLES)
  if (!url) throw new Error('the api role did not start')
  const document = (await (await fetch(new URL('/openapi.json', url))).json()) as object
  writeFileSync(file, await generateTypes(document))
  console.log(`wrote ${file}`)
} finally {
  await shutdown.run('types written')
  rmSync(dir, { recursive: true, force: true })
}
