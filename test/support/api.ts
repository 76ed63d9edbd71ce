import type { FastifyInstance } from 'fastify'

/** An answer of the API: its status and the envelope's two fields. */
export interface Answer {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the API answered, field by field
  data: any
  error: string | null
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** An app in this process (called through inject) or the base URL of a listening Tally. */
export type ApiTarget = Pick<FastifyInstance, 'inject'> | string

/** Whose key a call carries: a TestOrg, or anything with its headers. */
export interface Caller {
  headers: { authorization: string }
}

export interface CallOptions {
  as?: Caller
  /** Sent as JSON. */
  body?: unknown
  headers?: Record<string, string>
}

/** Calls the API and unwraps the envelope; throws when the answer is not the JSON envelope. */
export async function callApi(
  target: ApiTarget,
  method: Method,
  url: string,
  { as, body, headers }: CallOptions = {},
): Promise<Answer> {
  const sent = { ...as?.headers, ...headers }
  if (typeof target === 'string') {
    const res = await fetch(`${target}${url}`, {
      method,
      headers: body === undefined ? sent : { 'content-type': 'application/json', ...sent },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return unwrap(res.status, await res.text())
  }
  const res = await target.inject({
    method,
    url,
    headers: sent,
    ...(body === undefined ? {} : { payload: body as object }),
  })
  return unwrap(res.statusCode, res.body)
}

/** The API as one organization calls it. */
export function apiAs(target: ApiTarget, caller: Caller) {
  const call = (method: Method, url: string, body?: unknown, headers?: Record<string, string>) =>
    callApi(target, method, url, { as: caller, body, headers })
  return {
    get: (url: string, headers?: Record<string, string>) => call('GET', url, undefined, headers),
    post: (url: string, body?: unknown, headers?: Record<string, string>) => call('POST', url, body, headers),
    patch: (url: string, body: unknown) => call('PATCH', url, body),
    put: (url: string, body: unknown) => call('PUT', url, body),
    delete: (url: string) => call('DELETE', url),
  }
}

function unwrap(status: number, text: string): Answer {
  let envelope: { data: unknown; error: string | null }
  try {
    envelope = JSON.parse(text)
  } catch {
    throw new Error(`the ${status} answer is not the JSON envelope: ${text.slice(0, 200)}`)
  }
  return { status, data: envelope.data, error: envelope.error }
}
