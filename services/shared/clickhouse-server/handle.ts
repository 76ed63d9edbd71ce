/**
 * What starting the embedded ClickHouse server takes and gives back: its options and the handle of
 * a started (or attached) server. Apart from server.ts so that spawn.ts, which builds the handle of
 * a server it started, and server.ts, which calls it, do not import each other.
 */
import type { ClusterNode } from './config.ts'
import type { ContainmentMode } from './containment.ts'

interface ServerLog {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface ClickHouseServerOptions {
  /** Tally passes `$TALLY_DATA_DIR/clickhouse-server`. Created (mode 0700) if missing. */
  dataDir: string
  /**
   * Where the users' passwords are kept (`clickhouse.json`, 0600): outside `dataDir`, which the
   * server itself can read. Tally passes `$TALLY_DATA_DIR/secrets`. Created (mode 0700) if missing.
   */
  secretsDir: string
  /** How the server process is shut in (containment.ts). Default `auto`. */
  containment?: ContainmentMode
  /** Default: a port the kernel picks. */
  httpPort?: number
  /** The database the read-only `analyst` user may read. Default `default`. */
  analystDatabase?: string
  /** Makes the server a node of a cluster (config.ts ClusterNode): TCP, remote_servers, macros. */
  cluster?: ClusterNode
  /** How long start may take in all, ClickHouse loading its tables included. Default 30 s. */
  deadlineMs?: number
  /** How long stop() waits for a clean exit before SIGKILL. Default 15 s. */
  stopDeadlineMs?: number
  log: ServerLog
}

export interface ServerExit {
  code: number | null
  signal: NodeJS.Signals | null
  /** The child's last stderr lines; empty for an attached server. */
  stderr: string
}

export interface ClickHouseServer {
  /** `http://tally:<password>@127.0.0.1:<port>`: what createClient({ url }) and CLICKHOUSE_URL take. */
  url: string
  /** The same without credentials, for logs. */
  endpoint: string
  /** The read-only engine user Tally's analyst door runs data teams' checked queries as. */
  analystEngineUrl: string
  /** What data teams sign in with at that door (never valid on the engine's own port). */
  analyst: { username: string; password: string }
  /** The `tally_sql` user's URL: what callers' SQL runs as. */
  sqlUrl: string
  username: string
  password: string
  pid: number
  /** True when another process started this server: stop() then leaves it running. */
  attached: boolean
  /** How the server process is contained, or why it is not (for start-up logs and the banner). */
  containment: string
  /**
   * Called once if the server ends other than through this handle's stop(). The handle does not
   * keep the Node process alive by itself: when its owner exits, the server stops.
   */
  onExit(listener: (exit: ServerExit) => void): void
  stop(): Promise<void>
}
