/**
 * The pieces of the MCP end-to-end tests (mcp-calls-*.test.ts): two "processes" in one (an agent
 * and an MCP server, each with its own OpenTelemetry SDK provider exporting over OTLP/HTTP to the
 * gateway), a real MCP server of `@modelcontextprotocol/sdk` whose tool handler records its own span
 * by the MCP semantic conventions (kind SERVER, parented by the `traceparent` the client put in
 * `params._meta`, MCP SEP-414), an agent loop that calls two tools (one failing), and the checks:
 * every statistic that counts tool calls equals a plain computation over what the loop did.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  propagation,
  trace,
  type Context,
  type ContextManager,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_SESSION_ID,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  MCP_METHOD_NAME_VALUE_TOOLS_CALL,
} from '@opentelemetry/semantic-conventions/incubating';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/test-app.ts';

/** The MCP server: its registry id (small bundle tools tl-3 and tl-4) and `service.name`. */
export const SERVER = 'srv-jira';
/** What the agent loop does: three lookups, two closes that the server refuses (an isError result). */
export const PLAN = ['search_tickets', 'close_ticket', 'search_tickets', 'close_ticket', 'search_tickets'];
const FAILING = 'close_ticket';

/** Async context for the API (what sdk-trace-node's context manager does, on AsyncLocalStorage). */
class AsyncContext implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => this.with(ctx, () => fn(...args))) as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** W3C `traceparent`, the one field MCP SEP-414 carries in `params._meta` here. */
const traceparent: TextMapPropagator = {
  inject(ctx, carrier, setter) {
    const sc = trace.getSpanContext(ctx);
    if (sc === undefined || !trace.isSpanContextValid(sc)) return;
    setter.set(carrier, 'traceparent', `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & 1}`);
  },
  extract(ctx, carrier, getter) {
    const raw = getter.get(carrier, 'traceparent');
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(
      Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? ''),
    );
    if (m === null) return ctx;
    const [, traceId = '', spanId = '', flags = '00'] = m;
    return trace.setSpanContext(ctx, {
      traceId,
      spanId,
      traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED,
      isRemote: true,
    });
  },
  fields: () => ['traceparent'],
};

/** Installs the async context and the propagator for this test file's worker. */
export function installTracing(): () => void {
  context.setGlobalContextManager(new AsyncContext());
  propagation.setGlobalPropagator(traceparent);
  return () => {
    context.disable();
    propagation.disable();
  };
}

/** A process's telemetry: its provider and tracer, the spans it exported, and sending them (again). */
export interface Process {
  provider: BasicTracerProvider;
  tracer: Tracer;
  /** Every span the process ended (what its exporter sent). */
  spans(): ReadableSpan[];
  /** Sends the batch of ended spans (the provider's batch processor). */
  flush(): Promise<void>;
  /** Sends every ended span once more, as an exporter's retry would. */
  resend(): Promise<void>;
}

export function otlpProcess(serviceName: string, gateway: string, token: string): Process {
  const exporter = () =>
    new OTLPTraceExporter({ url: `${gateway}/v1/traces`, headers: { authorization: `Bearer ${token}` } });
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'workspace.id': 'ws-a-team' }),
    spanProcessors: [
      new BatchSpanProcessor(exporter(), { scheduledDelayMillis: 3_600_000 }),
      new SimpleSpanProcessor(memory),
    ],
  });
  return {
    provider,
    tracer: provider.getTracer(serviceName),
    spans: () => memory.getFinishedSpans(),
    flush: () => provider.forceFlush(),
    resend: () =>
      new Promise((resolve, reject) => {
        exporter().export(memory.getFinishedSpans(), (result) => {
          if (result.error === undefined) resolve();
          else reject(result.error);
        });
      }),
  };
}

/**
 * The MCP server: `search_tickets` answers, `close_ticket` fails (an isError result, as MCP reports
 * a tool's failure). Each call is recorded as the MCP semantic conventions' server span, child of
 * the context the client propagated in `params._meta`.
 */
