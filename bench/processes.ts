/**
 * What the benches read of the machine's processes, from /proc and `ss`: the CPU a process used,
 * the processes below one, and the one listening on a port.
 */
import { execFileSync } from 'node:child_process'
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
