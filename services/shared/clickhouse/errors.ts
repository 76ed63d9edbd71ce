import { ClickHouseError } from '@clickhouse/client'
import { AppError } from '../errors.ts'
import { SOCKET_ERROR_CODES } from '../net.ts'

/**
 * What a failed ClickHouse call means for the caller who asked for it, decided once here from
 * ClickHouse's error name (`SELECT code, name FROM system.errors`):
 * - `user`: the query (or a value in it) is wrong; 400 with ClickHouse's message;
 * - `limit`: the query needs more than a limit allows (time, rows, memory, size of the query);
 *   422 (query-limits.ts names the limits Tally sets itself);
 * - `unavailable`: the server cannot run it now (busy, out of memory, going away); 503, retry;
 * - `internal`: the server or Tally's set-up is broken (a logical error, a file, a password);
 *   500, its text in the log only: it can name the server's paths and users.
 * A name in none of the lists is `user`: ClickHouse raises most of its codes about the query
 * it was given. test/sql/clickhouse-errors.test.ts lists every name the server has.
 */
export type ClickHouseFailure = 'user' | 'limit' | 'unavailable' | 'internal'

/** What an error name in none of the lists below is. */
export const DEFAULT_FAILURE: ClickHouseFailure = 'user'

const LIMIT = [
  'TIMEOUT_EXCEEDED',
  'TOO_SLOW',
  'TOO_MANY_ROWS',
  'TOO_MANY_BYTES',
  'TOO_MANY_ROWS_OR_BYTES',
  'MEMORY_LIMIT_EXCEEDED',
  'TOO_MANY_COLUMNS',
  'TOO_MANY_TEMPORARY_COLUMNS',
  'TOO_MANY_TEMPORARY_NON_CONST_COLUMNS',
  'TOO_DEEP_SUBQUERIES',
  'TOO_DEEP_AST',
  'TOO_BIG_AST',
  'TOO_DEEP_RECURSION',
  'TOO_MANY_QUERY_PLAN_OPTIMIZATIONS',
  'TOO_SLOW_PARSING',
  'QUERY_IS_TOO_LARGE',
  'SET_SIZE_LIMIT_EXCEEDED',
  'TOO_LARGE_ARRAY_SIZE',
  'TOO_LARGE_STRING_SIZE',
  'TOO_LARGE_DISTRIBUTED_DEPTH',
  'QUOTA_EXCEEDED',
  'LIMIT_EXCEEDED',
  'RESOURCE_LIMIT_EXCEEDED',
]

const UNAVAILABLE = [
  'TOO_MANY_SIMULTANEOUS_QUERIES',
  'SERVER_OVERLOADED',
  'NO_FREE_CONNECTION',
  'TCP_CONNECTION_LIMIT_REACHED',
  'HTTP_CONNECTION_LIMIT_REACHED',
  'USER_SESSION_LIMIT_EXCEEDED',
  'RECEIVED_ERROR_TOO_MANY_REQUESTS',
  'SOCKET_TIMEOUT',
  'NETWORK_ERROR',
  'DNS_ERROR',
  'CANNOT_READ_FROM_SOCKET',
  'CANNOT_WRITE_TO_SOCKET',
  'ALL_CONNECTION_TRIES_FAILED',
  'EXTERNAL_SERVER_IS_NOT_RESPONDING',
  'QUERY_WAS_CANCELLED',
  'QUERY_WAS_CANCELLED_BY_CLIENT',
  'ABORTED',
  'THREAD_WAS_CANCELED',
  'DEADLOCK_AVOIDED',
  'CANNOT_SCHEDULE_TASK',
  'CANNOT_ALLOCATE_MEMORY',
  'MEMORY_RESERVATION_KILLED',
  'MEMORY_RESERVATION_FAILED',
  'NOT_ENOUGH_SPACE',
  'TABLE_IS_READ_ONLY',
  'TABLE_IS_BEING_RESTARTED',
  'TABLE_IS_DROPPED',
  'TOO_MANY_PARTS',
  'DISTRIBUTED_TOO_MANY_PENDING_BYTES',
  'SESSION_IS_LOCKED',
  'QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING',
  'ASYNC_LOAD_WAIT_FAILED',
  'ASYNC_LOAD_FAILED',
  'ASYNC_LOAD_CANCELED',
  'NO_ZOOKEEPER',
  'KEEPER_EXCEPTION',
  'UNEXPECTED_ZOOKEEPER_ERROR',
  'NO_AVAILABLE_REPLICA',
  'NO_ACTIVE_REPLICAS',
  'TOO_FEW_LIVE_REPLICAS',
  'ALL_REPLICAS_LOST',
  'ALL_REPLICAS_ARE_STALE',
  'TOO_MANY_UNAVAILABLE_SHARDS',
  'NO_REMOTE_SHARD_AVAILABLE',
]

