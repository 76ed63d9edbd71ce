import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { Span } from '../../../generated/otlp/opentelemetry/proto/trace/v1/trace_pb.js'
import { inputProblem } from '../http/inputs.ts'
import { type IntakeEvent, intakeEvent } from '../requests/interface.ts'
import { Attributes, TooDeepError } from './attributes.ts'
import type { DecodedExport } from './decode.ts'

// Attribute names, copied from the conventions rather than imported (the GenAI ones live in
// @opentelemetry/semantic-conventions/incubating, which is not a stable export):
// OTel GenAI https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/, OpenInference
// https://github.com/Arize-ai/openinference/blob/main/spec/semantic_conventions.md, and the older
// OpenLLMetry names (gen_ai.prompt.N.*, gen_ai.usage.prompt_tokens). docs/requests.md has the table.
const A = {
  provider: ['gen_ai.provider.name', 'gen_ai.system', 'llm.provider', 'llm.system'],
  operation: 'gen_ai.operation.name',
  requestModel: ['gen_ai.request.model', 'llm.model_name', 'llm.request.model'],
  responseModel: ['gen_ai.response.model', 'llm.response.model'],
  inputTokens: [
    'gen_ai.usage.input_tokens',
    'gen_ai.usage.prompt_tokens',
    'llm.token_count.prompt',
    'llm.usage.prompt_tokens',
  ],
  outputTokens: [
    'gen_ai.usage.output_tokens',
    'gen_ai.usage.completion_tokens',
    'llm.token_count.completion',
    'llm.usage.completion_tokens',
  ],
  cacheRead: [
    'gen_ai.usage.cache_read.input_tokens',
    'gen_ai.usage.cache_read_input_tokens',
    'llm.token_count.prompt_details.cache_read',
  ],
  cacheCreation: [
    'gen_ai.usage.cache_creation.input_tokens',
    'gen_ai.usage.cache_creation_input_tokens',
    'llm.token_count.prompt_details.cache_write',
  ],
  cost: 'llm.cost.total',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  finishReasons: 'gen_ai.response.finish_reasons',
  conversation: 'gen_ai.conversation.id',
  openInferenceKind: 'openinference.span.kind',
  traceloopKind: 'traceloop.span.kind',
  requestType: 'llm.request.type',
  httpStatus: 'http.response.status_code',
  errorType: 'error.type',
} as const

/** GenAI operations that are not a call to a model (an agent or tool span around such calls). */
const NOT_MODEL_CALLS = new Set(['execute_tool', 'invoke_agent', 'create_agent', 'invoke_workflow'])
/** OpenInference span kinds that are model calls; CHAIN, TOOL, AGENT, RETRIEVER… are not. */
const MODEL_KINDS = new Set(['LLM', 'EMBEDDING'])
/** Keys whose presence marks a span as a model call. */
const MARKERS = [
  A.operation,
  A.requestType,
  ...A.provider,
  ...A.requestModel,
  ...A.responseModel,
  ...A.inputTokens,
  ...A.outputTokens,
]

// gen_ai.provider.name values (and gen_ai.system's older ones) to Tally's provider names.
const PROVIDERS: Record<string, string> = {
  'gcp.gemini': 'google',
  'gcp.vertex_ai': 'google',
  'gcp.gen_ai': 'google',
  vertex_ai: 'google',
  vertexai: 'google',
  gemini: 'google',
  'aws.bedrock': 'bedrock',
  'azure.ai.openai': 'azure',
  'az.ai.openai': 'azure',
  'azure.ai.inference': 'azure',
  'az.ai.inference': 'azure',
  mistral_ai: 'mistral',
  mistralai: 'mistral',
  x_ai: 'xai',
  'ibm.watsonx.ai': 'watsonx',
}

/** The property that names what a model-call span lacked (`model`, `input_tokens`, `output_tokens`). */
const MISSING_PROPERTY = 'tally.missing'

/** Why a span was not stored: it is not a model call (counted, not an error). */
type SkipReason = 'not_a_model_call'

export type SpanOutcome =
  | { kind: 'event'; event: IntakeEvent; missing: string[]; where: string }
  | { kind: 'skipped'; reason: SkipReason }
  | { kind: 'rejected'; reason: string }

