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
const PR_SET_KEEPCAPS = 8
const PR_CAPBSET_DROP = 24
const PR_SET_NO_NEW_PRIVS = 38
const PR_CAP_AMBIENT = 47
const PR_CAP_AMBIENT_CLEAR_ALL = 4
const LINUX_CAPABILITY_VERSION_3 = 0x20080522
const SIGKILL = 9
/** Capabilities are numbered below this on every kernel Tally runs on (40 on 6.x). */
const CAP_COUNT = 64
/**
 * The one capability the server keeps as real root: it lets ClickHouse run a query's threads at
 * the priority Tally asks for (os_thread_priority; clickhouse/priority.ts) and set them back
 * after, as a clickhouse-server package's binary may. Its own PID namespace holds only the server.
 */
const CAP_SYS_NICE = 23
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
 * As real root: become the unprivileged user, keeping CAP_SYS_NICE only. In a user namespace (Tally
 * not root) there is no other user to become: drop every capability (a nice value lowered back
 * needs CAP_SYS_NICE of the host, which a namespace cannot give). Either way no exec can regain
 * any, and the child dies with the launcher.
 */
function dropPrivileges(runAs: SandboxOptions['runAs']): void {
  // The bounding set first, while the right to change it remains: nothing can ever add one back.
  for (let cap = 0; cap < CAP_COUNT; cap++)
    if (!runAs || cap !== CAP_SYS_NICE) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) // EINVAL past the last one
  check(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), 'clearing ambient capabilities')
  if (runAs) {
    check(setgroups(0, null), 'setgroups')
    check(setresgid(runAs.gid, runAs.gid, runAs.gid), `setresgid ${runAs.gid}`)
    // The permitted set survives the change of user, then holds CAP_SYS_NICE and nothing else.
    check(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), 'keeping capabilities')
    check(setresuid(runAs.uid, runAs.uid, runAs.uid), `setresuid ${runAs.uid}`)
    check(prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0), 'no longer keeping capabilities')
    setCapabilities(1 << CAP_SYS_NICE)
  } else {
    setCapabilities(0)
  }
  check(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 'no_new_privs')
  // A change of user clears the parent-death signal the launcher set: set it again.
  check(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), 'parent-death signal')
}

/** Effective and permitted sets: `mask` (capabilities 0–31), none inheritable. */
function setCapabilities(mask: number): void {
  const header = Buffer.alloc(8)
  header.writeUInt32LE(LINUX_CAPABILITY_VERSION_3, 0)
  // Two struct __user_cap_data_struct { effective, permitted, inheritable } (32 bits each).
  const data = Buffer.alloc(24)
  data.writeUInt32LE(mask >>> 0, 0)
  data.writeUInt32LE(mask >>> 0, 4)
  check(capset(header, data), 'capset')
}
