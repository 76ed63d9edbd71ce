import { describe, expect, it } from 'vitest'
import { toRequestEvent } from '../../services/api/requests/intake.ts'
import { costOf, loadPriceTable } from '../../services/api/requests/prices.ts'
import { extractUsage } from '../../services/api/requests/usage.ts'

const prices = loadPriceTable()
const sse = (chunks: unknown[]) =>
  `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`

describe('usage extraction', () => {
  it('reads an OpenAI chat completion', () => {
    expect(
      extractUsage({ model: 'gpt-4o', usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }),
    ).toEqual({ prompt: 11, completion: 7, total: 18, model: 'gpt-4o' })
  })

  it('reads an OpenAI Responses object', () => {
    expect(
      extractUsage({ object: 'response', usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14 } }),
    ).toEqual({
      prompt: 5,
      completion: 9,
      total: 14,
    })
  })

  it('reads an Anthropic message, counting cache writes and reads as input', () => {
    expect(
      extractUsage({
        type: 'message',
        model: 'claude-3-5-haiku-20241022',
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 3,
          cache_read_input_tokens: 2,
          output_tokens: 4,
        },
      }),
    ).toEqual({ prompt: 15, completion: 4, total: 19, model: 'claude-3-5-haiku-20241022' })
  })

  it('reads a streamed OpenAI chat completion (SSE, usage in the last chunk)', () => {
    const text = sse([
      { model: 'gpt-4o-mini', choices: [{ delta: { content: 'he' } }] },
      { model: 'gpt-4o-mini', choices: [{ delta: { content: 'llo' } }] },
      {
        model: 'gpt-4o-mini',
        choices: [],
        usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 },
      },
    ])
    expect(extractUsage(text)).toEqual({ prompt: 8, completion: 2, total: 10, model: 'gpt-4o-mini' })
  })

  it('reads a streamed Anthropic message (SSE with event lines)', () => {
    const text = [
      'event: message_start',
      `data: ${JSON.stringify({ type: 'message_start', message: { model: 'claude-sonnet-4-20250514', usage: { input_tokens: 25, output_tokens: 1 } } })}`,
      '',
      'event: content_block_delta',
      `data: ${JSON.stringify({ type: 'content_block_delta', delta: { text: 'Hi' } })}`,
      '',
      'event: message_delta',
      `data: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: 15 } })}`,
      '',
    ].join('\n')
    expect(extractUsage(text)).toEqual({
      prompt: 25,
      completion: 15,
      total: 40,
      model: 'claude-sonnet-4-20250514',
    })
  })

  it('reads a streamed OpenAI Responses run (response.completed)', () => {
    const text = sse([
      { type: 'response.output_text.delta', delta: 'x' },
      {
        type: 'response.completed',
        response: { model: 'o4-mini', usage: { input_tokens: 3, output_tokens: 30, total_tokens: 33 } },
      },
    ])
    expect(extractUsage(text)).toEqual({ prompt: 3, completion: 30, total: 33, model: 'o4-mini' })
  })

  it('reads one JSON chunk per line (how HeliconeManualLogger records streams) and whole JSON text', () => {
    const ndjson = [
      JSON.stringify({ choices: [{ delta: { content: 'a' } }] }),
      JSON.stringify({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }),
    ].join('\n')
    expect(extractUsage(ndjson)).toMatchObject({ prompt: 2, completion: 3, total: 5 })
    expect(extractUsage(JSON.stringify({ usage: { prompt_tokens: 1, completion_tokens: 1 } }))).toMatchObject(
      {
        prompt: 1,
        completion: 1,
        total: 2,
      },
    )
  })

  it('finds nothing, without failing, in bodies without usage or with garbage', () => {
    for (const body of [
      undefined,
      null,
      'plain text',
      'data: {broken',
      [],
      { usage: 'x' },
      { usage: { prompt_tokens: -5 } },
    ]) {
      expect(extractUsage(body)).toMatchObject({ prompt: 0, completion: 0, total: 0 })
    }
  })
})

describe('price table', () => {
  it('prices dated snapshots like their model, but never falls back to a shorter, different model', () => {
    expect(prices.find('gpt-4o-2024-08-06')?.model).toBe('gpt-4o')
    expect(prices.find('gpt-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini')
    expect(prices.find('claude-3-5-sonnet-20241022')?.model).toBe('claude-3-5-sonnet')
    expect(prices.find('openai/gpt-4.1')?.model).toBe('gpt-4.1')
    expect(prices.find('gpt-4.5-preview')).toBeUndefined()
    expect(prices.find('my-local-llama')).toBeUndefined()
  })

  it('computes USD per 1M tokens, and 0 for unknown models', () => {
    expect(costOf(prices, 'claude-3-5-haiku', { prompt: 1_000_000, completion: 1_000_000 })).toBeCloseTo(
      4.8,
      10,
    )
    expect(costOf(prices, 'unknown', { prompt: 1e6, completion: 1e6 })).toBe(0)
  })
})

describe('intake event normalisation', () => {
  const org = '00000000-0000-4000-8000-000000000001'
  const now = new Date('2026-11-05T12:00:00.000Z')

  it('reconciles created_at, completed_at and latency whichever are given', () => {
    const at = (input: object) => {
      const e = toRequestEvent({ status: 200, cached: false, ...input }, org, prices, now)
      return [e.created_at.toISOString(), e.completed_at.toISOString(), e.latency_ms]
    }
    expect(at({})).toEqual([now.toISOString(), now.toISOString(), 0])
    expect(at({ latency_ms: 500 })).toEqual(['2026-11-05T11:59:59.500Z', now.toISOString(), 500])
    expect(at({ created_at: '2026-11-05T10:00:00Z', completed_at: '2026-11-05T10:00:02Z' })).toEqual([
      '2026-11-05T10:00:00.000Z',
      '2026-11-05T10:00:02.000Z',
      2000,
    ])
    expect(at({ completed_at: Date.parse('2026-11-05T10:00:02Z'), latency_ms: 2000 })[0]).toBe(
      '2026-11-05T10:00:00.000Z',
    )
  })

  it('takes the provider from the target URL and copies the session into its columns and properties', () => {
    const e = toRequestEvent(
      {
        status: 200,
        cached: false,
        target_url: 'https://api.anthropic.com/v1/messages',
        properties: { 'Helicone-Session-Id': 'abc', 'Helicone-Session-Path': '/a/b' },
      },
      org,
      prices,
      now,
    )
    expect(e.provider).toBe('anthropic')
    expect([e.session_id, e.session_name, e.session_path]).toEqual(['abc', '', '/a/b'])
  })

  it('uses explicit token counts over the response usage', () => {
    const e = toRequestEvent(
      {
        status: 200,
        cached: false,
        model: 'gpt-4o',
        prompt_tokens: 1,
        completion_tokens: 2,
        response: { usage: { prompt_tokens: 50 } },
      },
      org,
      prices,
      now,
    )
    expect([e.prompt_tokens, e.completion_tokens, e.total_tokens]).toEqual([1, 2, 3])
  })
})
