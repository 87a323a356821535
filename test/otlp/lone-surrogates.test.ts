/**
 * Lone UTF-16 surrogates in OTLP/JSON (`"\ud800"`, which JSON.parse keeps) end to end, over HTTP
 * with the real app, on both engines: every store keeps them as U+FFFD, and so does the receiver
 * from the body's parse on (otlp/json-body.ts). An agent name with one is accepted (not a 503 that
 * the sender retries for ever), and again after a restart at the cap; two names differing only by
 * one are one agent; tools and servers so named count every call in the statistics and usage. And
 * Claude Code's `tool_parameters`, JSON text inside an attribute, gives well-formed names too.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecodedLogRecord } from '../../src/otlp/logs/decode.ts';
import { spanOfLogRecord } from '../../src/otlp/logs/mapping.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const NOW_S = Math.floor(Date.now() / 1000);
const AGENT = 'agent-\ufffd';
const TOOL = 'lookup-\ufffd';
const SERVER = 'srv-\ufffd';

/** One trace `n` of sk-1: its invocation by `agents[0]`, then a tool call per [tool, server, agent]. */
function trace(n: number, agent: string, toolCalls: [string, string, string][]): object[] {
  const traceId = n.toString(16).padStart(32, 'c');
  const id = (i: number) => (n * 100 + i).toString(16).padStart(16, 'd');
  const span = (i: number, name: string, values: Record<string, string>, parent?: string) => {
    const start = BigInt(NOW_S - 300 + i) * 1_000_000_000n;
    return {
      traceId,
      spanId: id(i),
      ...(parent === undefined ? {} : { parentSpanId: parent }),
      name,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + BigInt(10 + i) * 1_000_000n),
      attributes: attrs(values),
    };
  };
  return [
    span(0, 'invoke_skill', {
      'gen_ai.operation.name': 'invoke_skill',
      'skill.id': 'sk-1',
      'gen_ai.agent.name': agent,
    }),
    ...toolCalls.map(([tool, server, caller], i) =>
      span(
        i + 1,
        `execute_tool ${tool}`,
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool,
          'mcp.server.name': server,
          'gen_ai.agent.name': caller,
        },
        id(0),
      ),
    ),
  ];
}

/** The first request: five calls of one tool on one server, named four ways, by two forms of one agent and `helper`. */
const FIRST = [
  ...trace(1, 'agent-\ud800', [
    ['lookup-\ud800', 'srv-\ud801', 'agent-\ud800'],
    ['lookup-\udc00', 'srv-\udc01', 'agent-\udc00'],
    ['lookup-\ud800', 'srv-\ud801', 'agent-\udc00'],
  ]),
  ...trace(2, 'helper', [
    ['lookup-\udbff', 'srv-\ufffd', 'helper'],
    [TOOL, 'srv-\udfff', 'helper'],
  ]),
];

