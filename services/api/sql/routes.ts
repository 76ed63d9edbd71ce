import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { AppError } from '../../shared/errors.ts'
import { principalOf } from '../http/auth.ts'
import { clientGone } from '../http/client-gone.ts'
import { envelope, ok, responses } from '../http/envelope.ts'
import type { QueryGate } from '../http/query-gate.ts'
import type { SqlRunner } from './runner.ts'

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

const sqlQueryBody = z
  .strictObject({
    sql: z
      .string()
      .trim()
      // A trailing semicolon is how many tools end a statement; ClickHouse's HTTP interface takes one statement without.
      .transform((text) => text.replace(/;+\s*$/, ''))
      .pipe(
        z.string().min(1, 'must be one SELECT statement').max(100_000, 'must be at most 100000 characters'),
      ),
    params: z
      .record(z.string(), z.union([z.string().max(100_000), z.number(), z.boolean(), z.null()]))
      .superRefine((params, ctx) => {
        const names = Object.keys(params)
        if (names.length > 100) ctx.addIssue({ code: 'custom', message: 'must hold at most 100 parameters' })
        const length = Object.values(params).reduce<number>(
          (n, v) => n + (typeof v === 'string' ? v.length : 0),
          0,
        )
        if (length > 100_000)
          ctx.addIssue({ code: 'custom', message: 'must hold at most 100000 characters of text in all' })
        for (const name of names.filter((n) => !PARAM_NAME.test(n)))
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message: 'must be a name of letters, digits and _ (at most 64), not starting with a digit',
          })
      })
      .default({})
      .describe("Values of the query's {name:Type} placeholders (ClickHouse query parameters)"),
    format: z
      .enum(['json', 'jsonl', 'csv', 'tsv', 'parquet'])
      .default('json')
      .describe(
        'json: rows in the envelope; jsonl (a JSON object per line), csv and tsv (with a header row), parquet: a file. ' +
          'Every format is streamed as ClickHouse writes it',
      ),
  })
  .meta({ id: 'SqlQuery' })

const sqlColumn = z.object({ name: z.string(), type: z.string().describe('ClickHouse type') })

const sqlResult = z
  .object({
    columns: z.array(sqlColumn),
    rows: z
      .array(z.record(z.string(), z.unknown()))
      .describe(
        'One object per row, keyed by column. 64-bit integers are strings (no precision lost), times ISO 8601 UTC',
      ),
    row_count: z.number().int(),
    statistics: z
      .object({ elapsed_ms: z.number() })
      .describe(
        "How long the server took. No rows or bytes read: those count granules shared with other organizations' rows",
      ),
  })
  .meta({ id: 'SqlResult' })

const sqlSchema = z
  .object({
    tables: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        columns: z.array(sqlColumn.extend({ description: z.string() })),
      }),
    ),
  })
  .meta({ id: 'SqlSchema' })

/** Without a checked restricted ClickHouse user there is no safe way to run a caller's SQL: 503, saying why. */
const notSetUp = (why: string) => new AppError(503, 'sql_not_configured', why)

/** `runner`, or why there is none (sql/engine-user.ts). */
export function sqlRoutes(runner: SqlRunner | string, gate: QueryGate): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/v1/sql/query', {
      schema: {
        tags: ['sql'],
        operationId: 'querySql',
        summary: "Run one SELECT over your organization's requests, sessions and scores",
        description:
          "Reads the views of GET /v1/sql/schema (`requests`, `sessions`, `scores`), which hold your organization's rows only. " +
          "Errors are 400 with ClickHouse's message; a query over a limit is 422 naming the limit (an answer over " +
          'TALLY_SQL_MAX_RESULT_BYTES included: ask for a file, or export the window); ClickHouse busy or unreachable is 503. ' +
          'The answer is streamed as ClickHouse ' +
          "writes it, in the request's format. See docs/data-teams.md.",
        body: sqlQueryBody,
        response: responses(
          {
            200: {
              description: 'The rows (json), or the file (jsonl, csv, tsv, parquet)',
              content: {
                'application/json': { schema: envelope(sqlResult) },
                'application/x-ndjson': {
                  schema: z.string().describe('A JSON object per row, one per line'),
                },
                'text/csv': { schema: z.string() },
                'text/tab-separated-values': { schema: z.string() },
                'application/vnd.apache.parquet': { schema: z.string().describe('Binary Parquet') },
              },
            },
          },
          { body: true, query: true },
        ),
      },
      handler: async (request, reply) => {
        if (typeof runner === 'string') throw notSetUp(runner)
        const { organizationId } = principalOf(request)
        const { sql, params, format } = request.body
        // The organization's slot is held until the server's query has ended: the answer sent to
        // its end, or, when the client goes away or the deadline passes, the query killed and gone
        // (past a short wait the caller has its answer, and the slot stays held until then).
        return gate.run(organizationId, async (hold) => {
          const answer = await runner.run(
            organizationId,
            sql,
            params,
            format,
            clientGone(request.raw, reply.raw),
            hold,
          )
          reply.header('content-type', answer.contentType)
          if (answer.extension)
            reply.header('content-disposition', `attachment; filename="tally-sql.${answer.extension}"`)
          // fastify pipes the stream; the response schema documents the answer it carries.
          void reply.send(answer.stream as unknown as string)
          await answer.settled
          return reply
        })
      },
    })

    app.get('/v1/sql/schema', {
      schema: {
        tags: ['sql'],
        operationId: 'getSqlSchema',
        summary: 'The tables and columns POST /v1/sql/query may read, with what they mean',
        response: responses({ 200: envelope(sqlSchema) }),
      },
      handler: async () => {
        if (typeof runner === 'string') throw notSetUp(runner)
        return ok({ tables: await runner.schema() })
      },
    })
  }
}
