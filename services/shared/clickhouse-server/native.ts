/**
 * The native calls the child makes through koffi: libc (libc.ts) for threads and exiting, and
 * libchdb's argv entry point. Loaded only in the child process.
 */
import koffi from 'koffi'
import {
  attrInit,
  attrSetStackSize,
  cxaAtExit,
  exitNow,
  libc,
  malloc,
  onExit,
  pthreadCreate,
  strdup,
} from './libc.ts'

const THREAD_STACK_BYTES = 16 * 1024 * 1024

/**
 * Ends the process at once. The child must never call exit(3) (process.exit) once ClickHouse
 * runs: ClickHouse's thread is itself inside exit(3) (see runClickHouse), and a second exit would
 * run the exit handlers twice.
 */
export function hardExit(code: number): never {
  exitNow(code)
  throw new Error('unreachable: _exit returned')
}

/**
 * libchdb.so, held for the life of the process: koffi unloads (dlclose) a library whose handle is
 * garbage-collected, and ClickHouse runs from it on its own thread; an unloaded library there is a
 * SIGSEGV at whatever moment the collector runs (seen as crashes at start when starts coincide).
 */
let chdb: ReturnType<typeof koffi.load> | undefined

/** Loads libchdb.so: done before the child shuts itself in (sandbox.ts), where the file is out of reach. */
export function loadClickHouse(libchdbPath: string): unknown {
  chdb ??= koffi.load(libchdbPath)
  return chdb.symbol('query_stable_v2')
}

/**
 * Runs clickhouse-local's `query_stable_v2(argc, argv)` (`entry`, from loadClickHouse) on a new
 * thread and returns at once.
 *
 * koffi runs every native call on a stack of its own, and ClickHouse checks that the stack it
 * runs on is its thread's (checkStackSize: "Stack size too large", code 306, on every query).
 * So the call must start on a real thread stack, with no compiled helper. glibc's on_exit(3)
 * calls `fn(status, arg)`, the same shape as `query_stable_v2(int argc, char **argv)`, and exit(3)
 * runs those handlers on the thread that calls it. Hence: register `_exit` then
 * `query_stable_v2(argv)` with on_exit (handlers run last-registered first), and start a thread
 * whose start routine is exit(3) itself with argc as its argument. That thread runs ClickHouse
 * with its own 16 MiB stack; when ClickHouse returns, `_exit(argc)` ends the process, before any
 * older exit handler (Node's, libchdb's static destructors) can run beside the JS thread;
 * exitZeroOnReturn puts a handler before it when ClickHouse was asked to stop.
 */
export function runClickHouse(entry: unknown, args: readonly string[]): void {
  // Built with malloc: the strings must outlive this call, which koffi's own buffers do not.
  const argv = malloc((args.length + 1) * 8)
  args.forEach((arg, i) => {
    koffi.encode(argv, i * 8, 'void *', strdup(arg))
  })
  koffi.encode(argv, args.length * 8, 'void *', null)
  const attr = malloc(64)
  if (attrInit(attr) !== 0 || attrSetStackSize(attr, THREAD_STACK_BYTES) !== 0)
    throw new Error('pthread_attr_init/setstacksize failed')
  if (onExit(libc.symbol('_exit'), null) !== 0 || onExit(entry, argv) !== 0) throw new Error('on_exit failed')
  const thread = [0n]
  const rc = pthreadCreate(thread, attr, libc.symbol('exit'), BigInt(args.length))
  if (rc !== 0) throw new Error(`pthread_create failed with ${rc}`)
}

/**
 * Makes the process end with status 0 (EXIT.stopped) when ClickHouse returns: the child calls it
 * as it asks ClickHouse to stop. ClickHouse's thread is then inside exit(3), running
 * `query_stable_v2`; glibc runs a handler registered meanwhile as soon as that one returns, before
 * the older `_exit(argc)`, and calls a __cxa_atexit handler as `fn(arg)`: here `_exit(0)`. A
 * ClickHouse that returns without being asked (it failed) still ends with argc.
 */
export function exitZeroOnReturn(): void {
  if (cxaAtExit(libc.symbol('_exit'), null, null) !== 0) throw new Error('__cxa_atexit failed')
}
