/**
 * 10,000 MCP servers paged through over real HTTP with `metadata.nextCursor`, as a registry mirror
 * or an IDE would: no version twice, none missing, in name-then-version order, with one usage query
 * per page; versions published while paging appear once if they sort after the cursor and are never
 * repeated; `version=latest` pages the latest of every name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerUsageQuery } from '../../src/store/trace-port.ts';
import { expectServerList } from '../fixtures/mcp-registry/schemas.ts';
import type { McpServerEntry } from '../../src/domain/types.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { publishVersions, serverJson } from '../fixtures/mcp-registry/servers.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const SERVERS = 10_000;
/** Every 20th server has a second version: 10,500 versions in all. */
const TWICE = (i: number) => i % 20 === 0;

let t: TestApp;
let base: string;
const usageQueries: ServerUsageQuery[] = [];

const nameOf = (i: number) => `io.github.org${i % 37}/server-${String(i).padStart(5, '0')}`;

beforeAll(async () => {
  t = await startTestApp({ env: { MCP_REGISTRY_PUBLIC_WORKSPACES: 'ws-a-team', RATE_LIMIT_PER_MIN: '100000' } });
  // One import (a bundle's mcp_servers section) rather than 10,500 publishes.
  const entry = (i: number, version: string): McpServerEntry => ({
    id: `s${i}`,
    org_id: 'org-a',
    workspace_id: 'ws-a-team',
    server: serverJson(nameOf(i), version),
    status: 'active',
    published_at: new Date(Date.UTC(2026, 0, 1) + i * 1000 + (version === '1.0.0' ? 0 : 500)).toISOString(),
    created_by: 'u-admin',
  });
  const bundle = parseBundle(smallBundle());
  for (let i = 0; i < SERVERS; i++) {
    bundle.mcp_servers.push(entry(i, '1.0.0'));
    if (TWICE(i)) bundle.mcp_servers.push(entry(i, '1.1.0'));
  }
  await t.registry.importBundle(bundle);
  const original = t.traces.serverUsage.bind(t.traces);
  t.traces.serverUsage = (q, signal) => {
    usageQueries.push(q);
    return original(q, signal);
  };
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
}, 600_000);
afterAll(async () => {
  await t.close();
});

interface Page {
  servers: { server: { name: string; version: string } }[];
  metadata: { nextCursor?: string; count: number };
}

/**
 * Pages `query` to the end; `between` runs after each page (its number from 1). Pages before the
 * last are full unless `shortPages` (an exact version reads a bounded number of versions a request).
 */
async function pageAll(
  query: string,
  between?: (page: number) => Promise<void>,
  options: { shortPages?: boolean } = {},
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const url = `${base}/v0.1/servers?${query}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const before = usageQueries.length;
    const res = await fetch(url);
    expect(res.status, url).toBe(200);
    const body = (await res.json()) as Page;
    if (page <= 3) expectServerList(body);
    expect(body.metadata.count).toBe(body.servers.length);
    expect(usageQueries.length - before, 'one usage query per page').toBe(body.servers.length === 0 ? 0 : 1);
    seen.push(...body.servers.map((s) => `${s.server.name}@${s.server.version}`));
    await between?.(page);
    if (body.metadata.nextCursor === undefined) return seen;
    if (options.shortPages !== true) expect(body.servers.length, 'a page before the last is full').toBe(100);
    cursor = body.metadata.nextCursor;
  }
}

const sorted = (keys: string[]) => [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe(`${SERVERS.toLocaleString('en-US')} servers`, () => {
  it('every version once, in order, across 105 pages of 100', async () => {
    const seen = await pageAll('limit=100');
    const expected: string[] = [];
    for (let i = 0; i < SERVERS; i++) {
      expected.push(`${nameOf(i)}@1.0.0`);
      if (TWICE(i)) expected.push(`${nameOf(i)}@1.1.0`);
    }
    expect(seen.length).toBe(10_500);
    expect(new Set(seen).size, 'no duplicate').toBe(seen.length);
    expect(seen, 'none missing, in name-then-version order').toEqual(sorted(expected));
  });

  it('version=latest: the latest of every name, once', async () => {
    const seen = await pageAll('version=latest&limit=100');
    expect(seen.length).toBe(SERVERS);
    expect(new Set(seen.map((k) => k.split('@')[0])).size).toBe(SERVERS);
    expect(seen.filter((k) => k.endsWith('@1.1.0')).length).toBe(SERVERS / 20);
  });

  it('an exact version: its versions once, in order, however far apart', async () => {
    const seen = await pageAll('version=1.1.0&limit=100', async () => undefined, { shortPages: true });
    const expected = Array.from({ length: SERVERS }, (_, i) => i)
      .filter(TWICE)
      .map((i) => `${nameOf(i)}@1.1.0`);
    expect(seen).toEqual(sorted(expected));
  });

  it('versions published while paging: after the cursor they appear once, before it never', async () => {
    let added = 0;
    const seen = await pageAll('limit=100&search=server-', async (page) => {
      if (page !== 50) return;
      await publishVersions(t.registry, [
        { id: 'early', workspaceId: 'ws-a-team', name: 'io.github.aaa/server-early', version: '1.0.0' },
        { id: 'late', workspaceId: 'ws-a-team', name: 'io.github.zzz/server-late', version: '1.0.0' },
        { id: 's3', workspaceId: 'ws-a-team', name: nameOf(3), version: '9.0.0' },
      ]);
      added = 3;
    });
    expect(added).toBe(3);
    expect(new Set(seen).size, 'no duplicate').toBe(seen.length);
    expect(seen).toContain('io.github.zzz/server-late@1.0.0');
    expect(seen).not.toContain('io.github.aaa/server-early@1.0.0');
    expect(seen.length).toBe(10_500 + 1 + (seen.includes(`${nameOf(3)}@9.0.0`) ? 1 : 0));
    expect(seen).toEqual(sorted(seen));
  });
});
