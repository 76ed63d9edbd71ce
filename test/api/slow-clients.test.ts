import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { rawConnection } from '../support/raw-http.ts'

const HEADERS_TIMEOUT_MS = 500
const REQUEST_TIMEOUT_MS = 1_000
// Node looks for requests past their deadline once a second (connectionsCheckingInterval).
const CHECK_INTERVAL_MS = 1_000

let tally: TestTally
beforeAll(async () => {
  tally = await startTestTally({
    env: {
      TALLY_HTTP_HEADERS_TIMEOUT: `${HEADERS_TIMEOUT_MS}ms`,
      TALLY_HTTP_REQUEST_TIMEOUT: `${REQUEST_TIMEOUT_MS}ms`,
    },
  })
})
afterAll(() => tally.close())

/** Sends `text` and never the rest; resolves with what the server did about it. */
async function sendAndStall(text: string) {
  const connection = rawConnection(tally.url)
  connection.send(text)
  const bound = REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS + 2_000
  let timer: NodeJS.Timeout | undefined
  const held = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the server held the connection past ${bound} ms`)), bound)
  })
  try {
    return await Promise.race([connection.closed, held])
  } finally {
    clearTimeout(timer)
  }
}

const timedOut = {
  status: 408,
  body: JSON.stringify({
    data: null,
    error: `request: not received in time (headers within ${HEADERS_TIMEOUT_MS / 1000} s, the whole request within ${REQUEST_TIMEOUT_MS / 1000} s)`,
  }),
}

describe('clients that stop sending', () => {
  it('half a body: 408 in the envelope and the connection closed once the request deadline passes', async () => {
    const org = await tally.newOrg()
    const { answers, afterMs } = await sendAndStall(
      'POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: ${org.headers.authorization}\r\nContent-Length: 100\r\n\r\n{"name":`,
    )
    expect(answers).toEqual([expect.objectContaining(timedOut)])
    expect(afterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50)
  })

  it('half the headers: 408 in the envelope once the headers deadline passes', async () => {
    const { answers } = await sendAndStall('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ')
    expect(answers).toEqual([expect.objectContaining(timedOut)])
  })

  it('a request sent whole is answered as usual on the same settings', async () => {
    const res = await fetch(`${tally.url}/healthz`)
    expect(res.status).toBe(200)
  })
})