const INTERNAL = [
  'LOGICAL_ERROR',
  'NOT_IMPLEMENTED',
  'UNKNOWN_EXCEPTION',
  'STD_EXCEPTION',
  'POCO_EXCEPTION',
  'NOT_INITIALIZED',
  'INVALID_STATE',
  'FAULT_INJECTED',
  // Stored data that cannot be read back.
  'CORRUPTED_DATA',
  'CHECKSUM_DOESNT_MATCH',
  'CANNOT_READ_ALL_DATA',
  'CANNOT_DECOMPRESS',
  'CANNOT_COMPRESS',
  'SIZES_OF_MARKS_FILES_ARE_INCONSISTENT',
  'NO_FILE_IN_DATA_PART',
  'UNEXPECTED_FILE_IN_DATA_PART',
  'BAD_SIZE_OF_FILE_IN_DATA_PART',
  'POTENTIALLY_BROKEN_DATA_PART',
  'BROKEN_PROJECTION',
  'BAD_TTL_FILE',
  'DISTRIBUTED_BROKEN_BATCH_FILES',
  'UNEXPECTED_NODE_IN_ZOOKEEPER',
  'DATABASE_REPLICATION_FAILED',
  'CANNOT_GET_REPLICATED_DATABASE_SNAPSHOT',
  'POSTGRESQL_REPLICATION_INTERNAL_ERROR',
  'ZERO_COPY_REPLICATION_ERROR',
  // Tally's own set-up: users, passwords, configuration.
  'UNKNOWN_USER',
  'WRONG_PASSWORD',
  'REQUIRED_PASSWORD',
  'REQUIRED_SECOND_FACTOR',
  'AUTHENTICATION_FAILED',
  'IP_ADDRESS_NOT_ALLOWED',
  'USER_EXPIRED',
  'CLIENT_HAS_CONNECTED_TO_WRONG_PORT',
  'CANNOT_LOAD_CONFIG',
  'UNKNOWN_ELEMENT_IN_CONFIG',
  'EXCESSIVE_ELEMENT_IN_CONFIG',
  'NO_ELEMENTS_IN_CONFIG',
  'INVALID_CONFIG_PARAMETER',
  'UNKNOWN_PACKET_FROM_SERVER',
  'UNEXPECTED_PACKET_FROM_SERVER',
  'UNKNOWN_PACKET_FROM_CLIENT',
  'UNEXPECTED_PACKET_FROM_CLIENT',
  // The server's files and system calls: their text names the host's paths.
  'CANNOT_OPEN_FILE',
  'CANNOT_CLOSE_FILE',
  'FILE_DOESNT_EXIST',
  'FILE_ALREADY_EXISTS',
  'CANNOT_CREATE_FILE',
  'CANNOT_APPEND_TO_FILE',
  'CANNOT_READ_FROM_FILE_DESCRIPTOR',
  'CANNOT_WRITE_TO_FILE_DESCRIPTOR',
  'CANNOT_WRITE_TO_FILE',
  'CANNOT_SEEK_THROUGH_FILE',
  'CANNOT_TRUNCATE_FILE',
  'CANNOT_FSYNC',
  'CANNOT_STAT',
  'CANNOT_FSTAT',
  'CANNOT_STATVFS',
  'CANNOT_UNLINK',
  'CANNOT_RMDIR',
  'CANNOT_CREATE_DIRECTORY',
  'DIRECTORY_DOESNT_EXIST',
  'DIRECTORY_ALREADY_EXISTS',
  'PATH_ACCESS_DENIED',
  'INSECURE_PATH',
  'FS_METADATA_ERROR',
  'CANNOT_MUNMAP',
  'CANNOT_MREMAP',
  'CANNOT_MPROTECT',
  'CANNOT_ADVISE',
  'CANNOT_PIPE',
  'CANNOT_FORK',
  'CANNOT_DLOPEN',
  'CANNOT_DLSYM',
  'CANNOT_CREATE_CHILD_PROCESS',
  'CHILD_WAS_NOT_EXITED_NORMALLY',
  'CANNOT_WAITPID',
  'CANNOT_SELECT',
  'CANNOT_POLL',
  'EPOLL_ERROR',
  'CANNOT_IO_SUBMIT',
  'CANNOT_IO_GETEVENTS',
  'CANNOT_IOSETUP',
  'IO_SETUP_ERROR',
  'IO_URING_INIT_FAILED',
  'IO_URING_SUBMIT_ERROR',
  'AIO_READ_ERROR',
  'AIO_WRITE_ERROR',
  'CANNOT_BLOCK_SIGNAL',
  'CANNOT_UNBLOCK_SIGNAL',
  'CANNOT_MANIPULATE_SIGSET',
  'CANNOT_WAIT_FOR_SIGNAL',
  'CANNOT_SET_SIGNAL_HANDLER',
  'CANNOT_SIGQUEUE',
  'CANNOT_SEND_SIGNAL',
  'CANNOT_CLOCK_GETTIME',
  'CANNOT_GETTIMEOFDAY',
  'CANNOT_CREATE_TIMER',
  'CANNOT_SET_TIMER_PERIOD',
  'CANNOT_FCNTL',
  'CANNOT_PTHREAD_ATTR',
  'CANNOT_SET_THREAD_PRIORITY',
  'CANNOT_GET_THREAD_PRIORITY',
  'CANNOT_SYSCONF',
  'CANNOT_LINK',
  'SYSTEM_ERROR',
  'PTHREAD_ERROR',
  'NETLINK_ERROR',
  'FAILED_TO_GETPWUID',
  'MISMATCHING_USERS_FOR_PROCESS_AND_DATA',
  'OPENSSL_ERROR',
]

