/**
 * MCP server usage (TraceStore.serverUsage) on every engine: the tool_call spans of the scope whose
 * `mcp` is one of the servers, whatever their tool, grouped by server. Expected values come from a
 * plain TypeScript reference over the spans stored here, never from an engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ServerUsageQuery,
  type ServerUsageRow,
  type SpanRow,
  type TraceStore,
} from '../../src/store/trace-port.ts';
import { compareValues } from '../../src/store/group-order.ts';
import { END } from './trace-contract.ts';
import { usageSpans } from './tool-usage-contract.ts';

const DAY = 86400;

/** Server usage by hand, span by span (also the reference of call-pairs-contract.ts). */
export function serverUsageReference(all: readonly SpanRow[], q: ServerUsageQuery): ServerUsageRow[] {
  const rows: ServerUsageRow[] = [];
  for (const server of [...new Set(q.servers)].sort(compareValues)) {
    const calls = all.filter(
      (s) =>
        s.org_id === q.orgId &&
        s.category === 'tool_call' &&
        q.workspaceIds.includes(s.workspace_id) &&
        s.mcp === server &&
        (q.sinceS === null || s.start_s >= q.sinceS),
    );
    if (calls.length === 0) continue;
    const sorted = calls.map((s) => s.duration_ms).sort((a, b) => a - b);
    rows.push({
      server,
      calls: calls.length,
      errors: calls.filter((s) => s.is_error).length,
      p95LatencyMs: sorted[Math.ceil(0.95 * sorted.length) - 1] as number,
      lastCalledS: Math.max(...calls.map((s) => s.start_s)),
    });
  }
  return rows;
}

export function serverUsageContract(engine: string, open: () => Promise<TraceStore>): void {
  describe(`trace store MCP server usage: ${engine}`, () => {
    let store: TraceStore;
    const spans = usageSpans();
    const scope = { orgId: 'org-u', workspaceIds: ['ws-u1', 'ws-u2'] };
    const servers = ['github', 'jira', 'srv-a', 'srv-\t'];
    beforeAll(async () => {
      store = await open();
      for (let i = 0; i < spans.length; i += 1000) await store.insertSpans(spans.slice(i, i + 1000));
    });
    afterAll(async () => {
      await store.close();
    });

    const cases: [string, ServerUsageQuery][] = [
      ['every stored call of four servers, two workspaces', { ...scope, sinceS: null, servers }],
      ['the last 30 days', { ...scope, sinceS: END - 30 * DAY, servers }],
      [
        'one workspace, a server no span names beside one',
        { ...scope, workspaceIds: ['ws-u2'], sinceS: null, servers: ['never', 'github'] },
      ],
      ['another organization: its own calls only', { ...scope, orgId: 'org-v', sinceS: null, servers }],
    ];

    it.each(cases)('%s', async (_name, q) => {
      const expected = serverUsageReference(spans, q);
      expect(expected.length, 'the case has calls').toBeGreaterThan(0);
      expect(await store.serverUsage(q)).toEqual(expected);
    });

    it('a server counts every tool of its calls, and calls without a server count for none', async () => {
      const [github] = await store.serverUsage({ ...scope, sinceS: null, servers: ['github'] });
      const tools = new Set(spans.filter((s) => s.mcp === 'github' && s.category === 'tool_call').map((s) => s.tool));
      expect(tools.size, 'github calls come from two tools').toBe(2);
      expect(github?.calls).toBe(
        spans.filter(
          (s) =>
            s.org_id === 'org-u' &&
            s.mcp === 'github' &&
            s.category === 'tool_call' &&
            scope.workspaceIds.includes(s.workspace_id),
        ).length,
      );
      expect(await store.serverUsage({ ...scope, sinceS: null, servers: [''] })).toEqual([]);
    });

    it('answers nothing without servers, without workspaces, or in the future', async () => {
      expect(await store.serverUsage({ ...scope, sinceS: null, servers: [] })).toEqual([]);
      expect(await store.serverUsage({ ...scope, workspaceIds: [], sinceS: null, servers })).toEqual([]);
      expect(await store.serverUsage({ ...scope, sinceS: END + DAY, servers })).toEqual([]);
    });
  });
}