function suite(engine: string, server: () => Record<string, string>) {
  describe(`lone surrogates in OTLP/JSON: ${engine}`, () => {
    let dataDir: string;
    let t: TestApp;
    let url: string;
    /** The app on `dataDir` (and the engine's database), listening; again: the service restarted. */
    const start = async () => {
      t = await startTestApp({ dataDir, env: { ...server(), OTLP_MAX_AGENT_NAMES: '2' } });
      url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    };
    beforeAll(async () => {
      dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gw-lone-'));
      await start();
    });
    afterAll(async () => {
      await t.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    });

    async function post(route: string, body: string): Promise<{ status: number; body: unknown }> {
      const res = await fetch(`${url}${route}`, {
        method: 'POST',
        headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
        body,
      });
      return { status: res.status, body: await res.json() };
    }

    const send = (spans: object[]) =>
      post('/v1/traces', JSON.stringify(otlpTraceBody({ resource: attrs({ 'workspace.id': 'ws-a-team' }), spans })));

    /** sk-1's `tool_calls` by (tool, server) and `spans` by agent, over HTTP. */
    async function stats(): Promise<{ tools: Record<string, number>; agents: Record<string, number> }> {
      const range = { start_time_unix_seconds: NOW_S - 3600, end_time_unix_seconds: NOW_S + 60 };
      const table = async (measure: string, groupBy: string[]) => {
        const res = await post(
          '/skill/v1/skills/sk-1/traces/stats/query',
          JSON.stringify({ ...range, request_type: 'table', queries: [{ name: 'n', measure, group_by: groupBy }] }),
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        type Row = { groups: Record<string, string | null>; values: { n: number } };
        const rows = (res.body as { data: { rows: Row[] } }).data.rows.filter((r) => r.values.n > 0);
        return Object.fromEntries(rows.map((r) => [groupBy.map((g) => String(r.groups[g])).join(' '), r.values.n]));
      };
      return { tools: await table('tool_calls', ['tool', 'mcp']), agents: await table('spans', ['agent']) };
    }

    /** Calls of TOOL on SERVER, and of SERVER (the stores' usage, as the MCP registry asks). */
    async function usage(): Promise<[number, number]> {
      const scope = { orgId: 'org-a', workspaceIds: ['ws-a-team'], sinceS: NOW_S - 3600 };
      const tools = await t.traces.toolUsage({ ...scope, tools: [{ group: 0, tool: TOOL, server: SERVER }] });
      const servers = await t.traces.serverUsage({ ...scope, servers: [SERVER] });
      return [tools[0]?.calls ?? 0, servers[0]?.calls ?? 0];
    }

    /** Agent subjects of org-a's spans (detection's facts): `agent traces`. */
    async function agents(): Promise<string[]> {
      const page = await t.traces.subjectFacts({
        orgId: 'org-a',
        subjectType: 'agent',
        windows: [{ startS: NOW_S - 3600, endS: NOW_S + 60 }],
        limit: 100,
        after: null,
      });
      return page.rows.map((r) => `${r.subject} ${r.traces}`);
    }

    it('accepts an agent name with a lone surrogate, counts two such names as one agent, and every call', async () => {
      expect(await send(FIRST)).toEqual({ status: 200, body: {} });
      expect(await t.traces.countSpans()).toBe(7);
      expect(await agents()).toEqual([`${AGENT} 1`, 'helper 1']);
      expect(await stats()).toEqual({ tools: { [`${TOOL} ${SERVER}`]: 5 }, agents: { [AGENT]: 4, helper: 3 } });
      expect(await usage()).toEqual([5, 5]);
    });

    it('accepts it again after a restart, with the workspace at its cap of 2 names', async () => {
      await t.close();
      await start();
      // Sent again (an exporter's retry): accepted, stored once.
      expect(await send(FIRST)).toEqual({ status: 200, body: {} });
      expect(await t.traces.countSpans()).toBe(7);
      // New spans under another form of the name held.
      const more = trace(3, 'agent-\udc02', [
        ['lookup-\udfff', 'srv-\ud800', 'agent-\ud800'],
        ['lookup-\ud801', 'srv-\udc00', 'agent-\udbff'],
      ]);
      expect(await send(more)).toEqual({ status: 200, body: {} });
      expect(await agents()).toEqual([`${AGENT} 2`, 'helper 1']);
      expect(await stats()).toEqual({ tools: { [`${TOOL} ${SERVER}`]: 7 }, agents: { [AGENT]: 7, helper: 3 } });
      expect(await usage()).toEqual([7, 7]);
    });
  });
}

suite('sqlite and duckdb', () => ({}));
const database = await fileDatabase('gw_lone_surrogates');
if (database !== null) suite('postgres', () => database);

describe("Claude Code's tool_parameters with a lone surrogate escaped in its JSON", () => {
  it('names the tool and server in their well-formed form', () => {
    const params = JSON.stringify({ mcp_server_name: 'srv-\ud800', mcp_tool_name: 'lookup-\udc00' });
    // JSON.stringify escapes a lone surrogate: the attribute's text is well formed, its JSON is not.
    expect(params).toContain('\\ud800');
    const record: DecodedLogRecord = {
      timeNs: BigInt(NOW_S) * 1_000_000_000n,
      observedNs: 0n,
      traceId: '',
      spanId: '',
      body: 'claude_code.tool_result',
      eventName: null,
      attributes: new Map([
        ['tool_parameters', params],
        ['tool_name', 'mcp_tool'],
        ['session.id', 's-1'],
      ]),
      resource: new Map(),
    };
    const span = spanOfLogRecord(record, new Map());
    expect(span?.attributes.get('gen_ai.tool.name')).toBe(TOOL);
    expect(span?.attributes.get('mcp.server.name')).toBe(SERVER);
  });
});
