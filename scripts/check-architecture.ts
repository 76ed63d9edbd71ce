/**
 * The dependency rule of docs/architecture.md, checked on the real import graph (`npm run lint`):
 * - services/api, services/ingest, services/dispatcher and services/exporter import only from
 *   services/shared and their own folder: never from each other, never from services/standalone;
 * - services/shared imports from none of them, and holds only what two of them (or the standalone
 *   entry) load: a shared module that one alone loads, directly or through other shared modules,
 *   belongs in that one's folder;
 * - what the ingest, dispatcher and exporter processes load at run time reaches no HTTP framework;
 * - inside services/api, the layers: the files at its top (app.ts, role.ts, main.ts) compose and
 *   no folder imports them; http/ (HTTP plumbing) imports no other folder; every other folder is a
 *   domain and imports another domain only through that domain's interface.ts;
 * - no module under services/ imports itself again through others: no import cycle, type-only
 *   imports included (a cycle of types is still two modules that cannot be read apart).
 * Imports are resolved to files, so no spelling of a path slips through. Exits 1 naming each
 * violation.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** What each folder under services/ may import besides itself; standalone, the entry of `npm start`, may import every role. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  api: ['shared'],
  ingest: ['shared'],
  dispatcher: ['shared'],
  exporter: ['shared'],
  shared: [],
}
/** Packages a process without the API must not load: they belong to the API. */
const HTTP_ONLY = [/^fastify$/, /^fastify-/, /^@fastify\//]
const CONSUMER_ENTRIES = [
  'services/ingest/main.ts',
  'services/dispatcher/main.ts',
  'services/exporter/main.ts',
]

/** The API's HTTP plumbing: every domain may use it, it uses no domain. */
const API_PLUMBING = 'http'
/** The one file of a domain folder of services/api that other domains may import. */
const DOMAIN_INTERFACE = 'interface.ts'

interface Import {
  specifier: string
  /** `import type …` / `export type …`: erased before run time. */
  typeOnly: boolean
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

export function importsOf(source: string): Import[] {
  const found: Import[] = []
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  for (const m of code.matchAll(IMPORT)) {
    const specifier = m[2] ?? m[3]
    if (specifier) found.push({ specifier, typeOnly: Boolean(m[1]) })
  }
  return found
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
}

/** The top folder under services/ a file belongs to, e.g. `api`, `shared`. */
function area(root: string, file: string): string | undefined {
  const parts = relative(join(root, 'services'), file).split('/')
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined
}

export function checkArchitecture(root: string): string[] {
  const violations: string[] = []
  const files = sourceFiles(join(root, 'services'))
  const graph = new Map<string, Import[]>()
  for (const file of files) graph.set(file, importsOf(readFileSync(file, 'utf8')))

  for (const [file, imports] of graph) {
    const from = area(root, file)
    for (const { specifier } of imports) {
      if (!specifier.startsWith('.')) continue
      const to = area(root, resolve(dirname(file), specifier))
      const allowed = from === undefined ? undefined : MAY_IMPORT[from]
      if (!allowed || !to || to === from || allowed.includes(to)) continue
      const rule =
        allowed.length > 0
          ? `only ${allowed.map((a) => `services/${a}`).join(', ')} and itself`
          : 'only itself'
      violations.push(`${relative(root, file)} imports ${specifier}: services/${from} may import ${rule}`)
    }
  }

  for (const [file, users] of sharedUsers(root, graph)) {
    if (users.size !== 1) continue
    const [user] = [...users]
    violations.push(
      `${relative(root, file)} is imported by services/${user} alone: shared holds what two use, move it there`,
    )
  }

  for (const [file, imports] of graph) {
    for (const { specifier } of imports) {
      if (!specifier.startsWith('.')) continue
      const wrong = apiLayerViolation(root, file, resolve(dirname(file), specifier))
      if (wrong) violations.push(`${relative(root, file)} imports ${specifier}: ${wrong}`)
    }
  }

  for (const entry of CONSUMER_ENTRIES) {
    const seen = new Set<string>()
    const visit = (file: string, chain: string[]) => {
      if (seen.has(file)) return
      seen.add(file)
      for (const { specifier, typeOnly } of graph.get(file) ?? []) {
        if (typeOnly) continue
        if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier), [...chain, specifier])
        else if (HTTP_ONLY.some((p) => p.test(specifier)))
          violations.push(
            `${entry} loads ${specifier} at run time through ${[...chain, specifier].join(' → ')}`,
          )
      }
    }
    visit(join(root, entry), [])
  }
  for (const cycle of importCycles(graph)) {
    violations.push(
      `import cycle: ${[...cycle, cycle[0]].map((f) => relative(root, f as string)).join(' → ')}`,
    )
  }
  return violations.sort()
}

