/**
 * The GraphQL response cache, on a real SQLite store wrapped in a counting Proxy: a repeated query
 * is answered without its reads, for the same caller only, until a write moves the registry's
 * generation; bounded in bytes; off with RESPONSE_CACHE_ENTRIES=0; answers with errors are never
 * kept, answers read from the trace store only until its watermark moves (new spans show at once).
 */
import { ApolloServer } from '@apollo/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { spanRow, toolCallRow } from '../fixtures/span-row.ts';
import { startTestApp, type TestApp, type TestAppOptions } from '../helpers/test-app.ts';
import { countingStore } from './helpers.ts';

const TOOLS = 'query($n: Int) { tools(first: $n) { nodes { id name } } }';

const counter = countingStore();
let t: TestApp | undefined;
async function start(options: TestAppOptions = {}): Promise<TestApp> {
  t = await startTestApp({ ...options, wrapRegistry: (store) => counter.wrap(store) });
  return t;
}
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** POST /graphql as `user`, with the `x-cache` header of the answer. */
async function ask(app: TestApp, query: string, variables: Record<string, unknown> = {}, user = 'u-admin') {
  const res = await app.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await app.auth(user)), 'content-type': 'application/json' },
    payload: JSON.stringify({ query, variables }),
  });
  return { status: res.statusCode, cache: res.headers['x-cache'], body: res.body, json: res.json() };
}

/** The answer and store calls of one query, the org tree and memberships already warm. */
async function measured(app: TestApp, query: string, variables: Record<string, unknown> = {}, user = 'u-admin') {
  counter.reset();
  const res = await ask(app, query, variables, user);
  return { ...res, calls: counter.calls() };
}

