import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { markdownFiles, root } from '../support/markdown.ts'
import { waitFor } from '../support/wait.ts'

interface Example {
  file: string
  line: number
  script: string
}

/** Every fenced `sh` block of the documents that runs curl, where it stands, in document order. */
function curlExamples(): Example[] {
  return markdownFiles().flatMap((file) => {
    const text = readFileSync(join(root, file), 'utf8')
    return [...text.matchAll(/^( *)```(?:sh|bash|shell)\n([\s\S]*?)^ *```/gm)]
      .filter(([, , body]) => /(^|\s)curl /m.test(body ?? ''))
      .map((match) => ({
        file,
        line: text.slice(0, match.index).split('\n').length,
        script: (match[2] ?? '').replace(new RegExp(`^${match[1]}`, 'gm'), ''),
      }))
  })
}

const DOCUMENTED_URL = 'http://127.0.0.1:8787'
const ANALYST_DOOR = /http:\/\/analyst:<password>@127\.0\.0\.1:(?:<port>|\d+)\/?/g

// The admin examples (docs/admin.md) use the instance-admin key in $ADMIN_KEY and an organization in $ORG.
const ADMIN_KEY = `tally-admin-${randomUUID()}`

let tally: TestTally
let org: TestOrg
beforeAll(async () => {
  tally = await startTestTally({ env: { TALLY_ADMIN_API_KEY: ADMIN_KEY } })
  org = await tally.newOrg()
})
afterAll(async () => {
  // docs/admin.md gives the organization days of its own: other files' starts would read them.
  if (org) await tally.sql`update organizations set retention_days = null where id = ${org.organizationId}`
  await tally?.close()
})

/** The example as a script for this Tally: its address, the key in $KEY, the analyst door's address. */
function runnable(example: Example): string {
  const door = tally.analyst
  if (example.script.includes('http://analyst:') && !door)
    throw new Error(`${example.file}: no analyst door here`)
  const doorUrl = door
    ? Object.assign(new URL(door.url), { username: door.username, password: door.password }).href.replace(
        /\/$/,
        '',
      )
    : ''
  const script = example.script
    .replaceAll(DOCUMENTED_URL, tally.url)
    .replace(ANALYST_DOOR, `${doorUrl}/?database=${tally.config.CLICKHOUSE_DATABASE}`)
    // The line that tells the reader to paste their key: the key is in the environment here.
    .replace(/^KEY=.*$/m, '')
  // A failed answer fails the example (curl --fail-with-body), as does any failed command.
  return `set -euo pipefail\ncurl() { command curl --fail-with-body -sS "$@"; echo; }\n${script}`
}

const examples = curlExamples()

