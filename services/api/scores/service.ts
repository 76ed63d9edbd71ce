import { createHash } from 'node:crypto'
import { SESSION_PROPERTIES } from '../../shared/clickhouse/request-table.ts'
import { AppError, badRequest } from '../../shared/errors.ts'
import type { AnnotationEvent } from '../../shared/events/annotation-event.ts'
import { EncodeError } from '../../shared/events/codec.ts'
import { PublishQueueFullError } from '../../shared/events/publish-queue.ts'
import type { EventPublisher } from '../../shared/events/transport.ts'
import type { Logger } from '../../shared/logger.ts'
import { counter } from '../../shared/metrics.ts'
import type { ScoreConfigs } from './configs.ts'
import { FEEDBACK, type ScoreConfig, type ScoreDataType, type ScoreSource } from './schemas.ts'

const accepted = counter(
  'tally_annotations_accepted_total',
  'Scores and after-the-fact properties the API acknowledged as durable',
)

/** What a score is about. */
export type Target = { request_id: string } | { session_id: string }

export interface ScoreInput {
  target: Target
  name: string
  value: number | boolean | string
  source: ScoreSource
  comment?: string | undefined
  id?: string | undefined
}

/** A checked value: its type and how it is stored (value, string_value). */
interface Checked {
  dataType: ScoreDataType
  value: number
  stringValue: string
}

/**
 * The largest magnitude of a numeric score: integers are exact up to it, and sums and averages of
 * many never overflow to infinity.
 */
export const MAX_MAGNITUDE = 1e15

const between = (c: ScoreConfig) =>
  c.min !== null && c.max !== null
    ? `between ${c.min} and ${c.max}`
    : c.min !== null
      ? `at least ${c.min}`
      : c.max !== null
        ? `at most ${c.max}`
        : ''

/**
 * The value as its config says it must be (or, without one, as sent: a number is numeric, a
 * boolean boolean, a string a category); a 400 naming `path` when it is not.
 */
export function checkValue(
  name: string,
  value: number | boolean | string,
  config: ScoreConfig | undefined,
  path: string,
): Checked {
  const refuse = (rule: string) =>
    badRequest(`${path}: ${rule}${config ? ` (the score config of "${name}")` : ''}`)
  const dataType: ScoreDataType =
    config?.data_type ??
    (name === FEEDBACK
      ? 'boolean'
      : typeof value === 'number'
        ? 'numeric'
        : typeof value === 'boolean'
          ? 'boolean'
          : 'categorical')
  switch (dataType) {
    case 'numeric': {
      if (typeof value !== 'number') throw refuse('must be a number')
      if (!Number.isFinite(value)) throw refuse('must be a finite number')
      if (Math.abs(value) > MAX_MAGNITUDE)
        throw refuse(`must be between -${MAX_MAGNITUDE} and ${MAX_MAGNITUDE}`)
      if (
        config &&
        ((config.min !== null && value < config.min) || (config.max !== null && value > config.max))
      )
        throw refuse(`must be ${between(config)}`)
      return { dataType, value, stringValue: '' }
    }
    case 'boolean':
      if (typeof value !== 'boolean')
        throw refuse(
          name === FEEDBACK && !config
            ? 'must be true or false (feedback is boolean)'
            : 'must be true or false',
        )
      return { dataType, value: value ? 1 : 0, stringValue: '' }
    case 'categorical':
      if (typeof value !== 'string') throw refuse('must be a category (a string)')
      if (config?.categories && !config.categories.includes(value)) {
        const shown = config.categories.slice(0, 10).map((c) => JSON.stringify(c.slice(0, 100)))
        const more = config.categories.length - shown.length
        throw refuse(
          `must be one of ${shown.join(', ')}${more > 0 ? ` and ${more} more (GET /v1/score-configs)` : ''}`,
        )
      }
      return { dataType, value: 0, stringValue: value }
  }
}

/**
 * The id of the score of `name` from `source` on `target`, when the caller names none: the same
 * inputs give the same id, so sending a score again replaces it (a name-based UUID, version 5
 * layout, over a SHA-256 of the organization and the key).
 */
