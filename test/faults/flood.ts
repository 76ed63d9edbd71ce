// A tenant flooding POST /v1/request/log from several keys of one organization, from a process of
// its own (so the flood's own work does not slow the calm tenant's client, which measures).
// Started by the fault suite with FLOOD_URL, FLOOD_KEYS (a JSON list of Authorization values),
// FLOOD_RATE (requests a second in all) and FLOOD_SECONDS; sends back the statuses it got.
import autocannon from 'autocannon'

const keys = JSON.parse(process.env.FLOOD_KEYS ?? '[]') as string[]
let next = 0
const body = JSON.stringify({ events: Array.from({ length: 100 }, () => ({ model: 'gpt-4o-mini' })) })
const result = await autocannon({
  url: `${process.env.FLOOD_URL}/v1/request/log`,
  method: 'POST',
  connections: 4 * keys.length,
  overallRate: Number(process.env.FLOOD_RATE),
  duration: Number(process.env.FLOOD_SECONDS),
  headers: { 'content-type': 'application/json' },
  body,
  requests: [
    {
      setupRequest: (request) => ({
        ...request,
        headers: { ...request.headers, authorization: keys[next++ % keys.length] as string },
      }),
    },
  ],
})
const statuses = Object.fromEntries(
  Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => [status, count ?? 0]),
)
process.send?.({ statuses, requests: result.requests.total }, () => process.exit(0))
