import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { expect, it } from 'vitest'

const ROOT = new URL('../../', import.meta.url).pathname

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'gen' ? [] : sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

it('opens every Postgres transaction through transaction() (services/shared/postgres.ts), never sql.begin', () => {
  // sql.begin ends the process when the connection closes mid-transaction (postgres.js 3.4.9).
  const offenders = sources(join(ROOT, 'services'))
    .filter((file) => !file.endsWith('services/shared/postgres.ts'))
    .filter((file) => /\.begin\s*\(/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(ROOT, file))
  expect(offenders).toEqual([])
})
