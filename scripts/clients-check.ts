/**
 * `npm run clients:check`: what an integrator does with Tally's OpenAPI document, for three
 * languages. Starts an api role (every role) on embedded engines in a temporary directory, takes
 * its /openapi.json, generates typescript-fetch, java and python clients with openapi-generator
 * (the CLI jar from Maven Central, kept under .tools/), compiles each (tsc; Maven; python
 * compileall and an import) and runs each client's smoke script (clients/smoke/) against that
 * Tally: create a prompt and its version, log a request, find its session, create a webhook and
 * rotate its key, create an export. Needs java, mvn and python3 with pydantic 2. Exits 1 naming
 * the first step that fails; prints how long each step took.
 */
import { type SpawnOptions, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { loadConfig } from '../services/shared/config.ts'
import { createLogger } from '../services/shared/logger.ts'
import { createShutdown } from '../services/shared/shutdown.ts'
import { ALL_ROLES, startTally } from '../services/standalone/compose.ts'

const GENERATOR_VERSION = '7.25.0'
const root = resolve(import.meta.dirname, '..')
const jar = join(root, '.tools/openapi-generator', `openapi-generator-cli-${GENERATOR_VERSION}.jar`)
const out = join(root, '.tools/clients')
const smoke = join(root, 'clients/smoke')

const timings: [string, number][] = []

/** Runs a command, its output to `log` (shown when it fails) or to this process's. */
function run(step: string, command: string, args: string[], options: SpawnOptions & { log?: string } = {}) {
  const started = Date.now()
  const { log, ...spawnOptions } = options
  const child = spawn(command, args, {
    ...spawnOptions,
    stdio: log ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  })
  const output: Buffer[] = []
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk))
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk))
  return new Promise<void>((done, fail) => {
    child.once('error', (err) => fail(new Error(`${step}: ${err.message}`)))
    child.once('exit', (code, signal) => {
      if (log) writeFileSync(log, Buffer.concat(output))
      timings.push([step, Date.now() - started])
      if (code === 0) return done()
      if (log) process.stderr.write(Buffer.concat(output).toString().slice(-20_000))
      fail(new Error(`${step} failed (${signal ?? `exit ${code}`})${log ? `; output in ${log}` : ''}`))
    })
  })
}

async function ensureGenerator(): Promise<void> {
  if (existsSync(jar)) return
  await run('download openapi-generator-cli', 'mvn', [
    '-q',
    '-B',
    'dependency:copy',
    `-Dartifact=org.openapitools:openapi-generator-cli:${GENERATOR_VERSION}`,
    `-DoutputDirectory=${join(root, '.tools/openapi-generator')}`,
  ])
}

function generate(generator: string, dir: string, properties: string): Promise<void> {
  return run(
    `generate ${generator}`,
    'java',
    [
      '-jar',
      jar,
      'generate',
      '-i',
      join(out, 'openapi.json'),
      '-g',
      generator,
      '-o',
      dir,
      '--additional-properties',
      properties,
    ],
    { log: `${dir}.log` },
  )
}

/**
 * typescript-fetch 7.25 imports a model twice in a oneOf of it and an array of it (the log body:
 * LogEvent | LogEventList): the same import statement, written again. Removes the repeats.
 */
function dropRepeatedImports(models: string): void {
  for (const file of readdirSync(models).filter((f) => f.endsWith('.ts'))) {
    const path = join(models, file)
    const text = readFileSync(path, 'utf8')
    const seen = new Set<string>()
    const kept = text.replace(
      /^import (?:type )?\{[^}]*\} from '[^']+';\n|^import type \w+ from '[^']+';\n/gm,
      (statement) => {
        if (seen.has(statement)) return ''
        seen.add(statement)
        return statement
      },
    )
    if (kept !== text) writeFileSync(path, kept)
  }
}

