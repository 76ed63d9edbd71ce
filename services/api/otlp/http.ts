import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { create, toBinary, toJson } from '@bufbuild/protobuf'
import { ExportTraceServiceResponseSchema } from '../../../generated/otlp/opentelemetry/proto/collector/trace/v1/trace_service_pb.js'
import { AppError, badRequest } from '../../shared/errors.ts'
import type { OtlpEncoding } from './decode.ts'

// What OTLP/HTTP wraps around an export, on the API's own thread: the body's Content-Encoding,
// and the ExportTraceServiceResponse. The export itself is decoded in a thread (decode.ts).

const unzip = promisify(gunzip)

const tooLarge = (limit: number) =>
  new AppError(413, 'payload_too_large', `body: is larger than ${limit} bytes once decompressed`)

/** The body without its Content-Encoding: gzip is inflated to at most `limit` bytes (413 beyond). */
export async function decodeContent(
  body: Buffer,
  encoding: string | undefined,
  limit: number,
): Promise<Buffer> {
  const coding = (encoding ?? 'identity').trim().toLowerCase()
  if (coding === 'identity' || coding === '') return body
  if (coding !== 'gzip')
    throw new AppError(
      415,
      'unsupported_encoding',
      `Content-Encoding: must be gzip or identity, got ${JSON.stringify(coding.slice(0, 40))}`,
    )
  try {
    // maxOutputLength stops inflating at the limit: a small bomb never grows past it in memory.
    return await unzip(body, { maxOutputLength: limit })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit)
    throw badRequest('body: is not valid gzip data (Content-Encoding: gzip)')
  }
}

/**
 * The ExportTraceServiceResponse: partial_success set only when spans were rejected (or a warning
 * is due), as the OTLP specification asks; in the request's own encoding.
 */
export function encodeResponse(
  encoding: OtlpEncoding,
  rejected: number,
  message: string,
): { contentType: string; body: Buffer | string } {
  const response = create(ExportTraceServiceResponseSchema, {
    ...(rejected > 0 || message
      ? { partialSuccess: { rejectedSpans: BigInt(rejected), errorMessage: message } }
      : {}),
  })
  return encoding === 'protobuf'
    ? {
        contentType: 'application/x-protobuf',
        body: Buffer.from(toBinary(ExportTraceServiceResponseSchema, response)),
      }
    : {
        contentType: 'application/json',
        body: JSON.stringify(toJson(ExportTraceServiceResponseSchema, response)),
      }
}
