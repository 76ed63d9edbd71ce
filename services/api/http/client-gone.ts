import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * Aborts when the client goes away before its answer is complete (the connection closed, the
 * request broke off): work done for that answer, ClickHouse's included, can then stop.
 */
export function clientGone(req: IncomingMessage, res: ServerResponse): AbortSignal {
  const controller = new AbortController()
  const gone = () => controller.abort(new Error('the client went away'))
  res.once('close', () => {
    if (!res.writableFinished) gone()
  })
  req.once('error', gone)
  return controller.signal
}
