/**
 * What the launcher (server.ts) and the child that hosts ClickHouse (child.ts) agree on: the child's
 * options, the messages on the pipe between them (fd 3, one JSON object per line), exit codes and
 * the files kept in the data directory. Options travel on the pipe, not on the command line, which
 * any local user can read with ps.
 */

export interface ChildOptions {
  libchdbPath: string
  /** Holds the lock, state and config files; ClickHouse's own data is under `data/`. */
  dataDir: string
  /** 0: the kernel picks a free port and the child reports it. */
  httpPort: number
  /** A node of a cluster also listens on ClickHouse's native TCP protocol, on this port. */
  tcpPort?: number
  username: string
  password: string
  /** How long the child lets ClickHouse shut down on its own before it ends the process itself. */
  stopGraceMs: number
  /** How long the child looks for the port ClickHouse listens on before it gives up. */
  listenDeadlineMs: number
  /** Where the child shuts itself in before ClickHouse starts (sandbox.ts); absent: it runs uncontained. */
  sandbox?: SandboxOptions
}

/**
 * Where a contained server sees its data directory: a neutral path, so that nothing it shows
 * (system.databases.data_path, its errors) names a path of the host.
 */
export const CONTAINED_DATA_DIR = '/clickhouse'

export interface SandboxOptions {
  /** An empty directory the child's root is built in. */
  root: string
  /** The one directory of the host the child keeps, read-write, at CONTAINED_DATA_DIR. */
  dataDir: string
  /** As real root: the unprivileged user the child becomes. Absent in a user namespace. */
  runAs?: { uid: number; gid: number }
}

export type ChildMessage =
  /** Another process holds the data directory's lock: a server runs there or is starting. */
  | { type: 'locked' }
  | { type: 'listening'; port: number }
  /** `reason`: asked by the parent, a signal the child got (SIGTERM, SIGINT), or the parent gone. */
  | { type: 'stopping'; reason: string }

export type ParentMessage = { type: 'start'; options: ChildOptions } | { type: 'stop' }

/** Written by the owner once its server listens, read by any process that wants to attach. */
export interface ServerState {
  /** The process that hosts ClickHouse, as the host sees it. */
  pid: number
  /**
   * The process that started it, and when that process started (proc.ts startTicks): once it is
   * gone its server is stopping (the child stops it when the pipe closes), so nothing attaches to
   * it; the start time tells the owner from a later process given the same pid. Absent in files
   * written before they were recorded.
   */
  ownerPid?: number
  ownerStart?: number
  httpPort: number
  startedAt: string
}

export const FILES = {
  lock: 'server.lock',
  state: 'server.json',
  /** The root the contained child is built in: an empty directory. */
  root: 'root',
  /** user_files_path and format_schema_path: empty, the child's own. */
  userFiles: 'user_files',
  /** Where `BACKUP … TO File('<name>')` writes and RESTORE reads (docs/operations.md "Backups"). */
  backups: 'backups',
  config: 'config.xml',
  users: 'users.xml',
  log: 'clickhouse-server.log',
  data: 'data',
} as const

/**
 * Exit codes of the child besides these: when clickhouse-local returns without being asked to
 * stop (it failed, e.g. its port was taken) the process ends with status = the argc it was given
 * (see native.ts), and with 1 when ClickHouse gave up waiting for open connections at shutdown.
 */
export const EXIT = {
  /** ClickHouse stopped when asked: by the parent, or by a SIGTERM or SIGINT to the child. */
  stopped: 0,
  /** The data directory is locked by another server. */
  locked: 75,
  /** An error in the child itself (bad options, koffi, /proc). */
  childError: 70,
  /** ClickHouse did not finish within stopGraceMs after it was asked to stop. */
  stopTimeout: 71,
  /** ClickHouse was listening on no port after listenDeadlineMs. */
  noListener: 72,
} as const

/** The keep-alive query's id: stopping the server is `KILL QUERY` of it. */
export const KEEPALIVE_QUERY_ID = 'tally-clickhouse-server-keepalive'
