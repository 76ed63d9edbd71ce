import type { Logger } from '../shared/logger.ts'
import type { ClaimedDelivery, DeliveryRepo } from '../shared/webhooks/deliveries.ts'

/**
 * The deliveries a dispatcher process holds under its claims (queued, in flight, or with their
 * outcome not yet written), with their leases renewed every third of a lease so that no live
 * process's claim expires and another process sends the delivery again. A claim found gone at
 * renewal (the row was retried, deleted or taken over) is marked lost: it is not sent.
 */
export function createLeases(deps: { repo: DeliveryRepo; leaseMs: number; log: Logger }) {
  const { repo, leaseMs, log } = deps
  const held = new Map<string, ClaimedDelivery>()
  const lost = new WeakSet<ClaimedDelivery>()
  let renewing = false

  function forget(delivery: ClaimedDelivery): void {
    if (held.get(delivery.id) === delivery) held.delete(delivery.id)
  }

  async function renew(): Promise<void> {
    if (renewing || held.size === 0) return
    renewing = true
    try {
      const current = [...held.values()]
      const gone = new Set(await repo.renew(current, leaseMs))
      for (const delivery of current)
        if (gone.has(delivery.id)) {
          lost.add(delivery)
          forget(delivery)
        }
    } catch (err) {
      log.error({ err, count: held.size }, 'webhook_lease_renewal_failed')
    } finally {
      renewing = false
    }
  }
  const timer = setInterval(() => void renew(), Math.max(100, Math.floor(leaseMs / 3)))

  return {
    hold(deliveries: ClaimedDelivery[]): void {
      for (const delivery of deliveries) held.set(delivery.id, delivery)
    },
    forget,
    isLost: (delivery: ClaimedDelivery) => lost.has(delivery),
    /** Ids held now: the poller never claims them again. */
    ids: () => [...held.keys()],
    stop: () => clearInterval(timer),
  }
}
