import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'

// A caller that asks for a large answer and then does not read it would hold its organization's
// query slot, and an engine connection, for as long as it liked: not past TALLY_SQL_SEND_TIMEOUT.
describe('a caller that does not read its SQL answer', () => {
  let tally: TestTally
  let org: TestOrg
  beforeAll(async () => {
    tally = await startTestTally({
      env: { TALLY_SQL_SEND_TIMEOUT: '2s', TALLY_QUERY_CONCURRENCY_PER_ORG: '1' },
    })
    org = await tally.newOrg()
  })
  afterAll(() => tally?.close())

  it('has its answer cut after the send timeout, and its organization’s slot is free again', async () => {
    // About 55 MB of JSON text (a quote is two characters there) from 27 MB of rows: far more than
    // the sockets and streams between the engine and the caller can buffer.
    const body = JSON.stringify({
      sql: "SELECT repeat('\"', 300) || toString(number) AS s FROM numbers(90000)",
    })
    const { hostname, port } = new URL(tally.url)
    const socket: Socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    // Reads the answer's first bytes (Tally is sending: the slot is the slow caller's), then nothing.
    const answering = new Promise<void>((resolve) =>
      socket.once('data', () => {
        socket.pause()
        resolve()
      }),
    )
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.on('error', () => {})
    socket.write(
      `POST /v1/sql/query HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${org.headers.authorization}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    await answering

    // The same organization's next query gets its slot once the unread answer is cut.
    const next = await waitFor(
      async () => {
        const answer = await callApi(tally.app, 'POST', '/v1/sql/query', {
          as: org,
          body: { sql: 'SELECT 1 AS one' },
        })
        return answer.status === 200 && answer
      },
      { what: 'the slot free again (the unread answer cut)', timeoutMs: 30_000, intervalMs: 250 },
    )
    expect(next.data.rows).toEqual([{ one: 1 }])

    // What the caller receives when it reads again: the answer's beginning, then the connection
    // closes without the chunked answer's end.
    socket.resume()
    await closed
    const received = Buffer.concat(chunks).toString('latin1')
    expect(received.startsWith('HTTP/1.1 200')).toBe(true)
    expect(received.length).toBeLessThan(50_000_000)
    expect(received.endsWith('\r\n0\r\n\r\n')).toBe(false)
  }, 60_000)
})
