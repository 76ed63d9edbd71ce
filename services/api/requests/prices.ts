import { readFileSync } from 'node:fs'
import { z } from 'zod'

export const modelPrice = z.object({
  provider: z.string(),
  model: z.string(),
  input: z.number().min(0).describe('USD per 1M input (prompt) tokens'),
  output: z.number().min(0).describe('USD per 1M output (completion) tokens'),
})

const priceFile = z.object({
  currency: z.literal('USD'),
  unit: z.literal('per 1M tokens'),
  as_of: z.string(),
  sources: z.record(z.string(), z.string()),
  models: z.array(modelPrice),
})

type ModelPrice = z.infer<typeof modelPrice>
export type PriceTable = z.infer<typeof priceFile> & { find(model: string): ModelPrice | undefined }

const PRICES_FILE = new URL('../../../schemas/prices/models.json', import.meta.url).pathname

// A dated snapshot suffix (gpt-4o-2024-08-06, claude-3-5-sonnet-20241022) or "-latest" still
// names the same priced model; anything else (gpt-4.5-preview) must not fall back to "gpt-4".
const SNAPSHOT = /^(?:-\d{4}-?\d{2}-?\d{2}|-latest|@\d{8})$/

/** Loads schemas/prices/models.json, the table behind cost_usd and GET /v1/models. */
export function loadPriceTable(path = PRICES_FILE): PriceTable {
  const table = priceFile.parse(JSON.parse(readFileSync(path, 'utf8')))
  const byModel = new Map(table.models.map((m) => [m.model, m]))
  return {
    ...table,
    find(model) {
      // Routers prefix the vendor (openai/gpt-4o, anthropic/claude-…); the price is the model's.
      const name = model
        .trim()
        .toLowerCase()
        .replace(/^[a-z0-9-]+\//, '')
      const exact = byModel.get(name)
      if (exact) return exact
      let best: ModelPrice | undefined
      for (const [key, price] of byModel) {
        if (name.startsWith(key) && SNAPSHOT.test(name.slice(key.length))) {
          if (!best || key.length > best.model.length) best = price
        }
      }
      return best
    },
  }
}

/** USD for the tokens at the table's price; 0 when the model is not in the table. */
export function costOf(
  table: PriceTable,
  model: string,
  tokens: { prompt: number; completion: number },
): number {
  const price = table.find(model)
  if (!price) return 0
  return (tokens.prompt * price.input + tokens.completion * price.output) / 1_000_000
}
