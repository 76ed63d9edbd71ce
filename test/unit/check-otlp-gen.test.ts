import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { retargeted, treeDifferences } from '../../scripts/check-otlp-gen.ts'

const ROOT = new URL('../../', import.meta.url).pathname
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-test-otlp-gen-'))
  dirs.push(dir)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

describe('the OTLP generation check', () => {
  it("moves the repository template's output, and only that, to a scratch directory", () => {
    const template = readFileSync(join(ROOT, 'schemas/otlp/buf.gen.yaml'), 'utf8')
    const moved = retargeted(template, '/scratch/gen')
    expect(moved).toContain('    out: /scratch/gen\n')
    expect(moved).not.toMatch(/out:\s*generated/)
    expect(moved.replace('out: /scratch/gen', 'out: generated/otlp')).toBe(template)
    expect(() => retargeted(template.replace('out: generated/otlp', 'out: elsewhere'), '/x')).toThrow(
      'schemas/otlp/buf.gen.yaml does not write to generated/otlp',
    )
  })

  it('names each file changed, missing or extra, and nothing for equal trees', () => {
    const generated = { 'a/one_pb.js': 'one', 'a/one_pb.d.ts': 'types', 'two_pb.js': 'two' }
    expect(treeDifferences(tree(generated), tree(generated))).toEqual([])
    const committed = tree({ 'a/one_pb.js': 'one, edited', 'two_pb.js': 'two', 'three_pb.js': 'three' })
    expect(treeDifferences(tree(generated), committed)).toEqual([
      'differs: a/one_pb.js',
      'missing: a/one_pb.d.ts',
      'not generated: three_pb.js',
    ])
  })
})
