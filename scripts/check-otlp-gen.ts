/**
 * `npm run check:otlp-gen` (run by CI): regenerates the OTLP classes from schemas/otlp with the
 * repository's own template, into a temporary directory, and fails when anything differs from the
 * committed generated/otlp/: a file changed, missing or extra. Nothing in the work tree is
 * touched. buf and protoc-gen-es come from node_modules (devDependencies, pinned by the lockfile);
 * the template names a local plugin and the vendored .proto files, no remote module or plugin.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'

const TEMPLATE = 'schemas/otlp/buf.gen.yaml'
const OUT = 'generated/otlp'

function filesUnder(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>()
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files.set(relative(dir, path), readFileSync(path))
  }
  return files
}

/** How `actual` differs from `expected`, one line per file, sorted; empty when they are the same. */
export function treeDifferences(expected: string, actual: string): string[] {
  const want = filesUnder(expected)
  const have = filesUnder(actual)
  const lines: string[] = []
  for (const [path, bytes] of want) {
    const got = have.get(path)
    if (!got) lines.push(`missing: ${path}`)
    else if (!got.equals(bytes)) lines.push(`differs: ${path}`)
  }
  for (const path of have.keys()) if (!want.has(path)) lines.push(`not generated: ${path}`)
  return lines.sort()
}

/** The template with its output directory moved to `out`; throws when it does not write to OUT. */
export function retargeted(template: string, out: string): string {
  const line = new RegExp(`^(\\s*out:\\s*)${OUT.replaceAll('/', '\\/')}\\s*$`, 'm')
  if (!line.test(template)) throw new Error(`${TEMPLATE} does not write to ${OUT}`)
  return template.replace(line, `$1${out}`)
}

if (import.meta.main) {
  const root = resolve(import.meta.dirname, '..')
  const scratch = mkdtempSync(join(tmpdir(), 'tally-otlp-gen-'))
  try {
    const template = join(scratch, 'buf.gen.yaml')
    writeFileSync(template, retargeted(readFileSync(join(root, TEMPLATE), 'utf8'), join(scratch, 'gen')))
    execFileSync(join(root, 'node_modules/.bin/buf'), ['generate', '--template', template], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    })
    const differences = treeDifferences(join(scratch, 'gen'), join(root, OUT))
    for (const line of differences) console.error(`otlp-gen: ${OUT}: ${line}`)
    if (differences.length > 0) {
      console.error(`otlp-gen: run \`npm run generate:otlp\` and commit ${OUT}`)
      process.exit(1)
    }
    console.log(`otlp-gen: ${OUT} is what ${TEMPLATE} generates`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
