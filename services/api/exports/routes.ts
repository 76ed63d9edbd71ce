import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { BlobStore } from '../../shared/blobs/blob-store.ts'
import { type Config, durationText } from '../../shared/config.ts'
import { AppError, badRequest, conflict, notFound } from '../../shared/errors.ts'
import { exportPrefix, manifestKey } from '../../shared/exports/contract.ts'
import { compileRequestFilter } from '../../shared/filters/compile.ts'
import { principalOf } from '../http/auth.ts'
import { postgresPaging } from '../http/cursor.ts'
import { envelope, ok, pageEnvelope, responses } from '../http/envelope.ts'
import { pageOf } from '../http/paging.ts'
import type { ExportRepo } from './repo.ts'
import {
  createExportBody,
  createScheduleBody,
  type ExportRecord,
  exportRecord,
  exportWithLinks,
  idParams,
  listQuery,
  pageQuery,
  schedule,
} from './schemas.ts'
import { periodStart } from './windows.ts'

/** How far back a schedule may start (a backfill). */
const MAX_BACKFILL_MS = 90 * 86_400_000

export function exportRoutes(deps: {
  repo: ExportRepo
  blobs: BlobStore
  config: Config
}): FastifyPluginAsyncZod {
  const { repo, blobs, config } = deps
  const settleMs = config.TALLY_EXPORT_SETTLE_DELAY
  const maxWindowMs = config.TALLY_EXPORT_MAX_WINDOW
  const maxPending = config.TALLY_EXPORT_MAX_PENDING
  const maxSchedules = config.TALLY_EXPORT_MAX_SCHEDULES

  const withLinks = async (row: ExportRecord): Promise<z.output<typeof exportWithLinks>> => {
    if (row.status !== 'succeeded' || !row.manifest) return { ...row, download: null }
    const ttl = config.TALLY_SIGNED_LINK_TTL
    const expiresAt = new Date(Date.now() + ttl)
    const prefix = exportPrefix(row.manifest.organization_id, row.id)
    return {
      ...row,
      download: {
        expires_at: expiresAt,
        manifest_url: await blobs.signedUrl(manifestKey(row.manifest.organization_id, row.id), ttl),
        files: await Promise.all(
          row.manifest.files.map(async (f) => ({
            name: f.name,
            url: await blobs.signedUrl(`${prefix}/${f.name}`, ttl),
          })),
        ),
      },
    }
  }

  return async (app) => {
    app.post('/v1/exports', {
      schema: {
        tags: ['exports'],
        operationId: 'createExport',
        summary: "Export the organization's requests of a window to the object store",
        description:
          'Answers 201 at once with the export, queued; GET /v1/exports/{id} follows it to succeeded (with its manifest and links) or failed (with the reason). See docs/exports.md.',
        body: createExportBody,
        response: responses({ 201: envelope(exportRecord) }, { body: true }),
      },
      handler: async (request, reply) => {
        const { organizationId } = principalOf(request)
        const { from, to, filter, format } = request.body
        if (to.getTime() <= from.getTime()) throw badRequest('body.to: must be after body.from')
        if (to.getTime() - from.getTime() > maxWindowMs) {
          throw badRequest(
            `body.to: the window must be at most ${durationText(maxWindowMs)} long (TALLY_EXPORT_MAX_WINDOW)`,
          )
        }
        if (to.getTime() > Date.now() - settleMs) {
          throw badRequest(
            `body.to: must be at least ${durationText(settleMs)} in the past (TALLY_EXPORT_SETTLE_DELAY), so that rows still being ingested are not left out`,
          )
        }
        compileRequestFilter(filter, { path: 'body.filter', organization: '{organization_id:UUID}' })
        const queued = await repo.create({ organizationId, from, to, filter, format }, maxPending)
        if ('pending' in queued) {
          throw new AppError(
            429,
            'too_many_exports',
            `at most ${maxPending} exports of an organization may be queued or running at once (TALLY_EXPORT_MAX_PENDING); wait for some to finish`,
          )
        }
        return reply.code(201).send(ok(queued.created))
      },
    })

    app.get('/v1/exports', {
      schema: {
        tags: ['exports'],
        operationId: 'listExports',
        summary: "The organization's exports, newest first, with their manifests (no links)",
        description: 'Pages by offset, or by cursor: pass the next_cursor of the previous answer.',
        querystring: listQuery,
        response: responses({ 200: pageEnvelope(z.array(exportRecord)) }),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const { cursor, status } = request.query
        const { offset, limit } = pageOf(request.query, 'querystring', { cursor })
        const paging = postgresPaging(organizationId, 'exports', 'querystring.cursor')
        const after = paging.after(cursor)
        return paging.page(await repo.list(organizationId, { offset, limit, status, after }), limit)
      },
    })

    app.post('/v1/exports/schedules', {
      schema: {
        tags: ['exports'],
        operationId: 'createExportSchedule',
        summary: 'Export every hour or day of requests as it ends, without gaps',
        description: `An organization holds at most ${maxSchedules} schedules (409 beyond, TALLY_EXPORT_MAX_SCHEDULES).`,
        body: createScheduleBody,
        response: responses({ 201: envelope(schedule) }, { body: true, refuses: [409] }),
      },
      handler: async (request, reply) => {
        const { organizationId } = principalOf(request)
        const { period, format, filter } = request.body
        const now = new Date()
        const start = request.body.start ?? periodStart(period, now)
        if (periodStart(period, start).getTime() !== start.getTime()) {
          throw badRequest(
            `body.start: must be the start of a ${period === 'hourly' ? 'UTC hour for an hourly' : 'UTC day for a daily'} schedule`,
          )
        }
        if (start.getTime() > now.getTime()) throw badRequest('body.start: must not be in the future')
        if (start.getTime() < now.getTime() - MAX_BACKFILL_MS) {
          throw badRequest('body.start: must be within the last 90 days')
        }
        compileRequestFilter(filter, { path: 'body.filter', organization: '{organization_id:UUID}' })
        const created = await repo.createSchedule(
          { organizationId, period, format, filter, start },
          maxSchedules,
        )
        if ('held' in created) {
          throw conflict(
            `This organization already holds ${created.held} export schedules, the most it may (TALLY_EXPORT_MAX_SCHEDULES); delete one first`,
          )
        }
        return reply.code(201).send(ok(created.created))
      },
    })

    app.get('/v1/exports/schedules', {
      schema: {
        tags: ['exports'],
        operationId: 'listExportSchedules',
        summary: "The organization's export schedules, oldest first",
        querystring: pageQuery,
        response: responses({ 200: envelope(z.array(schedule)) }),
      },
      handler: async (request) =>
        ok(
          await repo.listSchedules(principalOf(request).organizationId, pageOf(request.query, 'querystring')),
        ),
    })

    app.delete('/v1/exports/schedules/:id', {
      schema: {
        tags: ['exports'],
        operationId: 'deleteExportSchedule',
        summary: 'Stop a schedule: no further windows; its exports so far stay',
        params: idParams,
        response: responses({ 200: envelope(z.null()) }, { refuses: [404] }),
      },
      handler: async (request) => {
        if (!(await repo.deleteSchedule(principalOf(request).organizationId, request.params.id))) {
          throw notFound('Export schedule not found')
        }
        return ok(null)
      },
    })

    app.get('/v1/exports/:id', {
      schema: {
        tags: ['exports'],
        operationId: 'getExport',
        summary: 'One export: its status, its manifest once succeeded, and signed links to its files',
        params: idParams,
        response: responses({ 200: envelope(exportWithLinks) }, { refuses: [404] }),
      },
      handler: async (request) => {
        const row = await repo.get(principalOf(request).organizationId, request.params.id)
        if (!row) throw notFound('Export not found')
        return ok(await withLinks(row))
      },
    })
  }
}
