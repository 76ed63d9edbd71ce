import { z } from 'zod'
import {
  REQUEST_COLUMNS,
  type RequestRow,
  SORT_COLUMNS,
  type SortField,
} from '../../shared/clickhouse/request-table.ts'
import { TIME_RANGE } from '../../shared/timestamp.ts'
import type { CursorKey } from '../http/cursor.ts'

/**
 * How a page of requests is ordered and where a keyset cursor resumes: the sort column as an
 * expression (ORDER BY and the cursor's comparison use the same one), the placeholder the
 * cursor's value fills, the rule that value must pass, and how a row gives its value.
 */
export interface SortKey {
  expr: string
  param: string
  value: z.ZodType<string | number>
  valueOf(row: Partial<RequestRow>): string | number
}

const TYPE_OF = new Map<string, string>(REQUEST_COLUMNS.map((c) => [c.name, c.type]))

// Within Int64 and beyond any UInt32: where a missing time_to_first_token sorts (last, both ways).
const ABOVE_UINT32 = 2 ** 32

export function sortKey(field: SortField, direction: 'asc' | 'desc'): SortKey {
  const column = SORT_COLUMNS[field]
  const type = TYPE_OF.get(column)
  const raw = (row: Partial<RequestRow>) => row[column as keyof RequestRow]
  if (type?.startsWith('DateTime64')) {
    return {
      expr: column,
      param: "fromUnixTimestamp64Milli({after_value:Int64}, 'UTC')",
      // DateTime64(3)'s range: what a stored time can be.
      value: z.number().int().min(TIME_RANGE.minMs).max(TIME_RANGE.maxMs),
      valueOf: (row) => (raw(row) as Date).getTime(),
    }
  }
  if (type === 'Nullable(UInt32)') {
    // ClickHouse puts NULLs last whatever the direction; a sentinel keeps that order comparable.
    const missing = direction === 'asc' ? ABOVE_UINT32 : -1
    return {
      expr: `ifNull(${column}, ${missing})`,
      param: '{after_value:Int64}',
      value: z.number().int().min(-1).max(ABOVE_UINT32),
      valueOf: (row) => (raw(row) as number | null) ?? missing,
    }
  }
  if (type === 'Float64') {
    return {
      expr: column,
      param: '{after_value:Float64}',
      value: z.number(),
      valueOf: (row) => raw(row) as number,
    }
  }
  if (type === 'UInt32' || type === 'Int32') {
    return {
      expr: column,
      param: `{after_value:${type}}`,
      value: z
        .number()
        .int()
        .min(type === 'UInt32' ? 0 : -(2 ** 31))
        .max(type === 'UInt32' ? 2 ** 32 - 1 : 2 ** 31 - 1),
      valueOf: (row) => raw(row) as number,
    }
  }
  return {
    expr: column,
    param: '{after_value:String}',
    value: z.string().max(1_000_000),
    valueOf: (row) => raw(row) as string,
  }
}

/** The cursor position of a page's last row. */
export function keyOf(key: SortKey, row: Partial<RequestRow>): CursorKey {
  return [key.valueOf(row), row.request_id as string]
}
