/** Polls until the condition holds; fails with `what` after the deadline. Never a fixed sleep. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  {
    timeoutMs = 10_000,
    intervalMs = 25,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await condition()) return
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}
