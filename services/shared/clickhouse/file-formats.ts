/**
 * The files Tally makes from ClickHouse's output (SQL answers, exports) and serves (the embedded
 * store's links): ClickHouse's output format, the media type and the file name's ending of each.
 */
export const FILE_FORMATS = {
  parquet: { clickhouse: 'Parquet', contentType: 'application/vnd.apache.parquet', extension: 'parquet' },
  csv: { clickhouse: 'CSVWithNames', contentType: 'text/csv; charset=utf-8', extension: 'csv' },
  jsonl: { clickhouse: 'JSONEachRow', contentType: 'application/x-ndjson', extension: 'jsonl' },
} as const

export type FileFormat = keyof typeof FILE_FORMATS

/** The media type of a file by its name's ending (`part-00001.csv`); undefined for other files. */
export function fileContentType(name: string): string | undefined {
  return Object.values(FILE_FORMATS).find((f) => name.endsWith(`.${f.extension}`))?.contentType
}
