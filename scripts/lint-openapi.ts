/**
 * `npm run lint:openapi [-- <tally url>]`: writes Tally's OpenAPI document and lints it with
 * Redocly under redocly.yaml. Given a URL, the document is fetched from that running Tally;
 * otherwise an api role is started on embedded engines in a temporary directory twice: with an
 * admin key (the /admin/v1 routes are in the document) and without one (as `npm start` serves it
 * by default), and both documents are linted. Exits non-zero when either lint does.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { loadConfig } from '../services/shared/config.ts'
import { createLogger } from '../services/shared/logger.ts'
import { createShutdown } from '../services/shared/shutdown.ts'
import { ALL_ROLES, startTally } from '../services/standalone/compose.ts'

const root = resolve(import.meta.dirname, '..')

/** Redocly without its telemetry, update check or notices: the lint reads local files only. */
const REDOCLY_OFFLINE_ENV = {
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
} as const

async function fetchDocument(url: string): Promise<string> {
  const res = await fetch(new URL('/openapi.json', url))
  if (!res.ok) throw new Error(`GET ${url}/openapi.json answered ${res.status}`)
  return res.text()
}

/** The document of an api role started on embedded engines in `dir`. */
async function documentOfEmbeddedTally(dir: string, withAdmin: boolean): Promise<string> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    TALLY_DATA_DIR: dir,
    TALLY_LOG_LEVEL: 'warn',
    ...(withAdmin ? { TALLY_ADMIN_API_KEY: randomBytes(32).toString('hex') } : {}),
  })
  const log = createLogger(config, 'lint-openapi')
  const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
  try {
    const { url } = await startTally(config, log, shutdown, ALL_ROLES)
    if (!url) throw new Error('the api role did not start')
    return await fetchDocument(url)
  } finally {
    await shutdown.run('document written')
  }
}

function redoclyLint(file: string): Promise<number> {
  const child = spawn(
    join(root, 'node_modules/.bin/redocly'),
    ['lint', '--config', join(root, 'redocly.yaml'), '--format', 'stylish', file],
    { stdio: 'inherit', env: { ...process.env, ...REDOCLY_OFFLINE_ENV } },
  )
  return new Promise((done, fail) => {
    child.once('error', fail)
    child.once('exit', (code, signal) => done(code ?? (signal ? 1 : 0)))
  })
}

const dir = mkdtempSync(join(tmpdir(), 'tally-openapi-'))
// Traversable: embedded Postgres runs as its own system user when this runs as root.
chmodSync(dir, 0o711)
try {
  const given = process.argv[2]
  const documents: [string, string][] = given
    ? [['openapi.json', await fetchDocument(given)]]
    : [
        ['openapi-with-admin-key.json', await documentOfEmbeddedTally(join(dir, 'data'), true)],
        ['openapi-without-admin-key.json', await documentOfEmbeddedTally(join(dir, 'data'), false)],
      ]
  let failed = 0
  for (const [name, document] of documents) {
    const file = join(dir, name)
    writeFileSync(file, document)
    failed ||= await redoclyLint(file)
  }
  process.exitCode = failed
} finally {
  rmSync(dir, { recursive: true, force: true })
}
