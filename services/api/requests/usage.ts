export interface Usage {
  prompt: number
  completion: number
  /** As reported, or prompt + completion. */
  total: number
  /** The model named by the response, when it names one. */
  model?: string
}

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const count = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0

/**
 * Token usage from a model response: an OpenAI chat completion (`usage.prompt_tokens`), an
 * OpenAI Responses object (`usage.input_tokens`), an Anthropic message (`usage.input_tokens`
 * plus cache writes and reads), or the text of a stream of them, as SSE (`data: {…}` lines) or
 * as one JSON object per line. Returns zeros when nothing is found.
 */
export function extractUsage(response: unknown): Usage {
  if (typeof response === 'string') return fromStream(response)
  const acc = emptyAcc()
  if (isObject(response)) absorb(acc, response)
  return finish(acc)
}

interface Acc {
  prompt: number
  completion: number
  total: number
  model?: string
}

const emptyAcc = (): Acc => ({ prompt: 0, completion: 0, total: 0 })

function finish(acc: Acc): Usage {
  const total = Math.max(acc.total, acc.prompt + acc.completion)
  return acc.model === undefined
    ? { prompt: acc.prompt, completion: acc.completion, total }
    : { prompt: acc.prompt, completion: acc.completion, total, model: acc.model }
}

function fromStream(text: string): Usage {
  const acc = emptyAcc()
  const trimmed = text.trim()
  if (trimmed.startsWith('{')) {
    // A whole JSON body sent as text (Helicone's textBody) rather than a stream.
    try {
      const whole = JSON.parse(trimmed)
      if (isObject(whole)) {
        absorb(acc, whole)
        return finish(acc)
      }
    } catch {
      // Several JSON objects, one per line: read them as a stream below.
    }
  }
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    const json = line.startsWith('data:') ? line.slice(5).trim() : line
    if (!json.startsWith('{')) continue
    try {
      const chunk = JSON.parse(json)
      if (isObject(chunk)) absorb(acc, chunk)
    } catch {
      // A partial or non-JSON line carries no usage.
    }
  }
  return finish(acc)
}

/** Folds one response object or stream chunk into the running usage. */
function absorb(acc: Acc, obj: Json): void {
  if (typeof obj.model === 'string' && obj.model) acc.model = obj.model
  // Anthropic stream: message_start carries the input side, message_delta the running output.
  if (obj.type === 'message_start' && isObject(obj.message)) {
    absorb(acc, obj.message)
    return
  }
  // OpenAI Responses stream: response.completed carries the final response.
  if (isObject(obj.response) && typeof obj.type === 'string' && obj.type.startsWith('response.')) {
    absorb(acc, obj.response)
    return
  }
  const usage = obj.usage
  if (!isObject(usage)) return
  if ('prompt_tokens' in usage || 'completion_tokens' in usage) {
    acc.prompt = Math.max(acc.prompt, count(usage.prompt_tokens))
    acc.completion = Math.max(acc.completion, count(usage.completion_tokens))
    acc.total = Math.max(acc.total, count(usage.total_tokens))
    return
  }
  const input =
    count(usage.input_tokens) +
    count(usage.cache_creation_input_tokens) +
    count(usage.cache_read_input_tokens)
  acc.prompt = Math.max(acc.prompt, input)
  acc.completion = Math.max(acc.completion, count(usage.output_tokens))
  acc.total = Math.max(acc.total, count(usage.total_tokens))
}