/** What the export request's own headers carry for every span (Tally-X; Helicone-X on Helicone's path). */
export interface ExportDefaults {
  properties: Record<string, string>
  sessionId?: string
  sessionName?: string
  sessionPath?: string
  userId?: string
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

/** A request id stable for one span: an exporter retrying a batch replaces its rows, never doubles them. */
function requestIdOf(traceId: string, spanId: string): string {
  const b = createHash('sha256').update(`otlp:${traceId}:${spanId}`).digest()
  b[6] = ((b[6] as number) & 0x0f) | 0x80 // version 8 (RFC 9562: custom)
  b[8] = ((b[8] as number) & 0x3f) | 0x80 // variant 10
  const h = b.subarray(0, 16).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`
}

const nanosToMs = (ns: bigint) => Number(ns / 1_000_000n)

interface Located {
  span: Span
  resource: Attributes
  /** The session and user its resource names: the same for every span of the resource. */
  resourceContext: Context
  where: string
}

/** Every decoded span with its resource's attributes and its place in the body. */
function spansOf(decoded: DecodedExport): Located[] {
  const out: Located[] = []
  for (const { resource: rs, spans } of decoded.resources) {
    const resource = new Attributes(rs?.attributes ?? [])
    const resourceContext = ownContext(resource)
    for (const { span, where } of spans) out.push({ span, resource, resourceContext, where })
  }
  return out
}

interface Context {
  sessionId?: string
  sessionName?: string
  sessionPath?: string
  userId?: string
}

/** Session and user a span names itself (not inherited). */
function ownContext(attrs: Attributes): Context {
  return {
    sessionId: attrs.string(A.conversation, 'session.id', 'tally.session.id', 'helicone.session.id'),
    sessionName: attrs.string('tally.session.name', 'helicone.session.name'),
    sessionPath: attrs.string('tally.session.path', 'helicone.session.path'),
    userId: attrs.string('user.id', 'tally.user.id', 'helicone.user.id', 'enduser.id'),
  }
}

/**
 * Maps one export request: each span becomes a request event, is skipped (not a model call), or
 * is rejected with the reason. A model call without its session or user takes them from its
 * nearest ancestor in the same request that names them (agent frameworks put gen_ai.conversation.id
 * on the agent span), then from the resource, then from the export request's headers.
 */
export function mapExport(decoded: DecodedExport, defaults: ExportDefaults): SpanOutcome[] {
  const located = spansOf(decoded)
  const contexts = new Map<string, { parent: string; context: Context }>()
  const parsed = located.map(({ span }) => {
    const attrs = new Attributes(span.attributes)
    if (span.spanId.length === 8) {
      const trace = hex(span.traceId)
      contexts.set(`${trace}:${hex(span.spanId)}`, {
        parent: span.parentSpanId.length === 8 ? `${trace}:${hex(span.parentSpanId)}` : '',
        context: ownContext(attrs),
      })
    }
    return attrs
  })
  // Up the parent chain within this request (at most 64 hops: a cycle in hostile input ends there).
  const inherited = (parent: string, key: keyof Context): string | undefined => {
    for (let id = parent, hops = 0; id && hops < 64; hops++) {
      const node = contexts.get(id)
      if (!node) return undefined
      if (node.context[key]) return node.context[key]
      id = node.parent
    }
    return undefined
  }
  return located.map((at, i) => {
    try {
      return mapSpan(at, parsed[i] as Attributes, defaults, inherited)
    } catch (err) {
      if (err instanceof TooDeepError)
        return { kind: 'rejected', reason: `${at.where}.attributes: ${err.message}` }
      throw err
    }
  })
}

function mapSpan(
  { span, resource, resourceContext, where }: Located,
  attrs: Attributes,
  defaults: ExportDefaults,
  inherited: (parent: string, key: keyof Context) => string | undefined,
): SpanOutcome {
  if (!isModelCall(attrs)) return { kind: 'skipped', reason: 'not_a_model_call' }

  if (span.traceId.length !== 16 || span.traceId.every((b) => b === 0))
    return { kind: 'rejected', reason: `${where}.traceId: must be 16 bytes, not all zero` }
  if (span.spanId.length !== 8 || span.spanId.every((b) => b === 0))
    return { kind: 'rejected', reason: `${where}.spanId: must be 8 bytes, not all zero` }
  if (span.parentSpanId.length !== 0 && span.parentSpanId.length !== 8)
    return { kind: 'rejected', reason: `${where}.parentSpanId: must be 8 bytes or empty` }
  const traceId = hex(span.traceId)
  const spanId = hex(span.spanId)
  const parentSpanId = span.parentSpanId.some((b) => b !== 0) ? hex(span.parentSpanId) : ''

  const requestModel = attrs.string(...A.requestModel)
  const responseModel = attrs.string(...A.responseModel)
  const model = requestModel ?? responseModel
  const input = attrs.count(...A.inputTokens)
  const output = attrs.count(...A.outputTokens)
  const operation = attrs.string(A.operation) ?? attrs.string(A.requestType)
  const embedding =
    operation === 'embeddings' || attrs.string(A.openInferenceKind)?.toUpperCase() === 'EMBEDDING'
  const missing: string[] = []
  if (!model) missing.push('model')
  if (input === undefined) missing.push('input_tokens')
  if (output === undefined && !embedding) missing.push('output_tokens')

  const properties: Record<string, string> = { ...defaults.properties }
  for (const source of [resource, attrs]) {
    for (const prefix of ['helicone.property.', 'tally.property.', 'traceloop.association.properties.']) {
      for (const [name, value] of source.withPrefix(prefix)) properties[name] = value
    }
  }
  const metadata = attrs.json('metadata')
  if (metadata && typeof metadata === 'object' && !Array.isArray(metadata)) {
    for (const [name, value] of Object.entries(metadata)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        properties[name] ??= String(value)
    }
  }
  const cacheRead = attrs.count(...A.cacheRead)
  const cacheCreation = attrs.count(...A.cacheCreation)
  if (cacheRead !== undefined) properties.cache_read_input_tokens = String(cacheRead)
  if (cacheCreation !== undefined) properties.cache_creation_input_tokens = String(cacheCreation)
  if (operation) properties['gen_ai.operation.name'] = operation
  if (responseModel && responseModel !== model) properties['gen_ai.response.model'] = responseModel
  const errorType = attrs.string(A.errorType)
  if (errorType) properties['error.type'] = errorType
  if (missing.length > 0) properties[MISSING_PROPERTY] = missing.join(',')

  const own = ownContext(attrs)
  const pick = (key: keyof Context) =>
    own[key] ??
    (parentSpanId ? inherited(`${traceId}:${parentSpanId}`, key) : undefined) ??
    resourceContext[key] ??
    defaults[key]

  const httpStatus = attrs.count(A.httpStatus)
  const errored = span.status?.code === 2 // STATUS_CODE_ERROR
  const status =
    httpStatus !== undefined && Number.isInteger(httpStatus) && httpStatus >= 100 && httpStatus <= 999
      ? httpStatus
      : errored
        ? 500
        : 200

  const provider = attrs.string(...A.provider) ?? resource.string(...A.provider)
  const givenId = attrs.string('tally.request.id', 'helicone.request.id')
  const requestId = givenId && z.uuid().safeParse(givenId).success ? givenId.toLowerCase() : undefined
  const candidate: Record<string, unknown> = {
    request_id: requestId ?? requestIdOf(traceId, spanId),
    created_at: nanosToMs(span.startTimeUnixNano),
    // An end before the start (or none) is taken as the start, as the intake does.
    completed_at: nanosToMs(span.endTimeUnixNano),
    provider: provider ? (PROVIDERS[provider.toLowerCase()] ?? provider.toLowerCase()) : undefined,
    model,
    request: requestBody(attrs, model),
    response: responseBody(attrs, responseModel ?? model),
    status,
    user_id: pick('userId'),
    session_id: pick('sessionId'),
    session_name: pick('sessionName'),
    session_path: pick('sessionPath'),
    prompt_id: attrs.string('tally.prompt.id', 'helicone.prompt.id'),
    prompt_tokens: input,
    completion_tokens: output ?? (embedding && input !== undefined ? 0 : undefined),
    cost_usd: attrs.number(A.cost),
    properties,
    trace_id: traceId,
    span_id: spanId,
    parent_span_id: parentSpanId || undefined,
  }
  withoutUndefined(candidate)

  // The same rules as every JSON body (text without NUL or lone surrogates, finite numbers,
  // bounded nesting), then the intake's own field rules.
  const problem = inputProblem(candidate, where)
  if (problem) return { kind: 'rejected', reason: problem }
  const checked = intakeEvent.safeParse(candidate)
  if (!checked.success) {
    const issue = checked.error.issues[0]
    const field = issue?.path.length ? issue.path.map(String).join('.') : 'span'
    return { kind: 'rejected', reason: `${where} (${fieldSource(field)}): ${issue?.message ?? 'invalid'}` }
  }
  return { kind: 'event', event: checked.data, missing, where }
}

/** The attribute behind an intake field, for rejection messages. */
function fieldSource(field: string): string {
  const first = field.split('.')[0] as string
  const sources: Record<string, string> = {
    created_at: 'startTimeUnixNano',
    completed_at: 'endTimeUnixNano',
    prompt_tokens: 'input token count',
    completion_tokens: 'output token count',
    cost_usd: A.cost,
    model: 'model',
    properties: `property ${field.slice('properties.'.length)}`,
  }
  return sources[first] ?? field
}

function isModelCall(attrs: Attributes): boolean {
  const kind = attrs.string(A.openInferenceKind)?.toUpperCase()
  if (kind !== undefined) return MODEL_KINDS.has(kind)
  const operation = attrs.string(A.operation)
  if (operation !== undefined && NOT_MODEL_CALLS.has(operation)) return false
  const traceloopKind = attrs.string(A.traceloopKind)
  if (traceloopKind !== undefined) return false // workflow, task, agent, tool: OpenLLMetry's own spans
  return MARKERS.some((key) => attrs.has(key))
}

/** `o` without its undefined fields (removed in place). */
function withoutUndefined(o: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(o)) if (o[key] === undefined) delete o[key]
  return o
}

/** `o` without its undefined fields; undefined when none is left. */
const compact = (o: Record<string, unknown>) => {
  const left = withoutUndefined(o)
  return Object.keys(left).length > 0 ? left : undefined
}

const nonEmpty = <T>(list: T[]) => (list.length > 0 ? list : undefined)

/**
 * Where each side of the call keeps its messages: the GenAI convention's JSON attribute,
 * OpenLLMetry's indexed `gen_ai.prompt.N` / `gen_ai.completion.N`, OpenInference's indexed
 * `llm.input_messages.N` / `llm.output_messages.N`.
 */
const MESSAGES = {
  input: [A.inputMessages, 'gen_ai.prompt.', 'llm.input_messages.'],
  output: [A.outputMessages, 'gen_ai.completion.', 'llm.output_messages.'],
} as const

/**
 * One side of the call as a body: OpenInference's raw `input.value` / `output.value` when it is
 * JSON, else what `shape` makes of the side's messages (in whichever convention carries them) or,
 * when none does, of the side's text.
 */
function body(
  attrs: Attributes,
  side: keyof typeof MESSAGES,
  shape: (messages: unknown, text: string | undefined) => Record<string, unknown>,
): unknown {
  if (attrs.string(`${side}.mime_type`) === 'application/json') {
    const raw = attrs.json(`${side}.value`)
    if (raw && typeof raw === 'object') return raw
  }
  const [json, openLLMetry, openInference] = MESSAGES[side]
  const messages =
    attrs.json(json) ??
    nonEmpty(attrs.indexed(openLLMetry)) ??
    nonEmpty(attrs.indexed(openInference, 'message.'))
  return compact(shape(messages, messages === undefined ? attrs.string(`${side}.value`) : undefined))
}

/**
 * The request body: OpenInference's raw input.value when it is JSON, else the messages in the
 * shape the convention gives them (`system_instructions`, `messages`), with the model.
 */
function requestBody(attrs: Attributes, model: string | undefined): unknown {
  return body(attrs, 'input', (messages, input) => ({
    model,
    system_instructions: attrs.json(A.systemInstructions),
    messages,
    input,
  }))
}

/** The response body, likewise: output.value when JSON, else the output messages and finish reasons. */
function responseBody(attrs: Attributes, model: string | undefined): unknown {
  return body(attrs, 'output', (messages, output) => ({
    model,
    messages,
    finish_reasons: attrs.json(A.finishReasons),
    output,
  }))
}