export function mcpServer(tracer: Tracer): McpServer {
  const server = new McpServer({ name: SERVER, version: '1.0.0' });
  for (const tool of ['search_tickets', FAILING])
    server.registerTool(tool, { description: tool }, (extra) =>
      tracer.startActiveSpan(
        `${MCP_METHOD_NAME_VALUE_TOOLS_CALL} ${tool}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            [ATTR_MCP_METHOD_NAME]: MCP_METHOD_NAME_VALUE_TOOLS_CALL,
            [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
            [ATTR_GEN_AI_TOOL_NAME]: tool,
            [ATTR_JSONRPC_REQUEST_ID]: String(extra.requestId),
            ...(extra.sessionId === undefined ? {} : { [ATTR_MCP_SESSION_ID]: extra.sessionId }),
          },
        },
        // The client's context from `params._meta` (SEP-414), not this process's.
        propagation.extract(ROOT_CONTEXT, extra._meta ?? {}),
        async (span) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          const failed = tool === FAILING;
          if (failed) {
            span.setAttribute(ATTR_ERROR_TYPE, 'tool_error');
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
          return { content: [{ type: 'text' as const, text: failed ? 'ticket is locked' : 'ok' }], isError: failed };
        },
      ),
    );
  return server;
}

/** Duration of an SDK span as the gateway computes it (nanoseconds apart, in ms). */
function durationMs(s: ReadableSpan): number {
  const ns = (t: [number, number]) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
  return Number(ns(s.endTime) - ns(s.startTime)) / 1e6;
}

const percentile95 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.95 * sorted.length) - 1] ?? null;
};

/** Spans by the tool they call (`toolOf` reads it from a span). */
export function byTool(spans: ReadableSpan[], toolOf: (s: ReadableSpan) => unknown): Map<string, ReadableSpan[]> {
  const out = new Map<string, ReadableSpan[]>();
  for (const s of spans) out.set(String(toolOf(s)), [...(out.get(String(toolOf(s))) ?? []), s]);
  return out;
}

/**
 * Client and server spans of each call share one trace, the server's a child of the client's, and
 * the client's lasts at least as long.
 */
export function expectOneTracePerCall(clients: ReadableSpan[], servers: ReadableSpan[]): void {
  expect(clients).toHaveLength(PLAN.length);
  expect(servers).toHaveLength(PLAN.length);
  for (const s of servers) {
    const client = clients.find((c) => c.spanContext().spanId === s.parentSpanContext?.spanId);
    expect(client, `the client span of ${s.name}`).toBeDefined();
    expect(s.spanContext().traceId).toBe(client?.spanContext().traceId);
    expect(durationMs(s)).toBeLessThanOrEqual(durationMs(client as ReadableSpan));
  }
}

/** The tool of a server span (MCP semantic conventions). */
export const serverTool = (s: ReadableSpan): unknown => s.attributes[ATTR_GEN_AI_TOOL_NAME];

/** Operation 1 for sk-1 from `from` to now: its tool calls by tool, and its tool calls, spans and traces. */
export async function expectToolCalls(t: TestApp, from: number, spans: number): Promise<void> {
  const headers = await t.auth('u-admin');
  const range = { start_time_unix_seconds: from - 60, end_time_unix_seconds: Math.ceil(Date.now() / 1000) + 60 };
  const stats = await t.app.inject({
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    headers,
    payload: {
      ...range,
      request_type: 'table',
      queries: [{ name: 'calls', measure: 'tool_calls', group_by: ['tool'] }],
    },
  });
  expect(stats.statusCode, stats.body).toBe(200);
  type Row = { groups: { tool: string | null }; values: { calls: number } };
  const rows = stats.json<{ data: { rows: Row[] } }>().data.rows.filter((r) => r.values.calls > 0);
  expect(Object.fromEntries(rows.map((r) => [r.groups.tool, r.values.calls]))).toEqual({
    search_tickets: PLAN.filter((p) => p === 'search_tickets').length,
    close_ticket: PLAN.filter((p) => p === FAILING).length,
  });
  const total = await t.app.inject({
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    headers,
    payload: {
      ...range,
      request_type: 'scalar',
      queries: ['tool_calls', 'spans', 'traces'].map((m) => ({ name: m, measure: m })),
    },
  });
  const values = total.json<{ data: { results: { value: number }[] } }>().data.results.map((r) => r.value);
  expect(values).toEqual([PLAN.length, spans, 1]);
}

/**
 * Tool usage from the counted spans `byTool` (the calls' latency, errors and last start) on the
 * `server` they name: the store's per tool; for the registry's server also the tool aggregate's
 * trace metrics (operation 3, a group per tool: its workspace) and the server's usage.
 */
export async function expectUsage(
  t: TestApp,
  from: number,
  byTool: Map<string, ReadableSpan[]>,
  server: string | null,
): Promise<void> {
  const scope = { orgId: 'org-a', workspaceIds: ['ws-a-team'], sinceS: from - 60 };
  const tools = ['search_tickets', FAILING];
  const expected = (spans: ReadableSpan[]) => ({
    calls: spans.length,
    errors: spans.filter((s) => s.status.code === SpanStatusCode.ERROR).length,
    p95LatencyMs: percentile95(spans.map(durationMs)),
    lastCalledS: Math.max(...spans.map((s) => s.startTime[0])),
  });
  const usage = await t.traces.toolUsage({ ...scope, tools: tools.map((tool, group) => ({ group, tool, server })) });
  const counted = (tool: string) => byTool.get(tool) ?? [];
  expect(usage).toEqual(
    tools.flatMap((tool, group) => (counted(tool).length === 0 ? [] : [{ group, ...expected(counted(tool)) }])),
  );
  if (byTool.size > 0) expect(usage.map((u) => u.errors)).toEqual([0, PLAN.filter((p) => p === FAILING).length]);
  if (server !== SERVER) return;
  const aggregate = await t.app.inject({
    method: 'POST',
    url: '/mcp/v1/tools/aggregate',
    headers: await t.auth('u-admin'),
    payload: {
      group_by: ['workspace_id'],
      metrics: ['calls', 'error_rate', 'p95_latency_ms'],
      since_unix_seconds: from - 60,
    },
  });
  expect(aggregate.statusCode, aggregate.body).toBe(200);
  const groups = aggregate.json<{ groups: { key: { workspace_id: string }; metrics: object }[] }>().groups;
  const metrics = (tool: string) => {
    const e = expected(byTool.get(tool) ?? []);
    return { calls: e.calls, error_rate: e.errors / e.calls, p95_latency_ms: e.p95LatencyMs };
  };
  expect(Object.fromEntries(groups.map((g) => [g.key.workspace_id, g.metrics]))).toEqual({
    'ws-a-team': metrics('search_tickets'), // tl-3
    'ws-a-other': metrics(FAILING), // tl-4
    'ws-a-sub': { calls: 0, error_rate: null, p95_latency_ms: null }, // tl-2, of another server
  });
  const all = [...byTool.values()].flat();
  expect(await t.traces.serverUsage({ ...scope, servers: [SERVER] })).toEqual([{ server: SERVER, ...expected(all) }]);
}

/** Seals what the trace store holds (both engines' stores have `seal`), so later spans meet sealed ones. */
export async function seal(t: TestApp): Promise<void> {
  await (t.traces as unknown as { seal(): Promise<unknown> }).seal();
}

/**
 * Once every span of both processes is sent: the counts hold as sent, after sealing, and after
 * both processes send everything again (an exporter's retry): tool calls `spans` in all, the
 * server's tools counted from `served`, and nothing counted for a tool of no server.
 */
export async function expectCountedOnce(
  t: TestApp,
  from: number,
  spans: number,
  served: Map<string, ReadableSpan[]>,
  resend: () => Promise<unknown>,
): Promise<void> {
  for (const step of ['sent', 'sealed', 'sent again'] as const) {
    if (step === 'sealed') await seal(t);
    if (step === 'sent again') await resend();
    await expectToolCalls(t, from, spans);
    await expectUsage(t, from, served, SERVER);
    await expectUsage(t, from, new Map(), null);
  }
}