describe('GraphQL response cache', () => {
  it('answers a repeated query without reading the registry again, the same bytes', async () => {
    const app = await start();
    const first = await measured(app, TOOLS, { n: 5 });
    expect(first.status).toBe(200);
    expect(first.cache).toBeUndefined();
    expect(first.calls.findArtifacts).toBe(1);
    const again = await measured(app, TOOLS, { n: 5 });
    expect(again.cache).toBe('hit');
    expect(again.body).toBe(first.body);
    expect(again.calls).toEqual({ generation: 1 });
    // Other variables, another operation text: another answer.
    expect((await measured(app, TOOLS, { n: 4 })).calls.findArtifacts).toBe(1);
    expect((await measured(app, `${TOOLS} `, { n: 5 })).calls.findArtifacts).toBe(1);
  });

  it('an import moving the generation invalidates: the next answer shows the write', async () => {
    const app = await start();
    await ask(app, TOOLS, { n: 200 });
    expect((await ask(app, TOOLS, { n: 200 })).cache).toBe('hit');
    const bundle = smallBundle();
    (bundle.artifacts.find((a) => a.id === 'tl-1') as Record<string, unknown>).name = 'renamed_tool';
    await app.registry.importBundle(parseBundle(bundle));
    const after = await measured(app, TOOLS, { n: 200 });
    expect(after.cache).toBeUndefined();
    expect(after.calls.findArtifacts).toBe(1);
    expect(after.json.data.tools.nodes.map((n: { name: string }) => n.name)).toContain('renamed_tool');
  });

  it('never gives one caller the answer of another who reads other workspaces', async () => {
    const app = await start();
    const admin = await ask(app, TOOLS, { n: 200 });
    expect((await ask(app, TOOLS, { n: 200 })).cache).toBe('hit');
    const viewer = await measured(app, TOOLS, { n: 200 }, 'u-viewer');
    expect(viewer.cache).toBeUndefined();
    expect(viewer.calls.findArtifacts).toBe(1);
    const ids = (r: { json: { data: { tools: { nodes: { id: string }[] } } } }) =>
      r.json.data.tools.nodes.map((n) => n.id);
    expect(ids(viewer).length).toBeGreaterThan(0);
    expect(ids(viewer).length).toBeLessThan(ids(admin).length);
    expect((await ask(app, TOOLS, { n: 200 }, 'u-viewer')).body).toBe(viewer.body);
  });

  it('answers a repeat before Apollo with the bytes and headers Apollo sent, per Accept', async () => {
    const app = await start();
    const post = async (accept?: string, extensions?: unknown) => {
      const res = await app.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: {
          ...(await app.auth('u-admin')),
          'content-type': 'application/json',
          ...(accept !== undefined ? { accept } : {}),
        },
        payload: JSON.stringify({
          query: TOOLS,
          variables: { n: 3 },
          ...(extensions !== undefined ? { extensions } : {}),
        }),
      });
      const h = res.headers;
      return {
        status: res.statusCode,
        body: res.body,
        cache: h['x-cache'],
        type: h['content-type'],
        control: h['cache-control'],
      };
    };
    const apollo = vi.spyOn(ApolloServer.prototype, 'executeHTTPGraphQLRequest');
    try {
      const first = await post();
      expect(first.cache).toBeUndefined();
      expect(apollo).toHaveBeenCalledTimes(1);
      const again = await post();
      expect(apollo).toHaveBeenCalledTimes(1);
      expect(again).toEqual({ ...first, cache: 'hit' });
      expect(again.type).toBe('application/json; charset=utf-8');
      expect(again.control).toBe('no-store');
      // Another Accept: another content type, so another answer, from Apollo.
      const graphqlJson = await post('application/graphql-response+json');
      expect(apollo).toHaveBeenCalledTimes(2);
      expect(graphqlJson.cache).toBeUndefined();
      expect(graphqlJson.type).toBe('application/graphql-response+json; charset=utf-8');
      expect(await post('application/graphql-response+json')).toEqual({ ...graphqlJson, cache: 'hit' });
      expect(apollo).toHaveBeenCalledTimes(2);
      // Persisted-query extensions are Apollo's to check: a wrong hash is refused, kept answer or not.
      const wrongHash = await post(undefined, { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } });
      expect(apollo).toHaveBeenCalledTimes(3);
      expect(wrongHash.status).toBe(400);
      expect(wrongHash.cache).toBeUndefined();
    } finally {
      apollo.mockRestore();
    }
  });

  it('spends the rate-limit quota on a hit as the first execution did', async () => {
    const app = await start({ env: { RATE_LIMIT_PER_MIN: '2' } });
    expect((await ask(app, TOOLS, { n: 5 })).json.errors).toBeUndefined();
    expect((await ask(app, TOOLS, { n: 5 })).cache).toBe('hit');
    const third = await ask(app, TOOLS, { n: 5 });
    expect(third.cache).toBeUndefined();
    expect(third.json.errors?.[0]?.extensions?.code).toBe('rate_limited');
  });

  it('is off with RESPONSE_CACHE_ENTRIES=0', async () => {
    const app = await start({ env: { RESPONSE_CACHE_ENTRIES: '0' } });
    await ask(app, TOOLS, { n: 5 });
    const again = await measured(app, TOOLS, { n: 5 });
    expect(again.cache).toBeUndefined();
    expect(again.calls.findArtifacts).toBe(1);
  });

  it('keeps at most RESPONSE_CACHE_BYTES of answers: a second evicts the least recently used', async () => {
    const app = await start({ env: { RESPONSE_CACHE_BYTES: '200' } });
    const a = await ask(app, TOOLS, { n: 3 });
    // Room for one of these answers (about 130 bytes of data for 3 tools, 90 for 2), not two.
    expect(a.body.length).toBeGreaterThan(110);
    expect((await ask(app, TOOLS, { n: 3 })).cache).toBe('hit');
    await ask(app, TOOLS, { n: 2 });
    expect((await ask(app, TOOLS, { n: 2 })).cache).toBe('hit');
    const again = await measured(app, TOOLS, { n: 3 });
    expect(again.cache).toBeUndefined();
    expect(again.calls.findArtifacts).toBe(1);
    expect(again.body).toBe(a.body);
  });

  it('does not keep an answer with an error, even beside data', async () => {
    const app = await start();
    const query = 'query { tools(first: 2) { nodes { id } } other: workspace(id: "ws-b") { id } }';
    const first = await ask(app, query);
    expect(first.status).toBe(200);
    expect(first.json.data.tools.nodes).toHaveLength(2);
    expect(first.json.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['not_found']);
    const again = await measured(app, query);
    expect(again.cache).toBeUndefined();
    expect(again.calls.findArtifacts).toBe(1);
    expect(again.json.errors).toHaveLength(1);
  });

  it('keeps answers read from the trace store until spans arrive: new spans show at once', async () => {
    const app = await start();
    const tool = smallBundle().artifacts.find((a) => a.id === 'tl-1') as {
      tool_name?: string;
      name: string;
      server_id?: string;
      workspace_id: string;
    };
    // One start for every span: a resend is the same span (its identity holds its start).
    const startS = Math.floor(Date.now() / 1000) - 60;
    const span = (i: number) =>
      toolCallRow(i, tool.tool_name ?? tool.name, tool.server_id ?? null, {
        workspace_id: tool.workspace_id,
        start_s: startS,
      });
    const query = '{ tool(id: "tl-1") { id usage { calls } } }';
    await app.traces.insertSpans([span(1)]);
    const first = await ask(app, query);
    expect(first.json.data.tool.usage.calls).toBe(1);
    const again = await ask(app, query);
    expect(again.cache).toBe('hit');
    expect(again.body).toBe(first.body);
    await app.traces.insertSpans([span(2)]);
    const after = await ask(app, query);
    expect(after.cache).toBeUndefined();
    expect(after.json.data.tool.usage.calls).toBe(2);
    // A resend stores nothing new, yet moves the mark: the next answer is computed afresh, the same.
    await app.traces.insertSpans([span(2)]);
    const resent = await ask(app, query);
    expect(resent.cache).toBeUndefined();
    expect(resent.json.data.tool.usage.calls).toBe(2);
    expect((await ask(app, query)).cache).toBe('hit');
  });

  it("keeps statistics of a skill until spans arrive, and never an MCP server's sliding 30-day usage", async () => {
    const app = await start();
    const now = Math.floor(Date.now() / 1000);
    const stats = `{ skill(id: "sk-1") { traceStats(input: { startTimeUnixSeconds: ${now - 3600}, endTimeUnixSeconds: ${now + 3600}, requestType: SCALAR, queries: [{ name: "n", measure: SPANS }] }) { data { ... on ScalarStats { results { value } } } } } }`;
    const value = (res: { json: { data: { skill: { traceStats: { data: { results: { value: number }[] } } } } } }) =>
      res.json.data.skill.traceStats.data.results[0]?.value;
    const first = await ask(app, stats);
    expect(value(first)).toBe(0);
    expect((await ask(app, stats)).cache).toBe('hit');
    await app.traces.insertSpans([
      spanRow(1, { category: 'skill_invocation', skill: 'sk-1', skill_version: 1, start_s: now - 60 }),
    ]);
    const after = await ask(app, stats);
    expect(after.cache).toBeUndefined();
    expect(value(after), after.body).toBe(1);
    const server = '{ mcpServers(first: 1) { nodes { id usage { calls } } } }';
    expect((await ask(app, server)).status).toBe(200);
    expect((await ask(app, server)).cache).toBeUndefined();
  });

  it('does not keep agent cards: their URLs follow each request Host header', async () => {
    const app = await start();
    const card = async (host: string) => {
      const res = await app.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { ...(await app.auth('u-admin')), 'content-type': 'application/json', host },
        payload: JSON.stringify({ query: '{ agent(id: "ag-1") { card } }' }),
      });
      const url = res.json<{ data: { agent: { card: { supportedInterfaces: { url: string }[] } } } }>().data.agent.card
        .supportedInterfaces[0]?.url;
      return { cache: res.headers['x-cache'], url };
    };
    expect((await card('a.example')).url).toMatch(/^http:\/\/a\.example\//);
    const other = await card('b.example');
    expect(other.cache).toBeUndefined();
    expect(other.url).toMatch(/^http:\/\/b\.example\//);
  });
});
