import type { Sender, SendResult } from './sender.ts'
import { signatureHeaders } from './signature.ts'

/** Where a delivery goes and the signing keys in effect, newest first. */
export interface DeliveryTarget {
  destination: string
  keys: readonly string[]
}

export interface Attempt {
  attemptedAt: Date
  result: SendResult
}

/**
 * One attempt of a delivery, made the same way by the dispatcher and by the test endpoint: the
 * stored body is signed as it is sent (the delivery id is the `webhook-id`), and what the receiver
 * answered comes back as a value, never an exception.
 */
export async function attemptDelivery(
  sender: Sender,
  target: DeliveryTarget,
  delivery: { id: string; body: Buffer },
): Promise<Attempt> {
  const attemptedAt = new Date()
  const headers = signatureHeaders({
    id: delivery.id,
    timestamp: Math.floor(attemptedAt.getTime() / 1000),
    body: delivery.body,
    keys: target.keys,
  })
  return { attemptedAt, result: await sender.send(target.destination, delivery.body, headers) }
}
