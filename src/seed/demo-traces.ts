/**
 * Deterministic demo telemetry: traces of skill invocations with model and tool calls, spread in
 * time order over a window ending at `endS`. Used by the first-start seed (modest), by
 * `npm run seed:traces` and by the benchmarks (millions). Same options, same spans.
 *
 * Model calls name their provider (as `gen_ai.provider.name` would) and read from and write to the
 * provider's prompt cache the way each provider does (demo-model-calls.ts). With `agents`, most
 * traces of a skill some agent declares it uses are that agent's: an `invoke_agent` root span over
 * the skill invocation, the agent's model, tools the agent declares, and the agent on every span of
 * the trace (an agent that sends `gen_ai.agent.id` as a resource attribute); a few name an agent
 * the registry does not know, as frameworks do. What the agents add is drawn from a second
 * generator, so that without agents the spans are those of the same seed before agents existed.
 */
import { prng } from '../shared/prng.ts';
import type { SpanRow } from '../store/trace-port.ts';
import { modelCall, UNREGISTERED_AGENTS } from './demo-model-calls.ts';

export interface DemoTraceOptions {
  orgId: string;
  /** Skills with the workspace their traces are recorded in. */
  skills: { id: string; workspaceId: string }[];
  users: string[];
  /** The tools the tool calls name (tool name and MCP server); default a fixed set of MCP servers. */
  tools?: { tool: string; server: string | null }[];
  /** Registry agents: the skills they declare they use, their model and the tools they declare. */
  agents?: DemoAgent[];
  spans: number;
  endS: number;
  days: number;
  seed?: number;
}

interface DemoAgent {
  id: string;
  skills: string[];
  model: string | null;
  tools: { tool: string; server: string | null }[];
}

/** Share of the traces of a skill with agents that an agent runs. */
const AGENT_SHARE = 0.75;
/** Share of the agents' traces that name an agent the registry does not know. */
const UNREGISTERED_SHARE = 0.1;
/** Skills are picked as `skills[floor(rnd() ** SKEW * n)]`: the first ones most often. */
const SKEW = 1.6;

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

/**
 * The agents that declare each skill, and the expected spans per trace: 4 (one invocation, 1-3
 * model calls, 0-2 tool calls), plus the invoke_agent span of the share of traces an agent runs.
 */
function agentsBySkill(o: DemoTraceOptions): { bySkill: Map<string, DemoAgent[]>; spansPerTrace: number } {
  const bySkill = new Map<string, DemoAgent[]>();
  for (const a of o.agents ?? []) for (const skill of a.skills) bySkill.set(skill, [...(bySkill.get(skill) ?? []), a]);
  const n = o.skills.length;
  let agentTraces = 0;
  o.skills.forEach((s, i) => {
    if (bySkill.has(s.id)) agentTraces += ((i + 1) / n) ** (1 / SKEW) - (i / n) ** (1 / SKEW);
  });
  return { bySkill, spansPerTrace: 4 + AGENT_SHARE * agentTraces };
}

/** Yields batches of spans (about `batchSize` each) in start-time order. */
export function* demoSpans(o: DemoTraceOptions, batchSize = 10_000): Generator<SpanRow[]> {
  const rnd = prng(o.seed ?? 7);
  // What agents, providers and caches add comes from a generator of its own (see the header).
  const more = prng(((o.seed ?? 7) ^ 0x5bd1e995) >>> 0);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const mcpTool = ([server, tools]: [string, string[]]): [string, string] => [server, pick(tools)];
  const lognormal = (median: number, sigma: number) =>
    median * Math.exp(sigma * Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd()));
  const begin = o.endS - o.days * 86400;
  const { bySkill, spansPerTrace } = agentsBySkill(o);
  const traces = Math.max(1, Math.round(o.spans / spansPerTrace));
  const step = (o.endS - begin) / traces;
  let batch: SpanRow[] = [];
  let made = 0;
  for (let t = 0; made < o.spans; t++) {
    const skill = o.skills[Math.floor(Math.pow(rnd(), SKEW) * o.skills.length)] as { id: string; workspaceId: string };
    const version = 1 + Math.floor(rnd() * 3);
    const startS = Math.min(o.endS - 1, Math.floor(begin + t * step + rnd() * step));
    const traceId = hex(rnd, 32);
    const user = pick(o.users);
    // The agent running the trace: one of those declaring the skill, the first ones most often.
    const declaring = bySkill.get(skill.id) ?? [];
    const agent =
      declaring.length > 0 && more() < AGENT_SHARE
        ? (declaring[Math.floor(more() ** 2.5 * declaring.length)] as DemoAgent)
        : null;
    const agentName =
      agent === null
        ? null
        : more() < UNREGISTERED_SHARE
          ? (UNREGISTERED_AGENTS[Math.floor(more() * UNREGISTERED_AGENTS.length)] as string)
          : agent.id;
    const common = {
      org_id: o.orgId,
      workspace_id: skill.workspaceId,
      trace_id: traceId,
      harness: pick(HARNESSES),
      command: pick(COMMANDS),
      user,
      session: `sess-${user}-${Math.floor(startS / 3600)}`,
      provider: null,
      agent: agentName,
      cache_read_tokens: 0,
      cache_creation_tokens: 0,
      mcp_request: null,
      mcp_side: null,
    };
    const rootId = hex(rnd, 16);
    const failed = rnd() < 0.03 + 0.02 * version;
    const invocation: SpanRow = {
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
    };
    const spans: SpanRow[] = [invocation];
    if (agentName !== null && made + 2 <= o.spans) {
      const agentSpanId = hex(more, 16);
      invocation.parent_span_id = agentSpanId;
      spans.unshift({
        ...invocation,
        span_id: agentSpanId,
        parent_span_id: null,
        name: `invoke_agent ${agentName}`,
        duration_ms: invocation.duration_ms + Math.round(200 + more() * 600),
        category: 'other',
        skill: null,
        skill_version: null,
      });
    }
    const modelCalls = 1 + Math.floor(rnd() * 3);
    for (let m = 0; m < modelCalls && made + spans.length < o.spans; m++) {
      const picked = pick(MODELS);
      const input = 200 + Math.floor(rnd() * 3000);
      const output = 50 + Math.floor(rnd() * 800);
      const call = modelCall(agent?.model ?? picked, input, output, more);
      spans.push({
        ...common,
        ...call,
        span_id: hex(rnd, 16),
        parent_span_id: rootId,
        name: `chat ${call.model}`,
        start_s: startS,
        duration_ms: Math.round(lognormal(700, 0.5)),
        category: 'model_call',
        skill: null,
        skill_version: null,
        mcp: null,
        tool: null,
        is_error: false,
      });
    }
    const toolCalls = Math.floor(rnd() * 3);
    for (let c = 0; c < toolCalls && made + spans.length < o.spans; c++) {
      let [server, tool] = o.tools !== undefined && o.tools.length > 0 ? toolOf(pick(o.tools)) : mcpTool(pick(MCP));
      if (agent !== null && agent.tools.length > 0)
        [server, tool] = toolOf(agent.tools[Math.floor(more() * agent.tools.length)] as DemoAgent['tools'][number]);
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
