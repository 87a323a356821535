/**
 * Deterministic demo telemetry: traces of skill invocations with model and tool calls, spread in
 * time order over a window ending at `endS`. Used by the first-start seed (modest), by
 * `npm run seed:traces` and by the benchmarks (millions). Same options, same spans.
 */
import { prng } from '../shared/prng.ts';
import type { SpanRow } from '../store/trace-port.ts';
import { priceOf } from '../otlp/prices.ts';

export interface DemoTraceOptions {
  orgId: string;
  /** Skills with the workspace their traces are recorded in. */
  skills: { id: string; workspaceId: string }[];
  users: string[];
  /** The tools the tool calls name (tool name and MCP server); default a fixed set of MCP servers. */
  tools?: { tool: string; server: string | null }[];
  spans: number;
  endS: number;
  days: number;
  seed?: number;
}

const HARNESSES = ['claude-code', 'cursor', 'custom-agent', 'slack-bot'];
const COMMANDS = ['/summarize', '/review', '/plan', '/triage', '/ask'];
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4', 'claude-haiku-4', 'gemini-2.5-pro'];
const MCP: [string, string[]][] = [
  ['github', ['create_issue', 'list_pulls', 'get_file']],
  ['jira', ['search_tickets', 'update_ticket']],
  ['slack', ['post_message', 'read_channel']],
  ['postgres', ['run_query']],
  ['gdrive', ['search_files', 'read_file']],
];

const toolOf = (t: { tool: string; server: string | null }): [string | null, string] => [t.server, t.tool];

const hex = (rnd: () => number, chars: number) => {
  let s = '';
  while (s.length < chars)
    s += Math.floor(rnd() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return s.slice(0, chars);
};

/** Yields batches of spans (about `batchSize` each) in start-time order. */
export function* demoSpans(o: DemoTraceOptions, batchSize = 10_000): Generator<SpanRow[]> {
  const rnd = prng(o.seed ?? 7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const mcpTool = ([server, tools]: [string, string[]]): [string, string] => [server, pick(tools)];
  const lognormal = (median: number, sigma: number) =>
    median * Math.exp(sigma * Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd()));
  const begin = o.endS - o.days * 86400;
  // About 4 spans a trace: one invocation, 1-3 model calls, 0-2 tool calls.
  const traces = Math.max(1, Math.round(o.spans / 4));
  const step = (o.endS - begin) / traces;
  let batch: SpanRow[] = [];
  let made = 0;
  for (let t = 0; made < o.spans; t++) {
    const skill = o.skills[Math.floor(Math.pow(rnd(), 1.6) * o.skills.length)] as { id: string; workspaceId: string };
    const version = 1 + Math.floor(rnd() * 3);
    const startS = Math.min(o.endS - 1, Math.floor(begin + t * step + rnd() * step));
    const traceId = hex(rnd, 32);
    const user = pick(o.users);
    const common = {
      org_id: o.orgId,
      workspace_id: skill.workspaceId,
      trace_id: traceId,
      harness: pick(HARNESSES),
      command: pick(COMMANDS),
      user,
      session: `sess-${user}-${Math.floor(startS / 3600)}`,
      provider: null,
      agent: null,
      cache_read_tokens: 0,
      cache_creation_tokens: 0,
      mcp_request: null,
      mcp_side: null,
    };
    const rootId = hex(rnd, 16);
    const failed = rnd() < 0.03 + 0.02 * version;
    const spans: SpanRow[] = [
      {
        ...common,
        span_id: rootId,
        parent_span_id: null,
        name: `invoke_skill ${skill.id}`,
        start_s: startS,
        duration_ms: Math.round(lognormal(1800 + 400 * version, 0.6)),
        category: 'skill_invocation',
        skill: skill.id,
        skill_version: version,
        mcp: null,
        tool: null,
        model: null,
        tokens: 0,
        cost: 0,
        is_error: failed,
      },
    ];
    const modelCalls = 1 + Math.floor(rnd() * 3);
    for (let m = 0; m < modelCalls && made + spans.length < o.spans; m++) {
      const model = pick(MODELS);
      const input = 200 + Math.floor(rnd() * 3000);
      const output = 50 + Math.floor(rnd() * 800);
      spans.push({
        ...common,
        span_id: hex(rnd, 16),
        parent_span_id: rootId,
        name: `chat ${model}`,
        start_s: startS,
        duration_ms: Math.round(lognormal(700, 0.5)),
        category: 'model_call',
        skill: null,
        skill_version: null,
        mcp: null,
        tool: null,
        model,
        tokens: input + output,
        cost: priceOf(model, input, output),
        is_error: false,
      });
    }
    const toolCalls = Math.floor(rnd() * 3);
    for (let c = 0; c < toolCalls && made + spans.length < o.spans; c++) {
      const [server, tool] = o.tools !== undefined && o.tools.length > 0 ? toolOf(pick(o.tools)) : mcpTool(pick(MCP));
      spans.push({
        ...common,
        span_id: hex(rnd, 16),
        parent_span_id: rootId,
        name: `tools/call ${server ?? tool}`,
        start_s: startS,
        duration_ms: Math.round(lognormal(250, 0.8)),
        category: 'tool_call',
        skill: null,
        skill_version: null,
        mcp: server,
        tool,
        model: null,
        tokens: 0,
        cost: 0,
        is_error: rnd() < 0.04,
      });
    }
    made += spans.length;
    batch.push(...spans);
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
