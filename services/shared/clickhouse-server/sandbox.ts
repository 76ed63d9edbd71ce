/**
 * The child's side of containment (containment.ts decides and launches): once it has loaded what it
 * runs (node's modules, libchdb.so) and before ClickHouse starts, the child shuts itself into a root
 * directory that holds only its own data directory, a fresh /proc of its own PID namespace, a few
 * device nodes and an empty /tmp, then gives up every privilege. What ClickHouse can open from then
 * on is that and nothing else: not Tally's secrets, not Postgres's data, not the blob store, not
 * another process's environment, not the host's files. The namespaces themselves (mount, UTS, IPC,
 * PID, and a user namespace when Tally is not root) come from the launcher, `unshare(1)`, because a
 * process with threads (Node always has some) cannot enter a new user or PID namespace on its own.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { constants } from 'node:os'
import { join } from 'node:path'
import koffi from 'koffi'
import { capset, chdir, chroot, mount, prctl, setgroups, sethostname, setresgid, setresuid } from './libc.ts'
import { CONTAINED_DATA_DIR, type SandboxOptions } from './protocol.ts'

const MS_RDONLY = 0x1
const MS_NOSUID = 0x2
const MS_NODEV = 0x4
const MS_NOEXEC = 0x8
const MS_REMOUNT = 0x20
const MS_BIND = 0x1000
const MS_REC = 0x4000
const MS_PRIVATE = 0x40000
const PR_SET_PDEATHSIG = 1
const PR_CAPBSET_DROP = 24
const PR_SET_NO_NEW_PRIVS = 38
const PR_CAP_AMBIENT = 47
const PR_CAP_AMBIENT_CLEAR_ALL = 4
const LINUX_CAPABILITY_VERSION_3 = 0x20080522
const SIGKILL = 9
/** Capabilities are numbered below this on every kernel Tally runs on (40 on 6.x). */
const CAP_COUNT = 64
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom'] as const

const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]))

function check(rc: number, what: string): void {
  if (rc === 0) return
  const errno = koffi.errno()
  throw new Error(`sandbox: ${what} failed with ${ERRNO_NAMES.get(errno) ?? `errno ${errno}`}`)
}

/** Not recursive: whatever is mounted below `source` (the root being built, at least) stays out. */
function bind(source: string, target: string, readOnly: boolean): void {
  check(mount(source, target, null, MS_BIND, null), `bind ${source} on ${target}`)
  // A bind mount takes its flags from a second, remounting call.
  const flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (readOnly ? MS_RDONLY : 0)
  check(mount(null, target, null, flags, null), `remount ${target}`)
}

/**
 * Builds the root in `options.root` (an empty directory): the data directory at CONTAINED_DATA_DIR,
 * a /proc of its own PID namespace, a few devices, an empty /tmp. Enters it and drops privileges. Runs on
 * Node's main thread; ClickHouse's threads, started from it afterwards, inherit all of it. Throws
 * naming the step that failed: the child then exits without starting ClickHouse.
 */
export function enterSandbox(options: SandboxOptions): void {
  const { root, dataDir } = options
  // Nothing mounted from here on shows outside, whatever the host's propagation.
  check(mount(null, '/', null, MS_REC | MS_PRIVATE, null), 'making mounts private')
  check(mount('tally', root, 'tmpfs', MS_NOSUID | MS_NODEV, 'mode=0755,size=1m'), `tmpfs on ${root}`)

  const inside = (path: string) => join(root, path)
  mkdirSync(inside('proc'))
  check(mount('proc', inside('proc'), 'proc', MS_NOSUID | MS_NODEV | MS_NOEXEC, null), 'mounting /proc')

  mkdirSync(inside('dev'))
  for (const device of DEVICES) {
    writeFileSync(inside(`dev/${device}`), '')
    bind(`/dev/${device}`, inside(`dev/${device}`), false)
  }
  mkdirSync(inside('tmp'))
  check(
    mount('tally', inside('tmp'), 'tmpfs', MS_NOSUID | MS_NODEV | MS_NOEXEC, 'mode=1777,size=64m'),
    'tmpfs on /tmp',
  )
  mkdirSync(inside(CONTAINED_DATA_DIR))
  bind(dataDir, inside(CONTAINED_DATA_DIR), false)
  check(
    mount(null, root, null, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, 'mode=0755'),
    'remount / read-only',
  )
  check(chdir(root), `chdir ${root}`)
  check(chroot('.'), 'chroot')
  check(chdir(CONTAINED_DATA_DIR), `chdir ${CONTAINED_DATA_DIR}`)
  const hostname = 'tally-clickhouse'
  check(sethostname(hostname, Buffer.byteLength(hostname)), 'sethostname')
  dropPrivileges(options.runAs)
}

/**
 * As real root: become the unprivileged user (every capability goes with the change of user). In
 * a user namespace (Tally not root) there is no other user to become: drop every capability.
 * Either way no exec can regain any, and the child dies with the launcher.
 */
function dropPrivileges(runAs: SandboxOptions['runAs']): void {
  // The bounding set first, while the right to change it remains: nothing can ever add one back.
  for (let cap = 0; cap < CAP_COUNT; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) // EINVAL past the last one
  check(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), 'clearing ambient capabilities')
  if (runAs) {
    check(setgroups(0, null), 'setgroups')
    check(setresgid(runAs.gid, runAs.gid, runAs.gid), `setresgid ${runAs.gid}`)
    check(setresuid(runAs.uid, runAs.uid, runAs.uid), `setresuid ${runAs.uid}`)
  } else {
    const header = Buffer.alloc(8)
    header.writeUInt32LE(LINUX_CAPABILITY_VERSION_3, 0)
    check(capset(header, Buffer.alloc(24)), 'capset')
  }
  check(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 'no_new_privs')
  // A change of user clears the parent-death signal the launcher set: set it again.
  check(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), 'parent-death signal')
}
