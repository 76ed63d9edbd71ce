import { spawnSync } from 'node:child_process'
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkArchitecture, importsOf } from '../../scripts/check-architecture.ts'

const ROOT = new URL('../../', import.meta.url).pathname
const trees: string[] = []

/** A throwaway repository with just these files under it. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'tally-test-architecture-'))
  trees.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

afterEach(() => {
  for (const root of trees.splice(0)) rmSync(root, { recursive: true, force: true })
})

const entries = {
  'services/ingest/main.ts': "import { ingestRole } from './role.ts'\n",
  'services/ingest/role.ts': "import { log } from '../shared/log.ts'\n",
  'services/dispatcher/main.ts': "import { log } from '../shared/log.ts'\n",
  'services/shared/log.ts': 'export const log = 1\n',
}

describe('the dependency rule', () => {
  it('holds in this repository', () => {
    expect(checkArchitecture(ROOT)).toEqual([])
  })

  it('names a role importing another role, however the path is spelled', () => {
    const root = tree({
      ...entries,
      'services/api/requests/repo.ts': "import { x } from '../../ingest/../ingest/role.ts'\n",
      'services/dispatcher/worker.ts': "export { y } from '../api/app.ts'\n",
    })
    expect(checkArchitecture(root)).toEqual([
      'services/api/requests/repo.ts imports ../../ingest/../ingest/role.ts: services/api may import only services/shared and itself',
      'services/dispatcher/worker.ts imports ../api/app.ts: services/dispatcher may import only services/shared and itself',
    ])
  })

  it('names shared importing a role or the standalone entry', () => {
    const root = tree({
      ...entries,
      'services/shared/process/run.ts': "const m = await import('../../standalone/compose.ts')\n",
    })
    expect(checkArchitecture(root)).toEqual([
      'services/shared/process/run.ts imports ../../standalone/compose.ts: services/shared may import only itself',
    ])
  })

  it('lets the standalone entry compose every role', () => {
    const root = tree({
      ...entries,
      'services/standalone/main.ts': "import '../api/role.ts'\nimport '../ingest/role.ts'\n",
    })
    expect(checkArchitecture(root)).toEqual([])
  })

  it('names an HTTP framework loaded at run time by a consumer process, but not a type-only import', () => {
    const root = tree({
      ...entries,
      'services/shared/log.ts': "import type { FastifyInstance } from 'fastify'\nimport { z } from 'zod'\n",
      'services/dispatcher/main.ts': "import { h } from '../shared/http.ts'\n",
      'services/shared/http.ts': "import Fastify from 'fastify'\nimport { log } from './log.ts'\n",
      'services/api/app.ts': "import { h } from '../shared/http.ts'\n",
    })
    expect(checkArchitecture(root)).toEqual([
      'services/dispatcher/main.ts loads fastify at run time through ../shared/http.ts → fastify',
    ])
  })

  it('names HTTP plumbing of the API importing a domain, however the path is spelled', () => {
    const root = tree({
      ...entries,
      'services/api/http/auth.ts': "import type { Key } from '../keys/repo.ts'\n",
      'services/api/http/openapi.ts': "import { w } from '../http/../webhooks/interface.ts'\n",
      'services/api/http/envelope.ts': "import { z } from 'zod'\nimport { e } from '../../shared/log.ts'\n",
      'services/api/http/paging.ts': "import { e } from './envelope.ts'\n",
    })
    expect(checkArchitecture(root)).toEqual([
      'services/api/http/auth.ts imports ../keys/repo.ts: services/api/http (HTTP plumbing) imports no domain: app.ts passes in what it needs',
      'services/api/http/openapi.ts imports ../http/../webhooks/interface.ts: services/api/http (HTTP plumbing) imports no domain: app.ts passes in what it needs',
    ])
  })

  it("names a domain importing another domain's inner file or the API's top; admits interface.ts and http/", () => {
    const root = tree({
      ...entries,
      'services/api/otlp/mapping.ts': "import { intakeEvent } from '../requests/intake.ts'\n",
      'services/api/otlp/routes.ts':
        "import type { Intake } from '../requests/interface.ts'\nimport { ok } from '../http/envelope.ts'\n",
      'services/api/sessions/deep/detail.ts': "import { toRecord } from '../../requests/record/fields.ts'\n",
      'services/api/admin/routes.ts': "import { settings } from '../app.ts'\n",
      'services/api/app.ts':
        "import { otlpRoutes } from './otlp/routes.ts'\nimport { x } from './requests/service.ts'\n",
      'services/api/role.ts': "import { createApp } from './app.ts'\n",
    })
    expect(checkArchitecture(root)).toEqual([
      'services/api/admin/routes.ts imports ../app.ts: services/api/app.ts composes the API: no folder of it imports it',
      'services/api/otlp/mapping.ts imports ../requests/intake.ts: services/api/otlp may import the domain requests only through requests/interface.ts',
      'services/api/sessions/deep/detail.ts imports ../../requests/record/fields.ts: services/api/sessions may import the domain requests only through requests/interface.ts',
    ])
  })

  it('names a shared module that one role alone imports, directly or through shared', () => {
    const root = tree({
      ...entries,
      'services/api/app.ts': "import { limit } from '../shared/rate-limit.ts'\n",
      'services/shared/rate-limit.ts':
        "import { redis } from './redis/client.ts'\nimport { log } from './log.ts'\n",
      'services/shared/redis/client.ts': 'export const redis = 1\n',
      'services/exporter/main.ts': "import type { Log } from '../shared/log.ts'\n",
      'services/standalone/main.ts': "import '../shared/process.ts'\n",
      'services/shared/process.ts': 'export const run = 1\n',
      'services/shared/unused.ts': 'export const nobody = 1\n',
    })
    expect(checkArchitecture(root)).toEqual([
      'services/shared/process.ts is imported by services/standalone alone: shared holds what two use, move it there',
      'services/shared/rate-limit.ts is imported by services/api alone: shared holds what two use, move it there',
      'services/shared/redis/client.ts is imported by services/api alone: shared holds what two use, move it there',
    ])
  })

  it('names an import cycle, a type-only import closing it too', () => {
    const root = tree({
      ...entries,
      'services/shared/a.ts': "import { b } from './b.ts'\nexport const a = 1\n",
      'services/shared/b.ts': "import { c } from './deeper/c.ts'\nexport const b = 1\n",
      'services/shared/deeper/c.ts': "import type { A } from '../a.ts'\nexport const c = 1\n",
      'services/shared/self.ts': "export * from './self.ts'\n",
    })
    expect(checkArchitecture(root)).toEqual([
      'import cycle: services/shared/a.ts → services/shared/b.ts → services/shared/deeper/c.ts → services/shared/a.ts',
      'import cycle: services/shared/self.ts → services/shared/self.ts',
    ])
  })

  it('fails, exit code 1, on a copy of this repository with a cycle and wrong-way imports planted', () => {
    const root = mkdtempSync(join(tmpdir(), 'tally-test-architecture-'))
    trees.push(root)
    cpSync(join(ROOT, 'services'), join(root, 'services'), { recursive: true })
    mkdirSync(join(root, 'scripts'))
    cpSync(join(ROOT, 'scripts/check-architecture.ts'), join(root, 'scripts/check-architecture.ts'))
    const run = () =>
      spawnSync(process.execPath, [join(root, 'scripts/check-architecture.ts')], { encoding: 'utf8' })
    // The untouched copy passes: what fails below is what was planted.
    expect(run().status).toBe(0)

    appendFileSync(join(root, 'services/shared/events/kafka-topics.ts'), "import './kafka-publisher.ts'\n")
    writeFileSync(join(root, 'services/shared/planted.ts'), "import { x } from '../ingest/handler.ts'\n")
    // The API's layers: plumbing that reaches for a domain, a domain past another's interface.
    appendFileSync(join(root, 'services/api/http/methods.ts'), "import '../webhooks/openapi.ts'\n")
    appendFileSync(join(root, 'services/api/sessions/repo.ts'), "import '../requests/keyset.ts'\n")
    // Shared code that one role alone uses.
    writeFileSync(join(root, 'services/shared/ingest-only.ts'), 'export const x = 1\n')
    appendFileSync(join(root, 'services/ingest/handler.ts'), "import './../shared/ingest-only.ts'\n")
    const result = run()
    expect(result.status).toBe(1)
    expect(result.stderr.trim().split('\n')).toEqual([
      'architecture: import cycle: services/shared/events/kafka-publisher.ts → services/shared/events/kafka-topics.ts → services/shared/events/kafka-publisher.ts',
      'architecture: services/api/http/methods.ts imports ../webhooks/openapi.ts: services/api/http (HTTP plumbing) imports no domain: app.ts passes in what it needs',
      'architecture: services/api/sessions/repo.ts imports ../requests/keyset.ts: services/api/sessions may import the domain requests only through requests/interface.ts',
      'architecture: services/shared/ingest-only.ts is imported by services/ingest alone: shared holds what two use, move it there',
      'architecture: services/shared/planted.ts imports ../ingest/handler.ts: services/shared may import only itself',
    ])
  })

  it('reads static, re-exported and dynamic imports, and skips commented ones', () => {
    const source = [
      "import { a, type B } from './a.ts'",
      "import type { C } from './c.ts'",
      "export * from './d.ts'",
      "import './e.ts'",
      "const f = await import('./f.ts')",
      "// import { g } from './g.ts'",
      "/* import { h } from './h.ts' */",
    ].join('\n')
    expect(importsOf(source)).toEqual([
      { specifier: './a.ts', typeOnly: false },
      { specifier: './c.ts', typeOnly: true },
      { specifier: './d.ts', typeOnly: false },
      { specifier: './e.ts', typeOnly: false },
      { specifier: './f.ts', typeOnly: false },
    ])
  })
})
