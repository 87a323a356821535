/**
 * The MCP servers and tool-call spans the MCP Registry API tests read, over the small bundle
 * (test/fixtures/small-bundle.ts), and the answers expected of them, computed here from what was
 * stored, never read from the service:
 *
 *   io.github.x/y           id y        ws-a-team   1.0.0, 1.2.0, 2.0.0 (deleted): latest 1.2.0
 *   io.github.acme/weather  id weather  ws-a-sub    0.1.0
 *   io.github.acme/jira     id jira     ws-a-other  3.0.0
 *   com.example/bee         id bee      ws-b (org-b) 1.0.0
 *
 * Spans: calls to `y` from ws-a-team (10, 2 erroring) and ws-a-sub (5), and calls that never count:
 * 40 days old, another organization, a model call.
 */
import type { McpServerVersion } from '../../src/domain/types.ts';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { toolCallRow } from '../fixtures/span-row.ts';
import { publishVersions } from '../fixtures/mcp-registry/servers.ts';
import type { TestApp } from '../helpers/test-app.ts';

const NOW_S = Math.floor(Date.now() / 1000);
const DAY = 86400;

let n = 0;
function call(workspace: string, mcp: string, extra: Partial<SpanRow> = {}): SpanRow {
  n++;
  return toolCallRow(n, n % 2 === 0 ? 'search' : 'fetch', mcp, {
    workspace_id: workspace,
    start_s: NOW_S - (n % 20) * 3600,
    duration_ms: 10 + ((n * 37) % 300),
    is_error: n % 5 === 0,
    ...extra,
  });
}

const SPANS: SpanRow[] = [
  ...Array.from({ length: 10 }, () => call('ws-a-team', 'y')),
  ...Array.from({ length: 5 }, () => call('ws-a-sub', 'y')),
  ...Array.from({ length: 4 }, () => call('ws-a-team', 'y', { start_s: NOW_S - 40 * DAY })),
  ...Array.from({ length: 3 }, () => call('ws-b', 'y', { org_id: 'org-b' })),
  call('ws-a-team', 'y', { category: 'model_call' }),
];

/** What the usage of `server` should be, counting the spans of `workspaces` (30 days). */
export function expectedUsage(server: string, workspaces: readonly string[], org = 'org-a') {
  const calls = SPANS.filter(
    (s) =>
      s.org_id === org &&
      s.category === 'tool_call' &&
      s.mcp === server &&
      workspaces.includes(s.workspace_id) &&
      s.start_s >= NOW_S - 30 * DAY,
  );
  const sorted = calls.map((s) => s.duration_ms).sort((a, b) => a - b);
  return {
    window_days: 30,
    calls: calls.length,
    error_rate: calls.length === 0 ? null : calls.filter((s) => s.is_error).length / calls.length,
    p95_latency_ms: calls.length === 0 ? null : (sorted[Math.ceil(0.95 * sorted.length) - 1] as number),
  };
}

/** A ServerResponse as the API should answer `v` with this usage (none: left out). */
export function expectedResponse(v: McpServerVersion, usage?: ReturnType<typeof expectedUsage>) {
  return {
    server: v.server,
    _meta: {
      'io.modelcontextprotocol.registry/official': {
        status: v.status,
        statusChangedAt: v.status_changed_at,
        publishedAt: v.published_at,
        updatedAt: v.updated_at,
        isLatest: v.is_latest,
      },
      'dev.agent-registry.gateway/registry': {
        server_id: v.id,
        workspace_id: v.workspace_id,
        ...(usage !== undefined ? { usage } : {}),
      },
    },
  };
}

/** Publishes the fixture's servers and stores its spans; answers the stored versions by `name@version`. */
export async function seedServers(t: TestApp): Promise<Map<string, McpServerVersion>> {
  await publishVersions(t.registry, [
    { id: 'y', workspaceId: 'ws-a-team', name: 'io.github.x/y', version: '1.0.0' },
    { id: 'y', workspaceId: 'ws-a-team', name: 'io.github.x/y', version: '1.2.0' },
    { id: 'y', workspaceId: 'ws-a-team', name: 'io.github.x/y', version: '2.0.0', status: 'deleted' },
    { id: 'weather', workspaceId: 'ws-a-sub', name: 'io.github.acme/weather', version: '0.1.0' },
    { id: 'jira', workspaceId: 'ws-a-other', name: 'io.github.acme/jira', version: '3.0.0' },
    { id: 'bee', orgId: 'org-b', workspaceId: 'ws-b', name: 'com.example/bee', version: '1.0.0' },
  ]);
  await t.traces.insertSpans(SPANS);
  // Read back: publishing a later version changes an earlier one's is_latest and updated_at.
  const all = [
    ...(await t.registry.getMcpServerHistory('org-a', ['y', 'weather', 'jira'])),
    ...(await t.registry.getMcpServerHistory('org-b', ['bee'])),
  ];
  return new Map(all.map((v) => [`${v.name}@${v.version}`, v]));
}
