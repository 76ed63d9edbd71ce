import type { AnnotationEvent } from './annotation-event.ts'
import { approximateSize, type RequestEvent } from './request-event.ts'

/**
 * What travels on the event topic: a processed request, or a grade or property given after the
 * fact. Every transport and writer carries both; each handler takes the kinds it records.
 */
export type TallyEvent = RequestEvent | AnnotationEvent

export function isAnnotation(event: TallyEvent): event is AnnotationEvent {
  return 'kind' in event
}

/**
 * The message key, which chooses the partition: the request an event is about, so a score follows
 * its request on the same partition; a session's scores by the session.
 */
export function eventKey(event: TallyEvent): string {
  if (!isAnnotation(event)) return event.request_id
  return event.target_kind === 'request' ? event.request_id : `session:${event.session_id}`
}

/** About how many bytes an event takes in a write: what bounds a batch, not an exact count. */
export function eventSize(event: TallyEvent): number {
  if (!isAnnotation(event)) return approximateSize(event)
  return 256 + event.name.length + event.string_value.length + event.comment.length + event.session_id.length
}

/** The request events of a batch, in order. */
export function requestEvents(events: TallyEvent[]): RequestEvent[] {
  return events.filter((e): e is RequestEvent => !isAnnotation(e))
}

/** The annotation events of a batch, in order. */
export function annotationEvents(events: TallyEvent[]): AnnotationEvent[] {
  return events.filter(isAnnotation)
}
