import { readdirSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

/** The repository's root. */
export const root = resolve(import.meta.dirname, '../..')

const SKIPPED = new Set(['node_modules', '.git', '.tools', '.tally', '.infra', 'clients'])

/** Every Markdown file of the repository, relative to its root. */
export function markdownFiles(dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return []
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return markdownFiles(path)
    return entry.name.endsWith('.md') ? [relative(root, path)] : []
  })
}
