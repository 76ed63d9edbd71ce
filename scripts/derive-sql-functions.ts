/**
 * Writes services/api/sql/allowed-functions.json: the functions of the running ClickHouse that
 * the rules of services/api/sql/policy.ts allow callers' SQL to use. Run it after a ClickHouse
 * upgrade and read the diff: every function it adds is one callers may call from then on.
 *
 *   npm run derive:sql-functions            # an embedded server in a temporary directory
 *   CLICKHOUSE_URL=http://… npm run derive:sql-functions
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@clickhouse/client'
import { deriveAllowedFunctions } from '../services/api/sql/policy.ts'
import { readServerFunctions } from '../services/api/sql/server-functions.ts'
import { startClickHouseServer } from '../services/shared/clickhouse-server/server.ts'

const OUT = new URL('../services/api/sql/allowed-functions.json', import.meta.url).pathname

const quiet = { info() {}, warn() {}, error: (obj: object, msg: string) => console.error(msg, obj) }
let url = process.env.CLICKHOUSE_URL
let stop = async () => {}
if (!url) {
  const dir = mkdtempSync(join(tmpdir(), 'tally-derive-'))
  const server = await startClickHouseServer({
    dataDir: join(dir, 'engine'),
    secretsDir: join(dir, 'secrets'),
    log: quiet,
  })
  url = server.url
  stop = async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
const client = createClient({ url })
try {
  const { rows, combinators, version } = await readServerFunctions(client)
  const list = deriveAllowedFunctions(rows, combinators, version)
  writeFileSync(OUT, `${JSON.stringify(list, null, 2)}\n`)
  console.log(
    `${OUT}: ClickHouse ${version}, ${list.functions.length} functions allowed, ${Object.keys(list.denied).length} refused`,
  )
} finally {
  await client.close()
  await stop()
}
