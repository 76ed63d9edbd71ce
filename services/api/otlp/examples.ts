/**
 * What the OpenAPI document shows for the OTLP/HTTP trace intake (its JSON encoding): a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

/** One span of a model call, as an OpenTelemetry SDK exports it; each path takes the same. */
const traces = {
  body: {
    resourceSpans: [
      {
        resource: {
          attributes: [
            {
              key: 'service.name',
              value: {
                stringValue: 'support-bot',
              },
            },
          ],
        },
        scopeSpans: [
          {
            scope: {
              name: 'openinference',
            },
            spans: [
              {
                traceId: '5b8efff798038103d269b633813fc60c',
                spanId: 'eee19b7ec3c1b174',
                name: 'ChatCompletion',
                kind: 3,
                startTimeUnixNano: '1795685400000000000',
                endTimeUnixNano: '1795685401200000000',
                attributes: [
                  {
                    key: 'gen_ai.system',
                    value: {
                      stringValue: 'openai',
                    },
                  },
                  {
                    key: 'gen_ai.request.model',
                    value: {
                      stringValue: 'gpt-4o-mini',
                    },
                  },
                  {
                    key: 'gen_ai.usage.input_tokens',
                    value: {
                      intValue: '42',
                    },
                  },
                  {
                    key: 'gen_ai.usage.output_tokens',
                    value: {
                      intValue: '9',
                    },
                  },
                ],
                status: {
                  code: 1,
                },
              },
            ],
          },
        ],
      },
    ],
  },
  answer: {},
}

export const examples = {
  exportTraces: traces,
  exportTracesOtel: traces,
  exportTracesHelicone: traces,
} satisfies Record<string, OperationExamples>
