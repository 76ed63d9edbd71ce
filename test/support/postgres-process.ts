/**
 * A process that opens embedded Postgres in $TALLY_DATA_DIR as every Tally process does (no
 * DATABASE_URL), for tests of several processes sharing one server. Run it with spawnTally. It prints
 * one JSON line per event besides its logs:
 * - `{"event":"opened","describe":…}` once open;
 * - on SIGUSR2, `{"event":"queried","n":…,"server":…}` (the server's start time and port, which
 *   tell one server from another) or `{"event":"query_failed","n":…,"error":…}`;
 * - on SIGTERM, `{"event":"closed"}` once its handle is closed; then it exits 0.
 */
import { pino } from 'pino'
import { loadConfig } from '../../services/shared/config.ts'
import { openPostgres } from '../../services/shared/postgres.ts'

const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`)
const log = pino({ level: process.env.TALLY_LOG_LEVEL ?? 'info' })
const config = loadConfig({ TALLY_DATA_DIR: process.env.TALLY_DATA_DIR })
const pg = await openPostgres(config, log)
// Signal handlers alone do not keep a process running.
const alive = setInterval(() => {}, 1 << 30)

let queries = 0
process.on('SIGUSR2', async () => {
  const n = ++queries
  try {
    const [row] = await pg.sql`
      select pg_postmaster_start_time()::text || ' on port ' || current_setting('port') as server`
    print({ event: 'queried', n, server: row?.server })
  } catch (err) {
    print({ event: 'query_failed', n, error: (err as Error).message })
  }
})
process.on('SIGTERM', async () => {
  await pg.close()
  clearInterval(alive)
  print({ event: 'closed' })
  process.exit(0)
})
// Only once the handlers are in place: a test signals as soon as it reads this line, and a
// SIGUSR2 before its handler would end the process (the signal's default action).
print({ event: 'opened', describe: pg.describe })
