import { once } from 'node:events'
import { request } from 'node:http'
import { connect } from 'node:net'
import { gzipSync } from 'node:zlib'
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { SECRET, startWithTwoOrganizations } from './fixtures.ts'

/**
 * The analyst door: ClickHouse's HTTP interface at Tally, in front of the engine's read-only user.
 * What real clients send works (@clickhouse/client, plain HTTP the way curl and drivers speak it);
 * what Tally's check refuses is answered in ClickHouse's own words; the password data teams hold
 * works here only.
 */
let tally: TestTally
let door: { url: string; username: string; password: string }
let client: ClickHouseClient

beforeAll(async () => {
  ;({ tally } = await startWithTwoOrganizations())
  if (!tally.analyst) throw new Error('the test Tally has no analyst door')
  door = tally.analyst
  client = createClient({
    url: door.url,
    username: door.username,
    password: door.password,
    database: tally.config.CLICKHOUSE_DATABASE,
    log: { level: ClickHouseLogLevel.OFF },
  })
})
afterAll(async () => {
  await client?.close()
  await tally?.close()
})

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** One HTTP request to the door, on a connection of its own. */
function send(
  path: string,
  options: {
    method?: string
    headers?: Record<string, string>
    body?: string | Buffer
    auth?: string | null
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${door.url}${path}`,
      {
        method: options.method ?? 'POST',
        agent: false,
        headers: options.headers ?? {},
        ...(options.auth === null ? {} : { auth: options.auth ?? `${door.username}:${door.password}` }),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        )
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

const db = () => tally.config.CLICKHOUSE_DATABASE

describe('the analyst door', () => {
  it('answers @clickhouse/client: rows of every organization, parameters, settings drivers send', async () => {
    const rs = await client.query({
      query: `SELECT count() AS n, countIf(model = {model:String}) AS theirs FROM request_response_rmt FINAL`,
      query_params: { model: SECRET.model },
      format: 'JSONEachRow',
      // What the JDBC driver sends on every connection: harmless, allowed although read-only.
      clickhouse_settings: { async_insert: 0, output_format_json_quote_64bit_integers: 0 },
    })
    expect(await rs.json()).toEqual([{ n: 5, theirs: 2 }])
    const who = await client.query({
      query: 'SELECT currentUser() AS u, version() AS v',
      format: 'JSONEachRow',
    })
    expect(await who.json()).toEqual([{ u: 'tally_analyst', v: expect.stringMatching(/^\d+\./) }])
  })

  it('answers the catalogue queries of DBeaver- and Grafana-style clients', async () => {
    for (const query of [
      'SHOW DATABASES',
      `SHOW TABLES FROM ${db()}`,
      `DESCRIBE TABLE ${db()}.request_response_rmt`,
      `EXISTS TABLE ${db()}.request_response_rmt`,
      'SELECT name FROM system.databases ORDER BY name',
      `SELECT name, type FROM system.columns WHERE database = '${db()}' AND table = 'request_response_rmt'`,
      'SELECT timezone(), uptime() > 0',
    ]) {
      const rs = await client.query({ query, format: 'JSONEachRow' })
      expect((await rs.json()).length, query).toBeGreaterThan(0)
    }
  })

  it('speaks the HTTP interface as curl and drivers use it: query in URL and body, FORMAT, gzip both ways', async () => {
    const inUrl = await send(`/?query=${encodeURIComponent('SELECT 1 + 1')}`, { method: 'GET' })
    expect([inUrl.status, inUrl.body.toString()]).toEqual([200, '2\n'])
    // The URL's query, a line break, then the body: ClickHouse's own rule.
    const split = await send(`/?query=${encodeURIComponent('SELECT')}`, {
      body: ' 40 + 2 AS x FORMAT JSONEachRow',
    })
    expect(split.body.toString()).toBe('{"x":42}\n')
    const zipped = await send('/?enable_http_compression=1&param_n=7', {
      headers: { 'content-encoding': 'gzip', 'accept-encoding': 'gzip' },
      body: gzipSync('SELECT {n:UInt8} * 6 AS x FORMAT TSV'),
    })
    expect(zipped.status).toBe(200)
    expect(zipped.headers['content-encoding']).toBe('gzip')
    const viaHeaders = await send('/', {
      auth: null,
      headers: {
        'x-clickhouse-user': door.username,
        'x-clickhouse-key': door.password,
        'x-clickhouse-format': 'TSV',
      },
      body: 'SELECT 3',
    })
    expect(viaHeaders.body.toString()).toBe('3\n')
    const viaParams = await send(`/?user=${door.username}&password=${encodeURIComponent(door.password)}`, {
      auth: null,
      body: 'SELECT 4',
    })
    expect(viaParams.body.toString()).toBe('4\n')
    expect((await send('/ping', { method: 'GET', auth: null })).body.toString()).toBe('Ok.\n')
  })

  it("refuses what Tally does not allow in ClickHouse's words, running nothing", async () => {
    const refused: [string, RegExp][] = [
      ["SELECT file('/proc/self/environ')", /function file\(\) is not allowed/],
      ["SELECT * FROM file('/etc/passwd', LineAsString)", /table function file\(\) is not allowed/],
      ['SELECT hostName()', /hostName\(\) is not allowed/],
      ["SELECT 1 INTO OUTFILE '/tmp/tally-door-outfile'", /INTO OUTFILE/],
      [`INSERT INTO ${db()}.request_response_rmt (model) VALUES ('x')`, /InsertQuery is not allowed here/],
      [`DROP TABLE ${db()}.request_response_rmt`, /DropQuery is not allowed here/],
      ['SELECT * APPLY(hostName) FROM system.one', /ColumnsApplyTransformer/],
    ]
    for (const [sql, reason] of refused) {
      const res = await send('/', { body: sql })
      expect(res.status, sql).toBe(403)
      expect(res.headers['x-clickhouse-exception-code'], sql).toBe('497')
      expect(res.body.toString(), sql).toMatch(/^Code: 497\. DB::Exception: Tally's analyst door: /)
      expect(res.body.toString(), sql).toMatch(reason)
    }
    // The engine's own answer to a bad statement comes through as it is.
    const syntax = await send('/', { body: 'SELEC 1' })
    expect(syntax.body.toString()).toMatch(/Code: 62\. .*Syntax error/)
    // Settings a read-only user may not change stay refused by the engine.
    const lifted = await send('/?max_threads=64', { body: 'SELECT 1' })
    expect(lifted.body.toString()).toMatch(/readonly|READONLY|SETTING_CONSTRAINT/)
    await expect(client.command({ query: `TRUNCATE TABLE ${db()}.request_response_rmt` })).rejects.toThrow()
    const count = await tally.clickhouse.query({
      query: 'SELECT count() AS n FROM request_response_rmt',
      format: 'JSONEachRow',
    })
    expect(await count.json()).toEqual([{ n: 5 }])
  })

  it("takes only the data teams' password, and that password nowhere else", async () => {
    const wrong = await send('/', { auth: `${door.username}:wrong-password`, body: 'SELECT 1' })
    expect(wrong.status).toBe(401)
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic /)
    expect(wrong.body.toString()).toMatch(/^Code: 516\. .*Authentication failed/)
    const none = await send('/', { auth: null, body: 'SELECT 1' })
    expect(none.status).toBe(401)
    // The engine's own port does not know the door's user and password.
    const engine = new URL(tally.config.CLICKHOUSE_ANALYST_URL ?? '')
    const direct = await fetch(`http://${engine.host}/?query=SELECT%201`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${door.username}:${door.password}`).toString('base64')}`,
      },
    })
    expect(direct.status).not.toBe(200)
    expect(await direct.text()).toMatch(/Authentication failed|AUTHENTICATION_FAILED/)
  })

  it('refuses what it cannot check: ClickHouse block compression, external tables, statements over 1 MiB', async () => {
    const native = await send('/?decompress=1', { body: 'SELECT 1' })
    expect(native.status).toBe(400)
    expect(native.body.toString()).toMatch(/decompress=1 .* is not supported/)
    const multipart = await send('/', {
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      body: '--x--',
    })
    expect(multipart.status).toBe(400)
    const huge = await send('/', { body: `SELECT '${'x'.repeat(1024 * 1024)}'` })
    expect(huge.status).toBe(413)
    // ClickHouse takes the first of a repeated parameter; the check could read another.
    const twice = await send('/?param_t=request_response_rmt&param_t=schema_migrations', {
      body: 'SELECT count() FROM {t:Identifier}',
    })
    expect(twice.status).toBe(400)
    expect(twice.body.toString()).toMatch(/param_t is given more than once/)
    const garbled = await send('/', { headers: { 'content-encoding': 'gzip' }, body: 'not gzip at all' })
    expect(garbled.status).toBe(400)
    expect((await send('/elsewhere', { body: 'SELECT 1' })).status).toBe(404)
    expect((await send('/', { method: 'PUT', body: 'SELECT 1' })).status).toBe(405)
  })

  it("stops the engine's work when the client goes away", async () => {
    const controller = new AbortController()
    const slow = fetch(`${door.url}/?query_id=door-abandoned`, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        authorization: `Basic ${Buffer.from(`${door.username}:${door.password}`).toString('base64')}`,
      },
      body: 'SELECT count() FROM numbers(10000000000000) WHERE sipHash64(number) % 7 = 3',
    }).catch(() => undefined)
    const running = async () => {
      const rs = await tally.clickhouse.query({
        query: "SELECT count() AS n FROM system.processes WHERE query_id = 'door-abandoned'",
        format: 'JSONEachRow',
      })
      return ((await rs.json()) as { n: number }[])[0]?.n ?? 0
    }
    await waitFor(async () => (await running()) === 1, {
      timeoutMs: 10_000,
      what: 'the query to run in the engine',
    })
    controller.abort()
    await slow
    await waitFor(async () => (await running()) === 0, {
      timeoutMs: 2_000,
      what: 'the engine to stop the abandoned query',
    })
  })

  it('slow uploads hold connections, not query slots: a statement still runs beside more of them than it has slots', async () => {
    const { hostname, port } = new URL(door.url)
    const auth = Buffer.from(`${door.username}:${door.password}`).toString('base64')
    const uploads = await Promise.all(
      Array.from({ length: tally.config.TALLY_ANALYST_MAX_QUERIES + 1 }, async () => {
        const socket = connect({ host: hostname, port: Number(port) })
        await once(socket, 'connect')
        // A body announced as 1,000 bytes, of which one is sent: the door waits for the rest. The
        // server says 100 Continue once it has the headers, in the tick it hands the request on.
        socket.write(
          `POST / HTTP/1.1\r\nHost: door\r\nAuthorization: Basic ${auth}\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n`,
        )
        const [first] = (await once(socket, 'data')) as [Buffer]
        expect(first.toString()).toMatch(/^HTTP\/1\.1 100 Continue/)
        socket.write('S')
        return socket
      }),
    )
    try {
      const rs = await client.query({ query: 'SELECT 42 AS n', format: 'JSONEachRow' })
      expect(await rs.json()).toEqual([{ n: 42 }])
    } finally {
      for (const socket of uploads) socket.destroy()
    }
  })
})
