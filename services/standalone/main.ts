import { runProcess } from '../shared/process/run.ts'
import { ALL_ROLES, selectRoles } from './compose.ts'

// `npm start`: api, ingest, dispatcher and exporter in one process, every engine embedded unless its
// environment variable points at a real one.
const startedAt = Date.now()
await runProcess('tally', selectRoles(ALL_ROLES), ({ served, engines }) => {
  if (!served) return
  const { url, bootstrap } = served
  const lines = [
    '',
    `Tally is ready in ${Date.now() - startedAt} ms at ${url}`,
    `  API docs: ${url}/docs`,
    `  OpenAPI:  ${url}/openapi.json`,
  ]
  const { analyst } = served
  if (analyst) {
    const door = new URL(analyst.url)
    door.username = analyst.username
    door.password = analyst.password
    lines.push(
      '  ClickHouse for data teams (read-only, checked SQL over every organization; docs/data-teams.md):',
      `    ${door.href.replace(/\/$/, '')}`,
    )
  }
  const containment = engines.clickhouse?.embedded?.containment
  if (containment) lines.push(`  Embedded ClickHouse: ${containment}`)
  if (bootstrap?.generated) {
    lines.push(
      "  The first organization's admin API key (shown once, store it now):",
      `    ${bootstrap.secret}`,
    )
  } else if (bootstrap) {
    lines.push('  The first organization was created with TALLY_BOOTSTRAP_API_KEY as its admin key.')
  }
  process.stdout.write(`${lines.join('\n')}\n\n`)
})
