/**
 * The authorization matrix of MCP servers on the graph (test/auth/matrix.ts): `mcpServer(id)`,
 * federation `_entities`, the `mcpServers` list and `Tool.server`, for every kind of caller, against
 * servers of a readable workspace, of the same organization but unreadable, of another organization,
 * and absent. Lookups follow the matrix's read rule (403 access_denied in the caller's organization,
 * 404 not_found elsewhere); the list and the tools' `server` edges show exactly the readable
 * servers, and a server's `tools` exactly the readable tools. The tools' server ids cross
 * workspaces: tl-2 (ws-a-sub) names a server of ws-a-other, tl-3 (org-a) one of org-b.
 */
import { describe, expect, it } from 'vitest';
import { serverJson } from '../fixtures/mcp-registry/servers.ts';
import {
  CALLERS,
  WORKSPACE,
  bundle,
  expected,
  graph,
  matrixApp,
  runMatrix,
  useMatrixApp,
  type Caller,
  type Operation,
} from './matrix.ts';

/** Server id -> its workspace (null: no such server). */
const SERVERS: Record<string, string | null> = {
  'srv-team': 'ws-a-team',
  'srv-sub': 'ws-a-sub',
  'srv-other': 'ws-a-other',
  'srv-b': 'ws-b',
  'srv-none': null,
};
const ids = Object.keys(SERVERS);
/** The server each tool names. */
const SERVER_OF_TOOL: Record<string, string> = {
  'tl-1': 'srv-team',
  'tl-2': 'srv-other',
  'tl-3': 'srv-b',
  'tl-4': 'srv-sub',
  'tl-b1': 'srv-b',
};

useMatrixApp((b) => {
  Object.assign(WORKSPACE, SERVERS);
  for (const a of b.artifacts) {
    const server = SERVER_OF_TOOL[a.id];
    if (server !== undefined) (a as Record<string, unknown>).server_id = server;
  }
  (b as { mcp_servers?: object[] }).mcp_servers = Object.entries(SERVERS).flatMap(([id, ws]) =>
    ws === null
      ? []
      : [{ id, workspace_id: ws, server: serverJson(`io.github.m/${id}`, '1.0.0'), created_by: 'u-admin' }],
  );
});

/** The workspace of a tool of the matrix bundle. */
const toolWorkspace = (id: string) => bundle.artifacts.find((a) => a.id === id)?.workspace_id;

/** Whether `caller` reads a tool that names `server`. */
const readsToolOf = (caller: Caller, server: string) =>
  Object.entries(SERVER_OF_TOOL).some(
    ([tool, s]) => s === server && (caller.reads ?? []).includes(toolWorkspace(tool) ?? ''),
  );

/** A list as a read of one target: 200 `shown` when the target is in it, `hidden` when not. */
async function shown(header: string, query: string, ids: (data: Record<string, unknown>) => string[], id: string) {
  let found: string[] = [];
  const answer = await graph(header, query, (data) => {
    found = ids(data);
    return true;
  });
  return answer.status === 200 ? { status: 200, code: found.includes(id) ? 'shown' : 'hidden' } : answer;
}

type Nodes<T> = { nodes: T[] };

const OPERATIONS: Operation[] = [
  {
    name: 'GraphQL mcpServer(id)',
    targets: ids,
    call: (h, id) => graph(h, `{ mcpServer(id: "${id}") { id name } }`, (d) => d.mcpServer),
  },
  {
    name: 'federation _entities McpServer',
    targets: ids,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "McpServer", id: "${id}"}]) { ... on McpServer { id } } }`,
        (d) => (d._entities as unknown[])[0],
      ),
  },
  {
    name: 'GraphQL mcpServers',
    targets: ids,
    call: (h, id) =>
      shown(
        h,
        '{ mcpServers(first: 200) { nodes { id } } }',
        (d) => (d.mcpServers as Nodes<{ id: string }>).nodes.map((n) => n.id),
        id,
      ),
    expects: (caller, id) =>
      caller.fails ?? { status: 200, code: expected(caller, id).status === 200 ? 'shown' : 'hidden' },
  },
  {
    name: 'GraphQL tools { server }',
    targets: ids,
    call: (h, id) =>
      shown(
        h,
        '{ tools(first: 200) { nodes { server { id } } } }',
        (d) =>
          (d.tools as Nodes<{ server: { id: string } | null }>).nodes.flatMap((n) =>
            n.server === null ? [] : [n.server.id],
          ),
        id,
      ),
    expects: (caller, id) =>
      caller.fails ?? {
        status: 200,
        code: expected(caller, id).status === 200 && readsToolOf(caller, id) ? 'shown' : 'hidden',
      },
  },
];

runMatrix('authorization matrix: MCP servers on the graph', OPERATIONS);

describe('a server’s tools and the tools’ servers show exactly what the caller reads', () => {
  for (const caller of CALLERS.filter((c) => c.fails === undefined)) {
    it(`as ${caller.name}`, async () => {
      const reads = caller.reads ?? [];
      const res = await matrixApp().app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: await caller.header(), 'content-type': 'application/json' },
        payload: {
          query:
            '{ mcpServers(first: 50) { nodes { id tools(first: 50) { nodes { id } } } } tools(first: 200) { nodes { id serverId server { id } } } }',
        },
      });
      expect(res.statusCode).toBe(200);
      const data = res.json<{
        data: {
          mcpServers: Nodes<{ id: string; tools: Nodes<{ id: string }> }>;
          tools: Nodes<{ id: string; serverId: string; server: { id: string } | null }>;
        };
      }>().data;
      const readable = (id: string) => expected(caller, id).status === 200;
      for (const server of data.mcpServers.nodes) {
        const tools = Object.entries(SERVER_OF_TOOL)
          .filter(([tool, s]) => s === server.id && reads.includes(toolWorkspace(tool) ?? ''))
          .map(([tool]) => tool);
        expect(server.tools.nodes.map((t) => t.id).sort(), `tools of ${server.id}`).toEqual(tools.sort());
      }
      for (const tool of data.tools.nodes)
        expect(tool.server?.id ?? null, `server of ${tool.id}`).toBe(readable(tool.serverId) ? tool.serverId : null);
    });
  }

  it('the fixture crosses: a readable tool naming an unreadable server, and one of another organization', () => {
    const team = CALLERS.find((c) => c.name === 'workspace viewer') as Caller;
    expect(team.reads).toContain(toolWorkspace('tl-2'));
    expect(expected(team, 'srv-other')).toEqual({ status: 403, code: 'access_denied' });
    expect(team.reads).toContain(toolWorkspace('tl-3'));
    expect(expected(team, 'srv-b')).toEqual({ status: 404, code: 'not_found' });
  });
});
