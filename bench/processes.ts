/**
 * What the benches read of the machine's processes, from /proc and `ss`: the CPU a process used,
 * the processes below one, and the one listening on a port; and a child process to ask questions.
 */
import { execFileSync, fork } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/** CPU seconds (user + system) a process has used so far, from /proc; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0
  }
}

/**
 * Every process below `pid`: the embedded ClickHouse server, whichever of Tally's processes started
 * it, and the sandbox around it when it is contained. Read from each thread's children.
 */
export function descendantPids(pid: number): number[] {
  let children: number[] = []
  try {
    for (const task of readdirSync(`/proc/${pid}/task`))
      children = children.concat(
        readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number),
      )
  } catch {
    return []
  }
  return children.flatMap((child) => [child, ...descendantPids(child)])
}

/**
 * The process listening on the port of the first address of a list (`host:port,…` as
 * KAFKA_BROKERS, or a URL as REDIS_URL): a broker, Redis; undefined if this user may not see it.
 */
export function portOwner(address: string | undefined): number | undefined {
  const port = address
    ?.split(',')[0]
    ?.replace(/^\w+:\/\//, '')
    .split('/')[0]
    ?.split(':')[1]
  if (!port) return undefined
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' })
    const pid = /pid=(\d+)/.exec(out)?.[1]
    return pid ? Number(pid) : undefined
  } catch {
    return undefined
  }
}

const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_MS ?? 180_000)

/**
 * A Tally child process of a bench (`name` in its errors) and its IPC questions: `ask` sends a
 * command with an id and resolves with the message that carries it back (answers come in any
 * order); `ask(null)` waits for the ready message (id 0), at most BENCH_READY_TIMEOUT_MS; a child
 * that exits fails whatever waits on it. BENCH_CHILD_NODE_OPTIONS (e.g. `--cpu-prof
 * --cpu-prof-dir=/tmp/prof`) go to the child only.
 */
export function askableChild<Command extends object>(
  modulePath: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  name: string,
) {
  const childArgs = process.env.BENCH_CHILD_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []
  const child = fork(modulePath, args, {
    env,
    stdio: 'inherit',
    execArgv: [...process.execArgv, ...childArgs],
  })
  // Answers come back in any order (a slow query, a quick RSS reading): matched by id.
  const replies = new Map<
    number,
    { resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void }
  >()
  let nextId = 1
  child.on('message', (m: { id: number }) => {
    replies.get(m.id)?.resolve(m)
    replies.delete(m.id)
  })
  // A child that dies (a failed start, a crash) fails whatever waits on it instead of hanging.
  child.on('exit', (code, signal) => {
    for (const { reject } of replies.values())
      reject(new Error(`Tally's ${name} process exited (${signal ?? code})`))
    replies.clear()
  })
  const running = () => child.exitCode === null && child.signalCode === null
  return {
    /** The answer to `command`; with null, the child's ready message (within READY_TIMEOUT_MS). */
    ask<T>(command: Command | null): Promise<T> {
      return new Promise((resolve, reject) => {
        if (!running()) return reject(new Error(`Tally's ${name} process is not running`))
        const id = command ? nextId++ : 0
        const timer = command
          ? undefined
          : setTimeout(() => {
              replies.delete(id)
              child.kill()
              reject(new Error(`Tally's ${name} process was not ready within ${READY_TIMEOUT_MS / 1000} s`))
            }, READY_TIMEOUT_MS)
        const settle = (finish: () => void) => {
          clearTimeout(timer)
          finish()
        }
        replies.set(id, {
          resolve: (m) => settle(() => resolve(m as T)),
          reject: (e) => settle(() => reject(e)),
        })
        if (command) child.send({ ...command, id })
      })
    },
    async stop(): Promise<void> {
      if (!running()) return
      const exited = new Promise((r) => child.once('exit', r))
      child.send({ cmd: 'stop', id: nextId++ })
      await exited
    },
    kill: () => running() && child.kill(),
    pid: child.pid as number,
  }
}