describe('the curl examples of the documents', () => {
  it('are found: the README and docs/ have some', () => {
    expect(examples.filter((e) => e.file === 'README.md').length).toBeGreaterThanOrEqual(4)
    expect(examples.filter((e) => e.file.startsWith('docs/')).length).toBeGreaterThanOrEqual(3)
  })

  it.each(examples.map((e) => [`${e.file}:${e.line}`, e] as const))(
    '%s runs against a started Tally',
    async (_, e) => {
      const run = await promisify(execFile)('bash', ['-c', runnable(e)], {
        env: { ...process.env, KEY: org.apiKey, ADMIN_KEY, ORG: org.organizationId },
        timeout: 30_000,
      }).catch((err: { stdout: string; stderr: string }) => {
        throw new Error(`${e.file}:${e.line} failed:\n${e.script}\n${err.stdout}\n${err.stderr}`)
      })
      // No JSON envelope it printed carries an error.
      expect(run.stdout, `${e.file}:${e.line}`).not.toMatch(/"error":\s*"/)
    },
  )

  it("find the README's first request by its model once the pipeline has stored it", async () => {
    const readme = examples.filter((e) => e.file === 'README.md')
    const log = readme.find((e) => e.script.includes('/v1/request/log'))
    const query = readme.find((e) => e.script.includes('/v1/request/query'))
    if (!log || !query) throw new Error('the README shows no log and query examples')
    const exec = (e: Example) =>
      promisify(execFile)('bash', ['-c', runnable(e)], { env: { ...process.env, KEY: org.apiKey } })
    const logged = JSON.parse((await exec(log)).stdout) as { data: { request_ids: string[] } }
    const [id] = logged.data.request_ids
    const found = await waitFor(
      async () => {
        const answer = JSON.parse((await exec(query)).stdout) as { data: { request_id: string }[] }
        return answer.data.find((r) => r.request_id === id)
      },
      { what: `request ${id} in the answer of the README's query`, intervalMs: 200 },
    )
    expect(found).toMatchObject({ request_id: id, model: 'gpt-4o-mini' })
  })
})

/** Every document's text, by file. */
const texts = Object.fromEntries(
  markdownFiles().map((file) => [file, readFileSync(join(root, file), 'utf8')]),
)

/**
 * `tally_…` names in the documents that are not metrics: the embedded ClickHouse server's users and
 * the Postgres NOTIFY channels.
 */
const NOT_METRICS = new Set([
  'tally_sql',
  'tally_analyst',
  'tally_prompts',
  'tally_webhooks',
  'tally_exports',
])

describe('the facts the documents quote', () => {
  it("name exactly the metrics Tally's /metrics serves", async () => {
    const text = await (await fetch(`${tally.url}/metrics`)).text()
    const served = new Set([...text.matchAll(/^# TYPE (tally_\w+) /gm)].map(([, name]) => name ?? ''))
    const named = new Set(
      Object.entries(texts)
        .filter(([file]) => file === 'README.md' || file.startsWith('docs/'))
        .flatMap(([, t]) => [...t.matchAll(/\btally_[a-z0-9_]+/g)].map(([name]) => name))
        .filter((name) => !NOT_METRICS.has(name)),
    )
    expect([...named].filter((name) => !served.has(name)).sort(), 'named in the docs, not served').toEqual([])
    expect([...served].filter((name) => !named.has(name)).sort(), 'served, named in no document').toEqual([])
  })

  /** An error message a document quotes (`…` standing for any text), and a request that gets it. */
  const QUOTED: {
    file: string
    quoted: string
    status: number
    method: string
    path: string
    body: unknown
  }[] = [
    {
      file: 'docs/api.md',
      quoted: 'body.pageSize: must be one of 10, 25, 50, 100',
      status: 400,
      method: 'POST',
      path: '/v1/prompt-2025/query',
      body: { search: '', tagsFilter: [], page: 0, pageSize: 7 },
    },
    {
      file: 'docs/api.md',
      quoted: 'body: Unrecognized key: "fitler"',
      status: 400,
      method: 'POST',
      path: '/v1/request/query',
      body: { fitler: {} },
    },
    {
      file: 'docs/api.md',
      quoted: 'body.events.0.model: must not contain NUL (\\u0000)',
      status: 400,
      method: 'POST',
      path: '/v1/request/log',
      body: { events: [{ model: 'a\u0000b', request: {}, response: {} }] },
    },
    {
      file: 'docs/requests.md',
      quoted: 'Request not found',
      status: 404,
      method: 'GET',
      path: '/v1/request/00000000-0000-4000-8000-000000000000',
      body: undefined,
    },
  ]

  it.each(QUOTED.map((q) => [q.quoted, q] as const))('quote %s as Tally answers it', async (_, q) => {
    // As the document shows it, lines joined.
    expect(texts[q.file]?.replace(/\s+/g, ' '), q.file).toContain(q.quoted)
    const res = await fetch(`${tally.url}${q.path}`, {
      method: q.method,
      headers: { ...org.headers, ...(q.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(q.body === undefined ? {} : { body: JSON.stringify(q.body) }),
    })
    const answer = (await res.json()) as { error: string }
    expect(res.status).toBe(q.status)
    const pattern = new RegExp(
      `^${q.quoted
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    )
    expect(answer.error).toMatch(pattern)
  })
})
