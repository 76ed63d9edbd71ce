/**
 * Every C library function the child calls through koffi, declared once: native.ts runs ClickHouse
 * on a thread of its own and ends the process; sandbox.ts shuts the child in. Loaded only in the
 * child process (child.ts imports both).
 */
import koffi from 'koffi'

export const libc = koffi.load('libc.so.6')

// Running ClickHouse and ending the process (native.ts).
export const exitNow = libc.func('void _exit(int status)')
export const strdup = libc.func('void *strdup(const char *s)')
export const malloc = libc.func('void *malloc(size_t size)')
export const onExit = libc.func('int on_exit(void *fn, void *arg)')
export const attrInit = libc.func('int pthread_attr_init(void *attr)')
export const attrSetStackSize = libc.func('int pthread_attr_setstacksize(void *attr, size_t size)')
export const pthreadCreate = libc.func(
  'int pthread_create(_Out_ uint64_t *thread, void *attr, void *start, void *arg)',
)
export const cxaAtExit = libc.func('int __cxa_atexit(void *fn, void *arg, void *dso)')

// Shutting the child in (sandbox.ts).
export const mount = libc.func(
  'int mount(const char *source, const char *target, const char *fstype, unsigned long flags, const char *data)',
)
export const chroot = libc.func('int chroot(const char *path)')
export const chdir = libc.func('int chdir(const char *path)')
export const sethostname = libc.func('int sethostname(const char *name, size_t len)')
export const setgroups = libc.func('int setgroups(size_t size, const uint32_t *list)')
export const setresgid = libc.func('int setresgid(uint32_t r, uint32_t e, uint32_t s)')
export const setresuid = libc.func('int setresuid(uint32_t r, uint32_t e, uint32_t s)')
export const prctl = libc.func(
  'int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)',
)
export const capset = libc.func('int capset(void *header, void *data)')