/** Every listed error name with what it is. */
export const CLICKHOUSE_FAILURES: ReadonlyMap<string, ClickHouseFailure> = new Map([
  ...LIMIT.map((name) => [name, 'limit'] as const),
  ...UNAVAILABLE.map((name) => [name, 'unavailable'] as const),
  ...INTERNAL.map((name) => [name, 'internal'] as const),
])

export const failureOf = (name: string): ClickHouseFailure => CLICKHOUSE_FAILURES.get(name) ?? DEFAULT_FAILURE

/** Codes of the transport (Node's sockets, DNS): the server could not be reached or went away. */
const TRANSPORT_CODES = new Set([...SOCKET_ERROR_CODES, 'ENOTFOUND', 'EAI_AGAIN'])

/**
 * What a failed call to ClickHouse was; undefined for an error that is not ClickHouse's (a bug,
 * to be answered 500). A request that never got an answer (refused, reset, the client's own
 * timeout) is `unavailable`.
 */
function classifyClickHouseError(err: unknown): ClickHouseFailure | undefined {
  if (err instanceof ClickHouseError) return err.type ? failureOf(err.type) : DEFAULT_FAILURE
  const e = err as { code?: unknown; message?: unknown } | null
  if (typeof e?.code === 'string' && TRANSPORT_CODES.has(e.code)) return 'unavailable'
  // @clickhouse/client's own request timeout, and a connection closed mid-answer.
  if (e?.message === 'Timeout error.' || e?.message === 'socket hang up') return 'unavailable'
  return undefined
}

/**
 * Whether a failed call says the server (or a shard behind it) cannot take it now, whatever the
 * query held: refused, gone away, overloaded, a shard or replica unreachable. Such a failure
 * never speaks against the rows of an insert.
 */
export function isClickHouseUnavailable(err: unknown): boolean {
  return classifyClickHouseError(err) === 'unavailable'
}

/** Whether an error, or one it wraps (a migration step's, say), says ClickHouse could not take the call. */
export function causedByClickHouseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (isClickHouseUnavailable(e)) return true
  return false
}

/** ClickHouse's "Code: 62. DB::Exception: …  (SYNTAX_ERROR) (version 26.7.2.1)", as a caller reads it. */
function callerMessage(err: ClickHouseError): string {
  return err.message
    .replace(/^Code: \d+\. DB::Exception: /, '')
    .replace(/\s*\(version [^)]*\)\s*$/, '')
    .trim()
}

/**
 * The answer to a failed ClickHouse call made for a caller: `prefix` says where the problem is
 * (`sql: ` for callers' own SQL). Undefined for `internal` and for errors that are not
 * ClickHouse's: the caller rethrows them and the error handler answers 500 and logs them.
 */
export function clickHouseAnswer(err: unknown, prefix = ''): AppError | undefined {
  switch (classifyClickHouseError(err)) {
    case 'user':
      return new AppError(400, 'bad_request', `${prefix}${callerMessage(err as ClickHouseError)}`)
    case 'limit':
      return new AppError(
        422,
        'query_limit_exceeded',
        `query exceeded a limit of the server: ${callerMessage(err as ClickHouseError)}`,
      )
    case 'unavailable':
      return new AppError(
        503,
        'clickhouse_unavailable',
        err instanceof ClickHouseError
          ? `ClickHouse could not run the query now: ${callerMessage(err)}; retry`
          : 'ClickHouse is unavailable for now; retry the request',
        { retryAfterSeconds: 1 },
      )
    default:
      return undefined
  }
}