async function typescriptClient(env: NodeJS.ProcessEnv): Promise<void> {
  const dir = join(out, 'typescript-fetch')
  await generate('typescript-fetch', dir, 'supportsES6=true')
  dropRepeatedImports(join(dir, 'models'))
  copyFileSync(join(smoke, 'typescript/smoke.ts'), join(dir, 'smoke.ts'))
  // Compiled to CommonJS beside the client: its imports name no file extensions.
  writeFileSync(join(dir, 'package.json'), '{ "type": "commonjs" }\n')
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'commonjs',
        lib: ['es2022', 'dom'],
        strict: true,
        outDir: 'dist',
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules/@types')],
      },
      include: ['*.ts', 'apis', 'models'],
    }),
  )
  await run('compile typescript-fetch (tsc)', join(root, 'node_modules/.bin/tsc'), ['-p', dir])
  await run('smoke typescript-fetch', process.execPath, [join(dir, 'dist/smoke.js')], { env })
}

async function javaClient(env: NodeJS.ProcessEnv): Promise<void> {
  const dir = join(out, 'java')
  await generate(
    'java',
    dir,
    'groupId=dev.tally,artifactId=tally-client,invokerPackage=dev.tally.client,apiPackage=dev.tally.client.api,modelPackage=dev.tally.client.model',
  )
  mkdirSync(join(dir, 'src/main/java/dev/tally/smoke'), { recursive: true })
  copyFileSync(join(smoke, 'java/Smoke.java'), join(dir, 'src/main/java/dev/tally/smoke/Smoke.java'))
  await run(
    'compile java (Maven)',
    'mvn',
    ['-q', '-B', 'compile', 'dependency:build-classpath', '-Dmdep.outputFile=classpath.txt'],
    { cwd: dir, log: `${dir}-maven.log` },
  )
  const classpath = `${join(dir, 'target/classes')}:${readFileSync(join(dir, 'classpath.txt'), 'utf8').trim()}`
  await run('smoke java', 'java', ['-cp', classpath, 'dev.tally.smoke.Smoke'], { env })
}

async function pythonClient(env: NodeJS.ProcessEnv): Promise<void> {
  const dir = join(out, 'python')
  await generate('python', dir, 'packageName=tally_client')
  await run('check python3 has pydantic 2', 'python3', [
    '-c',
    'import sys, pydantic; sys.exit(0 if pydantic.VERSION.startswith("2.") else "pydantic " + pydantic.VERSION + ", not 2")',
  ])
  await run('compile python (compileall)', 'python3', ['-m', 'compileall', '-q', join(dir, 'tally_client')])
  const withClient = { ...env, PYTHONPATH: dir }
  await run('import python client', 'python3', ['-c', 'import tally_client'], { env: withClient })
  await run('smoke python', 'python3', [join(smoke, 'python/smoke.py')], { env: withClient })
}

const started = Date.now()
const dir = mkdtempDir()
const apiKey = `tly_${randomBytes(32).toString('base64url')}`
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  TALLY_DATA_DIR: join(dir, 'data'),
  TALLY_LOG_LEVEL: 'warn',
  TALLY_BOOTSTRAP_API_KEY: apiKey,
  // The smoke webhooks point at 127.0.0.1: nothing is delivered, the API is what is exercised.
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
})
const log = createLogger(config, 'clients-check')
const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
try {
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  await ensureGenerator()
  const { url } = await startTally(config, log, shutdown, ALL_ROLES)
  if (!url) throw new Error('the api role did not start')
  const document = await fetch(new URL('/openapi.json', url))
  if (!document.ok) throw new Error(`GET /openapi.json answered ${document.status}`)
  writeFileSync(join(out, 'openapi.json'), await document.text())
  const env = { ...process.env, TALLY_URL: url, TALLY_API_KEY: apiKey }
  const results = await Promise.allSettled([typescriptClient(env), javaClient(env), pythonClient(env)])
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []))
  for (const [step, ms] of timings) console.log(`clients:check: ${step} in ${(ms / 1000).toFixed(1)} s`)
  console.log(
    `clients:check: ${failed.length ? 'FAILED' : 'passed'} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  )
  for (const message of failed) console.error(`clients:check: ${message}`)
  process.exitCode = failed.length ? 1 : 0
} finally {
  await shutdown.run('clients checked')
  rmSync(dir, { recursive: true, force: true })
}

function mkdtempDir(): string {
  const made = join(tmpdir(), `tally-clients-${process.pid}`)
  mkdirSync(made, { recursive: true })
  // Traversable: embedded Postgres runs as its own system user when this runs as root.
  chmodSync(made, 0o711)
  return made
}
