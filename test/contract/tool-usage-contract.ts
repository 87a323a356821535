/**
 * Tool usage with a window per entry (TraceStore.toolUsage) on every engine: the lookups of a
 * whole GraphQL operation, whatever their `since`, are one query, and each entry answers exactly
 * what a query of its window alone answers. Expected values come from a plain TypeScript reference
 * over the spans stored here, never from an engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRow, ToolUsageEntry, ToolUsageQuery, ToolUsageRow, TraceStore } from '../../src/store/trace-port.ts';
import { demoSpans } from '../../src/seed/demo-traces.ts';
import { END } from './trace-contract.ts';

const DAY = 86400;
const TOOLS = [
  { tool: 'create_issue', server: 'github' },
  { tool: 'list_pulls', server: 'github' },
  { tool: 'search_tickets', server: 'jira' },
  { tool: 'web_search', server: null },
  // Hostile values: they are data in every engine, whatever its bulk format.
  { tool: "x' OR '1'='1", server: 'srv-a' },
  { tool: 'tab\tnew\nline\rback\\slash \\N', server: 'srv-\t' },
  { tool: "x\r=cmd|' /C calc'!A0", server: null },
];

/** Demo traces of org-u over 40 days calling TOOLS, and decoys: another organization, a model call. */
export function usageSpans(): SpanRow[] {
  const rows: SpanRow[] = [];
  const options = {
    skills: [{ id: 'sk-u', workspaceId: 'ws-u1' }],
    users: ['u1', 'u2'],
    spans: 3000,
    endS: END,
    days: 40,
  };
  for (const b of demoSpans({ ...options, orgId: 'org-u', tools: TOOLS, seed: 31 })) rows.push(...b);
  for (const b of demoSpans({ ...options, orgId: 'org-v', tools: TOOLS, spans: 400, seed: 32 })) rows.push(...b);
  // A second workspace: every third trace of org-u.
  return rows.map((r, i) =>
    r.org_id === 'org-u' && i % 3 === 0
      ? {
          ...r,
          workspace_id: 'ws-u2',
          category: i % 30 === 0 && r.category === 'tool_call' ? 'model_call' : r.category,
        }
      : r,
  );
}

/** Tool k of TOOLS, to spread into an entry. */
const tool = (k: number) => TOOLS[k] as { tool: string; server: string | null };

const windowOf = (q: ToolUsageQuery, e: ToolUsageEntry) => (e.sinceS === undefined ? q.sinceS : e.sinceS);

/** DESIGN §8 by hand: a span counts once for a group when an entry of the group matches it, window included. */
function reference(all: readonly SpanRow[], q: ToolUsageQuery): ToolUsageRow[] {
  const rows: ToolUsageRow[] = [];
  for (const group of [...new Set(q.tools.map((t) => t.group))].sort((a, b) => a - b)) {
    const entries = q.tools.filter((t) => t.group === group);
    const calls = all.filter(
      (s) =>
        s.org_id === q.orgId &&
        s.category === 'tool_call' &&
        q.workspaceIds.includes(s.workspace_id) &&
        entries.some((e) => {
          const since = windowOf(q, e);
          return e.tool === s.tool && e.server === s.mcp && (since === null || s.start_s >= since);
        }),
    );
    if (calls.length === 0) continue;
    const sorted = calls.map((s) => s.duration_ms).sort((a, b) => a - b);
    rows.push({
      group,
      calls: calls.length,
      errors: calls.filter((s) => s.is_error).length,
      p95LatencyMs: sorted[Math.ceil(0.95 * sorted.length) - 1] as number,
      lastCalledS: Math.max(...calls.map((s) => s.start_s)),
    });
  }
  return rows;
}

/** 30 windows, as 30 aliases of `Tool.usage(since:)` ask: none, hours, days, beyond the data, the future. */
const WINDOWS: (number | null)[] = [
  null,
  ...Array.from({ length: 27 }, (_, i) => END - (i + 1) * 37 * 3600),
  END - 400 * DAY,
  END + DAY,
];

/** Every tool in every window, each (tool, window) its own group, numbered window-major. */
function everyToolInEveryWindow(): ToolUsageEntry[] {
  return WINDOWS.flatMap((sinceS, w) => TOOLS.map((t, k) => ({ group: w * TOOLS.length + k, ...t, sinceS })));
}

export function toolUsageContract(engine: string, open: () => Promise<TraceStore>): void {
  describe(`trace store tool usage, a window per entry: ${engine}`, () => {
    let store: TraceStore;
    const spans = usageSpans();
    const scope = { orgId: 'org-u', workspaceIds: ['ws-u1', 'ws-u2'] };
    beforeAll(async () => {
      store = await open();
      for (let i = 0; i < spans.length; i += 1000) await store.insertSpans(spans.slice(i, i + 1000));
    });
    afterAll(async () => {
      await store.close();
    });

    const cases: [string, ToolUsageQuery][] = [
      ['every tool in 30 windows, one group each', { ...scope, sinceS: null, tools: everyToolInEveryWindow() }],
      [
        "entries without a window take the query's; an entry's null window is every stored call",
        {
          ...scope,
          sinceS: END - 5 * DAY,
          tools: [
            { group: 0, ...tool(0) },
            { group: 1, ...tool(0), sinceS: null },
            { group: 2, ...tool(3), sinceS: END - 20 * DAY },
            { group: 3, ...tool(5), sinceS: END - 30 * DAY },
          ],
        },
      ],
      [
        'one group of several tools, each with its own window; one workspace',
        {
          orgId: 'org-u',
          workspaceIds: ['ws-u2'],
          sinceS: null,
          tools: [
            { group: 4, ...tool(1), sinceS: END - 3 * DAY },
            { group: 4, ...tool(2), sinceS: END - 25 * DAY },
            { group: 4, ...tool(6), sinceS: null },
            { group: 7, ...tool(4), sinceS: END - 10 * DAY },
          ],
        },
      ],
      [
        'another organization: its own calls only, in the same workspace and windows',
        { orgId: 'org-v', workspaceIds: ['ws-u1', 'ws-u2'], sinceS: null, tools: everyToolInEveryWindow() },
      ],
      [
        'windows that hold nothing: the future, or a tool no span has',
        {
          ...scope,
          sinceS: null,
          tools: [
            { group: 0, ...tool(0), sinceS: END + DAY },
            { group: 1, tool: 'never_called', server: 'github', sinceS: END - 30 * DAY },
            { group: 2, ...tool(3), sinceS: END - 2 * DAY },
          ],
        },
      ],
    ];

    it.each(cases)('%s', async (_name, q) => {
      const expected = reference(spans, q);
      expect(expected.length, 'the case has calls').toBeGreaterThan(0);
      expect(await store.toolUsage(q)).toEqual(expected);
    });

    it('each entry of a batch answers what a query of its window alone answers', async () => {
      const batch = await store.toolUsage({ ...scope, sinceS: null, tools: everyToolInEveryWindow() });
      const alone: ToolUsageRow[] = [];
      for (const [w, sinceS] of WINDOWS.entries())
        alone.push(
          ...(
            await store.toolUsage({
              ...scope,
              sinceS,
              tools: TOOLS.map((t, k) => ({ group: w * TOOLS.length + k, ...t })),
            })
          ).sort((a, b) => a.group - b.group),
        );
      expect(batch).toEqual(alone);
      expect(batch.length).toBeGreaterThan(TOOLS.length * 20);
    });
  });
}