export function derivedScoreId(organizationId: string, target: Target, name: string, source: string): string {
  const key =
    'request_id' in target ? ['request', target.request_id.toLowerCase()] : ['session', target.session_id]
  // As JSON: no two keys encode the same, whatever characters they hold.
  const bytes = createHash('sha256')
    .update(JSON.stringify([organizationId, ...key, name, source]))
    .digest()
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80
  const hex = bytes.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * Orders the writes of one score or property: the highest wins in ClickHouse. Microseconds since
 * 1970 from this process's clock, never repeated nor going back within the process.
 */
function createVersions() {
  let last = 0
  return () => {
    last = Math.max(Date.now() * 1000, last + 1)
    return last
  }
}

/**
 * Takes scores, deletions and properties: checks them, makes them events and publishes them;
 * resolves once they are durable (as the intake does). Every score counts as an event against the
 * organization's limit.
 */
export function createScoreService(deps: {
  publisher: EventPublisher
  configs: ScoreConfigs
  log: Logger
  countEvents(organizationId: string, events: number): Promise<void>
}) {
  const version = createVersions()

  async function publish(organizationId: string, events: AnnotationEvent[]): Promise<void> {
    await deps.countEvents(organizationId, events.length)
    try {
      await deps.publisher.publish(events)
    } catch (err) {
      if (err instanceof EncodeError) throw badRequest(`body: cannot be encoded (${err.message})`)
      if (err instanceof PublishQueueFullError)
        throw new AppError(
          503,
          'busy',
          `Tally is busy: ${err.message}; retry in ${err.retryAfterSeconds} s`,
          {
            retryAfterSeconds: err.retryAfterSeconds,
          },
        )
      deps.log.error({ err, events: events.length }, 'annotations_publish_failed')
      throw new AppError(
        503,
        'unavailable',
        'The scores could not be recorded; retry (the same score replaces itself)',
        {
          retryAfterSeconds: 1,
        },
      )
    }
    accepted.inc(events.length)
  }

  const targetFields = (target: Target) =>
    'request_id' in target
      ? { target_kind: 'request' as const, request_id: target.request_id.toLowerCase(), session_id: '' }
      : { target_kind: 'session' as const, request_id: '', session_id: target.session_id }

  return {
    /** Checks and records scores; `at(i)` names the i-th in messages. Returns their ids. */
    async score(
      organizationId: string,
      inputs: ScoreInput[],
      at: (index: number) => string,
    ): Promise<string[]> {
      const configs = await deps.configs.byName(organizationId)
      const now = new Date()
      const events = inputs.map((input, i): AnnotationEvent => {
        const checked = checkValue(input.name, input.value, configs.get(input.name), at(i))
        return {
          organization_id: organizationId,
          kind: 'score',
          // As stored and read back: lower case.
          score_id:
            input.id?.toLowerCase() ?? derivedScoreId(organizationId, input.target, input.name, input.source),
          ...targetFields(input.target),
          name: input.name,
          data_type: checked.dataType,
          value: checked.value,
          string_value: checked.stringValue,
          source: input.source,
          comment: input.comment ?? '',
          created_at: now,
          version: version(),
          deleted: false,
        }
      })
      await publish(organizationId, events)
      return events.map((e) => e.score_id)
    },

    /** Records the deletion of a stored score (its tombstone). */
    async remove(
      organizationId: string,
      stored: { id: string; target: Target; name: string; source: string; data_type: ScoreDataType },
    ): Promise<void> {
      await publish(organizationId, [
        {
          organization_id: organizationId,
          kind: 'score',
          score_id: stored.id,
          ...targetFields(stored.target),
          name: stored.name,
          data_type: stored.data_type,
          value: 0,
          string_value: '',
          source: stored.source,
          comment: '',
          created_at: new Date(),
          version: version(),
          deleted: true,
        },
      ])
    },

    /** Sets a custom property of a request after the fact (never its session). */
    async setProperty(organizationId: string, requestId: string, key: string, value: string): Promise<void> {
      // Whatever the case: Helicone's headers are read case-insensitively.
      if (Object.keys(SESSION_PROPERTIES).some((p) => p.toLowerCase() === key.toLowerCase()))
        throw badRequest(`body.key: ${key} names the request's session, which cannot change after the fact`)
      await publish(organizationId, [
        {
          organization_id: organizationId,
          kind: 'property',
          score_id: '',
          target_kind: 'request',
          request_id: requestId.toLowerCase(),
          session_id: '',
          name: key,
          data_type: 'text',
          value: 0,
          string_value: value,
          source: '',
          comment: '',
          created_at: new Date(),
          version: version(),
          deleted: false,
        },
      ])
    },
  }
}
