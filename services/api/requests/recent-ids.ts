/**
 * The created_at of caller-supplied request ids this process published lately, per organization:
 * a re-send that comes back to the same process keeps its first created_at without asking
 * ClickHouse, so it replaces its row even while the look-up fails or is skipped (a loaded or
 * unreachable ClickHouse). At most `capacity` ids are kept, the least recently published forgotten
 * first (about 150 bytes each).
 */
export function createRecentIds(capacity: number) {
  const seen = new Map<string, number>()
  const key = (organizationId: string, requestId: string) => `${organizationId}/${requestId}`
  return {
    get(organizationId: string, requestId: string): Date | undefined {
      const ms = seen.get(key(organizationId, requestId))
      return ms === undefined ? undefined : new Date(ms)
    },
    remember(organizationId: string, events: { request_id: string; created_at: Date }[]): void {
      for (const e of events) {
        const k = key(organizationId, e.request_id)
        seen.delete(k)
        seen.set(k, e.created_at.getTime())
      }
      for (const oldest of seen.keys()) {
        if (seen.size <= capacity) break
        seen.delete(oldest)
      }
    },
    size: () => seen.size,
  }
}
