import { randomUUID } from 'node:crypto'
import postgres from 'postgres'

/** A fresh database on the server of `baseUrl`, named `<prefix>_<random>`; drop() removes it. */
export async function createScratchDatabase(
  baseUrl: string,
  prefix: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  const admin = postgres(baseUrl, { onnotice: () => {}, max: 1 })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}
