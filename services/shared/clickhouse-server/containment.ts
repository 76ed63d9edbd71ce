/**
 * How the embedded ClickHouse is kept away from everything but its own data (the owner's side;
 * sandbox.ts is the child's). clickhouse-local does not check paths in `file()` and friends, so
 * what the engine process can open is what a query that slips past Tally's checks could read.
 *
 * - Tally as root: the child runs under `unshare(1)` in new mount, UTS, IPC and PID namespaces,
 *   builds a root holding only its data directory, and becomes the unprivileged system user
 *   `tally-clickhouse` (created if missing; `nobody` where it cannot be).
 * - Tally as another user: the same inside a new user namespace, every capability dropped.
 * - Neither possible (no util-linux `unshare`, user namespaces disabled): the child runs as Tally
 *   does, a warning says so, and `TALLY_CLICKHOUSE_CONTAINMENT=required` refuses to start instead.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { lchownSync, lstatSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { CONTAINED_DATA_DIR, type SandboxOptions } from './protocol.ts'

export type ContainmentMode = 'auto' | 'required' | 'off'

export interface Containment {
  /** Run the child as `launcher.command ...launcher.args node child.ts`. */
  launcher?: { command: string; args: string[] }
  /** What the child does before ClickHouse starts; root and dataDir are filled in by the caller. */
  sandbox?: Pick<SandboxOptions, 'runAs'>
  /** For the start-up log: how the child is contained, or why it is not. */
  describe: string
  contained: boolean
  /** Gives the data directory (and what was just written into it) to the child's user. */
  handOver?: () => void
}

const SERVICE_USER = 'tally-clickhouse'
const NOBODY = { uid: 65534, gid: 65534 }
const NAMESPACES = ['--mount', '--uts', '--ipc', '--pid', '--fork', '--kill-child']
const UNSHARE_PATHS = ['/usr/bin/unshare', '/bin/unshare']

/** Decides how to contain the child; throws when `required` and impossible. */
export function planContainment(mode: ContainmentMode, dataDir: string): Containment {
  if (mode === 'off') return { contained: false, describe: 'uncontained: TALLY_CLICKHOUSE_CONTAINMENT=off' }
  const refused = (why: string): Containment => {
    const describe =
      `uncontained: ${why}. The ClickHouse process can read whatever the Tally user can; Tally's own ` +
      'checks of SQL are then the only layer (docs/security.md says what to do)'
    if (mode === 'required')
      throw new Error(`TALLY_CLICKHOUSE_CONTAINMENT=required, but ClickHouse ${describe}`)
    return { contained: false, describe }
  }
  if (process.platform !== 'linux') return refused(`namespaces are Linux's, this is ${process.platform}`)
  const unshare = UNSHARE_PATHS.find((path) => spawnSync(path, ['--version']).status === 0)
  if (!unshare) return refused("util-linux's unshare(1) is not installed")
  if (process.getuid?.() === 0) {
    const { ids, describe } = serviceUser()
    return {
      contained: true,
      handOver: () => chownTree(dataDir, ids),
      launcher: { command: unshare, args: NAMESPACES },
      sandbox: { runAs: ids },
      describe: `contained: namespaces (mount, pid, uts, ipc), a root holding only ${dataDir} (as ${CONTAINED_DATA_DIR}), user ${describe}`,
    }
  }
  const args = ['--user', '--map-root-user', ...NAMESPACES]
  const probe = spawnSync(unshare, [...args, 'true'], { encoding: 'utf8', timeout: 5_000 })
  if (probe.status !== 0)
    return refused(
      `user namespaces are not available here (unshare: ${probe.stderr.trim() || probe.error?.message})`,
    )
  return {
    contained: true,
    launcher: { command: unshare, args },
    sandbox: {},
    describe: `contained: a user namespace without capabilities, namespaces (mount, pid, uts, ipc), a root holding only ${dataDir} (as ${CONTAINED_DATA_DIR})`,
  }
}

/** The ids of `tally-clickhouse`, made a system user when missing; nobody when it cannot be made. */
function serviceUser(): { ids: { uid: number; gid: number }; describe: string } {
  const lookUp = () => {
    const ids = ['-u', '-g'].map((flag) => spawnSync('id', [flag, SERVICE_USER], { encoding: 'utf8' }))
    if (ids.some((r) => r.status !== 0)) return undefined
    const [uid, gid] = ids.map((r) => Number(r.stdout.trim()))
    return uid !== undefined && gid !== undefined ? { uid, gid } : undefined
  }
  let ids = lookUp()
  if (!ids) {
    try {
      execFileSync(
        'useradd',
        [
          '--system',
          '--user-group',
          '--no-create-home',
          '--home-dir',
          '/nonexistent',
          '--shell',
          '/usr/sbin/nologin',
          SERVICE_USER,
        ],
        { stdio: 'pipe', timeout: 10_000 },
      )
    } catch {
      // another process made it at the same moment, or useradd is missing: looked up again below
    }
    ids = lookUp()
  }
  if (ids) return { ids, describe: `${SERVICE_USER} (${ids.uid})` }
  return {
    ids: NOBODY,
    describe: `nobody (${NOBODY.uid}: ${SERVICE_USER} could not be created with useradd)`,
  }
}

/** Hands the data directory to the child's user: files an uncontained or older Tally left included. */
function chownTree(dir: string, { uid, gid }: { uid: number; gid: number }): void {
  const visit = (path: string) => {
    const stat = lstatSync(path)
    if (stat.uid !== uid || stat.gid !== gid) lchownSync(path, uid, gid)
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
}
