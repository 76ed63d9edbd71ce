/**
 * Polls `condition` until it returns anything but false, null or undefined, and resolves with
 * that value. After `timeoutMs` it throws naming `what` (a function is asked only then, say for
 * a process's output). A condition that throws ends the wait with its error. Never a fixed sleep.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: { what: string | (() => string); timeoutMs?: number; intervalMs?: number },
): Promise<Exclude<T, false | null | undefined>> {
  const { timeoutMs = 10_000, intervalMs = 25 } = options
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await condition()
    if (value !== false && value !== null && value !== undefined)
      return value as Exclude<T, false | null | undefined>
    if (Date.now() > deadline) {
      const what = typeof options.what === 'function' ? options.what() : options.what
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)
    }
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}
