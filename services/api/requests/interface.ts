/**
 * What other domain folders may use of requests/ (the architecture check admits no other file):
 * the intake contract, for the OTLP door (otlp/), and the request record, for sessions/.
 */
export { metadata, withSessionProperties } from './helicone.ts'
export { type IntakeEvent, intakeEvent } from './intake.ts'
export { columnsFor, type RecordField, type RequestRecord, requestRecord, toRecord } from './record.ts'
export type { Intake } from './service.ts'
