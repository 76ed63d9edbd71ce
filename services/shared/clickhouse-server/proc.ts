/**
 * Facts about processes read from Linux's /proc: which ports a process listens on, its CPU time,
 * when it started.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

const TCP_LISTEN = '0A'

/**
 * The TCP ports on 127.0.0.1 that process `pid` listens on: the sockets among its descriptors
 * that /proc/net/tcp shows in state LISTEN. Lets the child learn the port the kernel picked for
 * `--http_port=0` without asking ClickHouse (which it could only ask over that very port).
 */
export function listeningPorts(pid: number | 'self' = 'self'): number[] {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue // closed between readdir and readlink
    }
    const m = /^socket:\[(\d+)\]$/.exec(target)
    if (m?.[1]) inodes.add(m[1])
  }
  const ports: number[] = []
  for (const line of readFileSync(`/proc/${pid}/net/tcp`, 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/)
    const [local, state, inode] = [cols[1], cols[3], cols[9]]
    if (!local || state !== TCP_LISTEN || !inode || !inodes.has(inode)) continue
    const [host, port] = local.split(':')
    if (host === '0100007F' && port) ports.push(Number.parseInt(port, 16))
  }
  return ports
}

/** /proc/<pid>/stat from its 3rd field on: after the command name, which may itself hold spaces. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** User + system CPU time of a process, in clock ticks (1/100 s on Linux). */
export function cpuTicks(pid: number): number {
  const fields = statFields(pid)
  return Number(fields[11]) + Number(fields[12])
}

/**
 * When a process started, in clock ticks since boot: with its pid, what tells it from a later
 * process given the same pid. Undefined once it is gone.
 */
export function startTicks(pid: number): number | undefined {
  try {
    return Number(statFields(pid)[19])
  } catch {
    return undefined
  }
}
