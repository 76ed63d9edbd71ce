import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from './wait.ts'

const ROOT = new URL('../../', import.meta.url).pathname
const ENGINE_VARIABLES = [
  'DATABASE_URL',
  'CLICKHOUSE_URL',
  'KAFKA_BROKERS',
  'S3_ENDPOINT',
  'S3_BUCKET',
  'REDIS_URL',
]

const children = new Set<ChildProcess>()
const dirs = new Set<string>()

/** A data directory of its own; embedded Postgres (run as the postgres user under root) can enter it. */
export function freshDataDir(prefix = 'tally-proc-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  chmodSync(dir, 0o755)
  dirs.add(dir)
  return dir
}

export interface TallyProcess {
  child: ChildProcess
  output(): string
  exited: Promise<number | null>
}

/**
 * Runs a Tally entry (e.g. services/ingest/main.ts) as a new process. Only the engine variables
 * given in `env` reach it: nothing leaks in from the test run's own environment.
 */
export function spawnTally(entry: string, env: Record<string, string>): TallyProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: '0', TALLY_LOG_LEVEL: 'info' }
  for (const name of ENGINE_VARIABLES) delete childEnv[name]
  return spawnCommand(process.execPath, [entry], { ...childEnv, ...env })
}

/** Runs a command from the repository root with exactly `env`; killed by cleanUpProcesses if left running. */
export function spawnCommand(command: string, args: string[], env: NodeJS.ProcessEnv): TallyProcess {
  const child = spawn(command, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  let out = ''
  child.stdout?.on('data', (d) => {
    out += d
  })
  child.stderr?.on('data', (d) => {
    out += d
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  void exited.then(() => children.delete(child))
  return { child, output: () => out, exited }
}

/**
 * Waits until `read` finds what it looks for in the process's output, and resolves with it; fails
 * at once if the process exits first, and with its output after the deadline.
 */
export function waitForOutput<T>(
  p: TallyProcess,
  read: (output: string) => T,
  { what, timeoutMs }: { what: string; timeoutMs: number },
) {
  return waitFor(
    () => {
      if (p.child.exitCode !== null) throw new Error(`exited with ${p.child.exitCode}:\n${p.output()}`)
      return read(p.output())
    },
    { what: () => `${what}; the output:\n${p.output()}`, timeoutMs, intervalMs: 50 },
  )
}

/** Sends SIGTERM and resolves with the exit code. */
export function stopTally(p: TallyProcess): Promise<number | null> {
  p.child.kill('SIGTERM')
  return p.exited
}

/** For afterAll: kills whatever a failed test left running and removes the data directories. */
export async function cleanUpProcesses(): Promise<void> {
  await Promise.all(
    [...children].map((child) => {
      const gone = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      return gone
    }),
  )
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  dirs.clear()
}
