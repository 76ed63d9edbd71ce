import type { AnyValue, KeyValue } from '../../../generated/otlp/opentelemetry/proto/common/v1/common_pb.js'

/** How deep a structured attribute value (arrays, key-value lists) may nest before it is refused. */
const MAX_DEPTH = 32

/** A structured attribute nested deeper than {@link MAX_DEPTH}. */
export class TooDeepError extends Error {}

type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain }

/** An attribute value as plain JSON: int64 as a number when exact, else as decimal text; bytes as base64. */
function toPlain(value: AnyValue | undefined, depth = 0): Plain {
  if (depth > MAX_DEPTH) throw new TooDeepError(`is nested deeper than ${MAX_DEPTH} levels`)
  const v = value?.value
  switch (v?.case) {
    case 'stringValue':
    case 'boolValue':
    case 'doubleValue':
      return v.value
    case 'intValue':
      return Number.isSafeInteger(Number(v.value)) ? Number(v.value) : v.value.toString()
    case 'bytesValue':
      return Buffer.from(v.value).toString('base64')
    case 'arrayValue':
      return v.value.values.map((x) => toPlain(x, depth + 1))
    case 'kvlistValue': {
      const out: { [key: string]: Plain } = {}
      for (const kv of v.value.values) out[kv.key] = toPlain(kv.value, depth + 1)
      return out
    }
    default:
      return null
  }
}

/** A span's (or resource's) attributes by key; the last of a repeated key wins. */
export class Attributes {
  readonly #map = new Map<string, AnyValue | undefined>()

  constructor(...lists: KeyValue[][]) {
    for (const list of lists) for (const kv of list) this.#map.set(kv.key, kv.value)
  }

  has(key: string): boolean {
    return this.#map.has(key)
  }

  keys(): IterableIterator<string> {
    return this.#map.keys()
  }

  /** What `read` makes of the first of `keys` that is present and that it reads (undefined: the next). */
  #first<T>(keys: string[], read: (value: AnyValue['value']) => T | undefined): T | undefined {
    for (const key of keys) {
      const v = this.#map.get(key)?.value
      if (!v) continue
      const found = read(v)
      if (found !== undefined) return found
    }
    return undefined
  }

  /** Text, or a number or boolean as text; undefined when absent or empty. */
  string(...keys: string[]): string | undefined {
    return this.#first(keys, (v) => {
      if (v.case === 'stringValue' && v.value !== '') return v.value
      if (v.case === 'intValue' || v.case === 'doubleValue' || v.case === 'boolValue') return String(v.value)
      return undefined
    })
  }

  /**
   * A count: an int, a whole double or decimal text. A value that is present but not a count
   * (negative, fractional, text) is returned as NaN, so that the intake's rules name it.
   */
  count(...keys: string[]): number | undefined {
    return this.#first(keys, (v) => {
      if (v.case === 'intValue') return Number(v.value)
      if (v.case === 'doubleValue') return v.value
      if (v.case === 'stringValue') return /^\d{1,20}$/.test(v.value.trim()) ? Number(v.value) : Number.NaN
      return Number.NaN
    })
  }

  /** A number (int, double or decimal text); undefined when absent or not a number. */
  number(...keys: string[]): number | undefined {
    return this.#first(keys, (v) => {
      if (v.case === 'intValue') return Number(v.value)
      if (v.case === 'doubleValue') return v.value
      if (v.case === 'stringValue' && v.value.trim() !== '' && Number.isFinite(Number(v.value)))
        return Number(v.value)
      return undefined
    })
  }

  /** A value meant as JSON: structured values as they are, text parsed when it is JSON, else the text. */
  json(...keys: string[]): Plain | undefined {
    for (const key of keys) {
      if (!this.#map.has(key)) continue
      const plain = toPlain(this.#map.get(key))
      if (typeof plain !== 'string') return plain
      const text = plain.trim()
      if (text.startsWith('{') || text.startsWith('[')) {
        try {
          return JSON.parse(text) as Plain
        } catch {
          return plain
        }
      }
      return plain
    }
    return undefined
  }

  /**
   * Indexed attributes flattened by OpenLLMetry and OpenInference (`gen_ai.prompt.0.role`,
   * `llm.input_messages.1.message.content`) gathered back into a list of objects, in index order.
   */
  indexed(prefix: string, infix = ''): Record<string, Plain>[] {
    const byIndex = new Map<number, Record<string, Plain>>()
    for (const [key, value] of this.#map) {
      if (!key.startsWith(prefix)) continue
      const m = /^(\d{1,6})\.(.+)$/.exec(key.slice(prefix.length))
      if (!m || !(m[2] as string).startsWith(infix)) continue
      const index = Number(m[1])
      const field = (m[2] as string).slice(infix.length)
      if (!field) continue
      const entry = byIndex.get(index) ?? {}
      byIndex.set(index, entry)
      entry[field] = toPlain(value)
    }
    return [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, entry]) => entry)
  }

  /** Entries whose key starts with `prefix`, by the rest of the key, as text. */
  withPrefix(prefix: string): [string, string][] {
    const out: [string, string][] = []
    for (const [key, value] of this.#map) {
      if (!key.startsWith(prefix) || key.length === prefix.length) continue
      const plain = toPlain(value)
      out.push([key.slice(prefix.length), typeof plain === 'string' ? plain : JSON.stringify(plain)])
    }
    return out
  }
}
