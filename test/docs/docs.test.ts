import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { requestRecord } from '../../services/api/requests/record.ts'
import { EXPORT_COLUMNS } from '../../services/exporter/query.ts'
import { configurationDoc } from '../../services/shared/config-reference.ts'
import { markdownFiles, root } from '../support/markdown.ts'

const read = (file: string) => readFileSync(join(root, file), 'utf8')

/** The text outside fenced code blocks: links and headings are only looked for there. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '')

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const found = new Set<string>()
  for (const [, heading] of prose(text).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = (heading ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    found.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return found
}

/** The targets of a Markdown file's inline links, without external ones (scheme or `//`). */
function localLinks(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)]
    .map(([, target]) => target ?? '')
    .filter((target) => !/^[a-z][a-z+.-]*:|^\/\//i.test(target))
}

const docs = markdownFiles()

describe('the documents', () => {
  it('finds the README and the docs/ pages', () => {
    expect(docs).toContain('README.md')
    expect(docs).toEqual(expect.arrayContaining(['docs/api.md', 'docs/configuration.md', 'docs/running.md']))
  })

  it('have every local link resolve to a file of the repository, and every #anchor to a heading', () => {
    const broken: string[] = []
    for (const file of docs) {
      for (const target of localLinks(read(file))) {
        const [path = '', anchor] = target.split('#')
        const resolved = path === '' ? join(root, file) : resolve(root, dirname(file), decodeURI(path))
        const where = `${file}: ${target}`
        if (relative(root, resolved).startsWith('..')) broken.push(`${where} (outside the repository)`)
        else if (!existsSync(resolved)) broken.push(`${where} (no such file)`)
        else if (anchor && statSync(resolved).isFile() && resolved.endsWith('.md')) {
          if (!anchors(readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${where} (no such heading)`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it('refer to no document outside the repository', () => {
    const outside = docs.flatMap((file) =>
      read(file)
        .split('\n')
        .map((line, i) => [i + 1, line] as const)
        .filter(([, line]) =>
          /\.\.\/shared\/|\bspec(?: section)? \d|\bspec sections?\b|the spec\b/i.test(line),
        )
        .map(([n, line]) => `${file}:${n}: ${line.trim()}`),
    )
    expect(outside).toEqual([])
  })

  it('keep the README short and its two commands as package.json runs them', () => {
    const readme = read('README.md')
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12 * 1024)
    expect(readme).toContain('npm install && npm start ')
    expect(readme).toContain('npm install && npm test ')
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
    expect(scripts.start).toMatch(/services\/standalone\/main\.ts$/)
    expect(scripts.test).toMatch(/vitest run$/)
  })

  it('have docs/configuration.md as `npm run docs:config` writes it from the configuration schema', () => {
    // Out of date: run `npm run docs:config` and commit docs/configuration.md.
    expect(read('docs/configuration.md')).toBe(configurationDoc())
  })

  it("list the export's columns as the exporter writes them, with their count", () => {
    const section = read('docs/exports.md').split('### Columns')[1]?.split(/^#/m)[0] ?? ''
    const listed = section.split('Written by')[0] ?? ''
    const names = [...listed.matchAll(/`([a-z_]+)`/g)].map(([, name]) => name)
    expect(names.filter((name) => name !== 'request_response_rmt' && name !== 'ingested_at')).toEqual(
      EXPORT_COLUMNS,
    )
    expect(listed).toContain(`${EXPORT_COLUMNS.length} columns`)
  })

  it('show a request record with every field the API answers', () => {
    const text = read('docs/requests.md')
    const example = text.split('a record being')[1]?.match(/```json\n([\s\S]*?)```/)?.[1] ?? ''
    const shown = Object.keys(JSON.parse(example) as object).sort()
    const answered = Object.keys(requestRecord.shape)
      .filter((name) => name !== 'request_body' && name !== 'response_body')
      .sort()
    expect(shown).toEqual(answered)
  })
})
