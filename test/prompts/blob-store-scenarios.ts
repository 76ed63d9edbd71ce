import { type HeliconeChatCreateParams, HeliconePromptManager } from '@helicone/helpers'
import { expect, it } from 'vitest'
import type { TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { promptClient, sampleBody } from './client.ts'

/**
 * What must hold whichever blob store keeps the bodies: Helicone's published prompt manager works
 * against Tally by changing only its base URL, links need no auth header and expire, and bodies
 * go with their versions. `list(prefix)` lists the store's keys under a prefix.
 */
/** As Helicone's own examples do: the prompt supplies the model, so the params are cast. */
const params = (p: Record<string, unknown>) => p as HeliconeChatCreateParams

export function blobStoreScenarios(tally: () => TestTally, list: (prefix: string) => Promise<string[]>) {
  it('serves HeliconePromptManager.getPromptBody by production, by environment and by version id', async () => {
    const t = tally()
    const org = await t.newOrg()
    const api = promptClient(t, org)
    const { id, versionId: v10 } = await api.create('Helicone e2e', ['sdk'])
    const v11 = await api.version(
      id,
      v10,
      false,
      sampleBody({
        messages: [{ role: 'system', content: 'Staging speaks of {{hc:topic:string}}.' }],
        temperature: 0.7,
      }),
      'staging',
    )
    const v20 = await api.version(
      id,
      v11,
      true,
      sampleBody({
        model: 'gpt-4.1',
        messages: [{ role: 'system', content: 'Version two: {{hc:topic:string}}.' }],
      }),
    )
    const manager = new HeliconePromptManager({ apiKey: org.apiKey, baseUrl: t.url })
    const inputs = { topic: 'invoices' }

    const production = await manager.getPromptBody(params({ prompt_id: id, inputs, messages: [] }))
    expect(production.errors).toEqual([])
    expect(production.body).toMatchObject({
      model: 'gpt-4o-mini',
      temperature: 0.2,
      max_tokens: 256,
      messages: [
        { role: 'system', content: 'You answer questions about invoices.' },
        { role: 'user', content: 'Hello' },
      ],
    })

    const staging = await manager.getPromptBody(
      params({
        prompt_id: id,
        environment: 'staging',
        inputs,
        messages: [],
      }),
    )
    expect(staging.body).toMatchObject({
      temperature: 0.7,
      messages: [{ role: 'system', content: 'Staging speaks of invoices.' }],
    })

    const byVersion = await manager.getPromptBody(
      params({
        prompt_id: id,
        version_id: v20,
        inputs,
        messages: [{ role: 'user', content: 'And more?' }],
      }),
    )
    expect(byVersion.body).toMatchObject({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'Version two: invoices.' },
        { role: 'user', content: 'And more?' },
      ],
    })

    const stranger = new HeliconePromptManager({ apiKey: (await t.newOrg()).apiKey, baseUrl: t.url })
    const quiet = console.error
    console.error = () => {}
    try {
      await expect(stranger.getPromptBody(params({ prompt_id: id, inputs, messages: [] }))).rejects.toThrow(
        /Failed to get production version/,
      )
      await expect(
        new HeliconePromptManager({ apiKey: 'tly_wrong', baseUrl: t.url }).getPromptBody(
          params({
            prompt_id: id,
            inputs,
            messages: [],
          }),
        ),
      ).rejects.toThrow(/Failed to get production version: Unauthorized/)
    } finally {
      console.error = quiet
    }
  })

  it('hands out links that need no auth header and stop working once expired', async () => {
    const t = tally()
    const api = promptClient(t, await t.newOrg())
    const body = sampleBody({ seed: 7 })
    const { versionId } = await api.create(undefined, [], body)
    const { s3_url } = (await api.post('/v1/prompt-2025/query/version', { promptVersionId: versionId })).data
    const fetched = await fetch(s3_url)
    expect(fetched.status).toBe(200)
    expect(await fetched.json()).toEqual(body)
    // TALLY_SIGNED_LINK_TTL is 2s in these suites.
    await waitFor(async () => (await fetch(s3_url)).status === 403, {
      what: 'the link to expire',
      timeoutMs: 8_000,
    })
    // A fresh look-up hands out a fresh, working link.
    const again = (await api.post('/v1/prompt-2025/query/version', { promptVersionId: versionId })).data
      .s3_url
    expect((await fetch(again)).status).toBe(200)
  })

  it('stores one object per version under organization/prompt/version, and deletes it with the version', async () => {
    const t = tally()
    const org = await t.newOrg()
    const api = promptClient(t, org)
    const { id, versionId: v10 } = await api.create()
    const v11 = await api.version(id, v10, false)
    const prefix = `prompts/${org.organizationId}/${id}/`
    expect((await list(prefix)).sort()).toEqual([`${prefix}${v10}.json`, `${prefix}${v11}.json`].sort())

    const dup = await api.post('/v1/prompt-2025', {
      name: (await api.get(`/v1/prompt-2025/id/${id}`)).data.name,
      tags: [],
      promptBody: sampleBody(),
    })
    expect(dup.status).toBe(409)
    expect(await list(`prompts/${org.organizationId}/`)).toHaveLength(2)

    await api.delete(`/v1/prompt-2025/${id}/${v11}`)
    expect(await list(prefix)).toEqual([`${prefix}${v10}.json`])
    await api.delete(`/v1/prompt-2025/${id}`)
    expect(await list(prefix)).toEqual([])
  })
}
