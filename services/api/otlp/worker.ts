import { parentPort } from 'node:worker_threads'
import { AppError } from '../../shared/errors.ts'
import { decodeExport, type OtlpEncoding } from './decode.ts'
import { type ExportDefaults, mapExport, type SpanOutcome } from './mapping.ts'

// A thread of the OTLP pool (pool.ts, started by routes.ts): decodes one export and maps its spans,
// the CPU-bound part of the intake, away from the API's event loop.

export interface DecodeTask {
  body: Uint8Array
  encoding: OtlpEncoding
  maxSpans: number
  defaults: ExportDefaults
}

/** Every span's outcome: the decoder's rejections first, then the mapped spans, each in body order. */
export function decodeAndMap(task: DecodeTask): SpanOutcome[] {
  const decoded = decodeExport(task.body, task.encoding, task.maxSpans)
  return [
    ...decoded.rejected.map((reason): SpanOutcome => ({ kind: 'rejected', reason })),
    ...mapExport(decoded, task.defaults),
  ]
}

parentPort?.on('message', (task: DecodeTask) => {
  try {
    parentPort?.postMessage({ output: decodeAndMap(task) })
  } catch (err) {
    const error =
      err instanceof AppError
        ? { message: err.message, status: err.status, code: err.code }
        : { message: String((err as Error)?.stack ?? err) }
    parentPort?.postMessage({ error })
  }
})
parentPort?.postMessage({ ready: true })