/**
 * For each module of services/shared, the folders outside it (api, ingest, …, standalone) whose
 * modules import it, directly or through other shared modules.
 */
function sharedUsers(root: string, graph: ReadonlyMap<string, Import[]>): Map<string, Set<string>> {
  const users = new Map<string, Set<string>>()
  for (const file of graph.keys()) if (area(root, file) === 'shared') users.set(file, new Set())
  for (const [file, imports] of graph) {
    const user = area(root, file)
    if (user === undefined || user === 'shared') continue
    const reach = (target: string) => {
      const seen = users.get(target)
      if (!seen || seen.has(user)) return
      seen.add(user)
      for (const { specifier } of graph.get(target) ?? [])
        if (specifier.startsWith('.')) reach(resolve(dirname(target), specifier))
    }
    for (const { specifier } of imports)
      if (specifier.startsWith('.')) reach(resolve(dirname(file), specifier))
  }
  return users
}

/**
 * Why an import from `file` to `target` breaks the layers of services/api, if it does. A path
 * inside services/api is its top (a file right under it) or a folder: http/ or a domain.
 */
function apiLayerViolation(root: string, file: string, target: string): string | undefined {
  const api = join(root, 'services/api')
  const from = relative(api, file).split('/')
  const to = relative(api, target).split('/')
  if (from[0] === '..' || to[0] === '..' || from.length === 1) return undefined
  const [fromFolder, toFolder] = [from[0] as string, to[0] as string]
  if (to.length === 1) return `services/api/${to[0]} composes the API: no folder of it imports it`
  if (toFolder === fromFolder || toFolder === API_PLUMBING) return undefined
  if (fromFolder === API_PLUMBING)
    return `services/api/${API_PLUMBING} (HTTP plumbing) imports no domain: app.ts passes in what it needs`
  if (to.length === 2 && to[1] === DOMAIN_INTERFACE) return undefined
  return `services/api/${fromFolder} may import the domain ${toFolder} only through ${toFolder}/${DOMAIN_INTERFACE}`
}

/**
 * Every set of modules that import one another in a circle (a strongly connected component of
 * the import graph, Tarjan's algorithm), each told as one cycle through it starting at its
 * alphabetically first file.
 */
function importCycles(graph: ReadonlyMap<string, Import[]>): string[][] {
  const edges = new Map<string, string[]>()
  for (const [file, imports] of graph) {
    const targets = imports
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ specifier }) => resolve(dirname(file), specifier))
      .filter((to) => graph.has(to))
    edges.set(file, [...new Set(targets)].sort())
  }
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const connect = (v: string) => {
    index.set(v, index.size)
    low.set(v, index.get(v) as number)
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop() as string
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    const selfImport = edges.get(v)?.includes(v)
    if (component.length > 1 || selfImport) components.push(component)
  }
  for (const file of [...edges.keys()].sort()) if (!index.has(file)) connect(file)
  return components.map((component) => {
    // A shortest way back to the first file, through the component only (breadth first).
    const members = new Set(component)
    const start = [...component].sort()[0] as string
    const cameFrom = new Map<string, string>()
    const queue = [start]
    while (queue.length > 0) {
      const v = queue.shift() as string
      for (const w of edges.get(v) ?? []) {
        if (!members.has(w) || cameFrom.has(w)) continue
        cameFrom.set(w, v)
        if (w === start) queue.length = 0
        else queue.push(w)
      }
    }
    const cycle: string[] = []
    for (let v = cameFrom.get(start) as string; v !== start; v = cameFrom.get(v) as string) cycle.unshift(v)
    return [start, ...cycle]
  })
}

if (import.meta.main) {
  const root = resolve(import.meta.dirname, '..')
  const violations = checkArchitecture(root)
  for (const v of violations) console.error(`architecture: ${v}`)
  if (violations.length > 0) process.exit(1)
  console.log('architecture: the dependency rule and the API layers hold, no import cycles')
}
