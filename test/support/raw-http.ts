import { connect } from 'node:net'

/** One answer read off a raw connection. */
export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * A connection to the server at `baseUrl` on which a test writes bytes as they are: a half body,
 * oversized headers, bytes that are not HTTP, pipelined requests. `closed` resolves once the
 * server closes it, with every answer it sent and when (the test's own timeout bounds a server
 * that never does).
 */
export function rawConnection(baseUrl: string) {
  const { hostname, port } = new URL(baseUrl)
  const socket = connect(Number(port), hostname)
  const opened = Date.now()
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk) => {
    received += chunk
  })
  const closed = new Promise<{ answers: RawAnswer[]; afterMs: number }>((resolve, reject) => {
    socket.on('error', (err) => {
      // A server that answers and then resets the connection still answered.
      if (!received) reject(err)
    })
    socket.on('close', () => resolve({ answers: parseAnswers(received), afterMs: Date.now() - opened }))
  })
  return {
    send: (text: string) => socket.write(text),
    closed,
  }
}

/** Sends `text` and resolves with the server's one answer once it closes the connection. */
export async function rawHttp(baseUrl: string, text: string): Promise<RawAnswer & { afterMs: number }> {
  const connection = rawConnection(baseUrl)
  connection.send(text)
  const { answers, afterMs } = await connection.closed
  const [answer, ...more] = answers
  if (!answer || more.length > 0) throw new Error(`expected one answer, got ${answers.length}`)
  return { ...answer, afterMs }
}

/** HTTP/1.1 answers one after another, each with a Content-Length. */
function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = []
  let rest = text
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n')
    if (headEnd < 0) throw new Error(`an answer without the end of its headers: ${rest.slice(0, 200)}`)
    const [statusLine = '', ...lines] = rest.slice(0, headEnd).split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const at = line.indexOf(':')
      if (at > 0) headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim()
    }
    const bodyStart = headEnd + 4
    const length = Number(headers['content-length'] ?? rest.length - bodyStart)
    const body = Buffer.from(rest.slice(bodyStart)).subarray(0, length).toString()
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body })
    rest = rest.slice(bodyStart + body.length)
  }
  return answers
}
