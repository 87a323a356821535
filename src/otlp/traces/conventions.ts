/**
 * The attribute names a span is read by, per convention, and which wins when a span carries several
 * (docs/send-telemetry.md has the table users read). For each value the names are tried in the
 * order listed, first on the span's attributes, then on its resource; the first non-empty one wins:
 *
 * 1. OpenTelemetry GenAI and MCP semantic conventions as of `@opentelemetry/semantic-conventions`
 *    1.45 (incubating): `gen_ai.provider.name`, `gen_ai.usage.input_tokens`, …
 * 2. Their older names, still emitted by instrumentations that have not moved (pre-1.36
 *    `gen_ai.system`, `gen_ai.usage.prompt_tokens`/`completion_tokens`).
 * 3. OpenInference's names (Arize's instrumentations: `llm.model_name`, `llm.token_count.*`,
 *    `tool.name`, `openinference.span.kind`).
 * 4. Traceloop's (OpenLLMetry, `@traceloop/ai-semantic-conventions` `SpanAttributes`): a span of
 *    `traceloop.span.kind` `tool` is a tool call of `traceloop.entity.name` (the MCP client spans of
 *    `@traceloop/instrumentation-mcp`, which carry no other name of the tool).
 * 5. Claude Code's beta trace spans (`claude_code.llm_request`, `claude_code.tool`), read by span
 *    name since they carry Claude Code's own attribute names (`input_tokens`, `tool_name`, …).
 *
 * Input tokens: OpenTelemetry's and OpenInference's prompt counts include the cached ones (the
 * cache counts are parts of them); Claude Code counts them apart, so its input is the sum. A span
 * whose cache counts exceed its input count is read the Claude Code way (an instrumentation that
 * reports uncached input only), so that its cost is not charged negative input.
 */
import type { SpanCategory } from '../../store/trace-port.ts';
import type { Attributes, AttrValue, DecodedSpan } from '../types.ts';

const PROVIDER = ['gen_ai.provider.name', 'gen_ai.system', 'llm.provider', 'llm.system'];
const MODEL = ['gen_ai.response.model', 'gen_ai.request.model', 'llm.model_name'];
const INPUT = ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.token_count.prompt'];
const OUTPUT = ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens', 'llm.token_count.completion'];
const CACHE_READ = ['gen_ai.usage.cache_read.input_tokens', 'llm.token_count.prompt_details.cache_read'];
const CACHE_CREATION = ['gen_ai.usage.cache_creation.input_tokens', 'llm.token_count.prompt_details.cache_write'];
const TOOL = ['gen_ai.tool.name', 'tool.name'];
/** Traceloop's span kind and entity name (`SpanAttributes.TRACELOOP_SPAN_KIND`, `TRACELOOP_ENTITY_NAME`). */
const TRACELOOP_KIND = 'traceloop.span.kind';
const TRACELOOP_ENTITY = 'traceloop.entity.name';

/** `gen_ai.operation.name` values of a model call (semconv 1.45). */
const MODEL_OPS = new Set(['chat', 'text_completion', 'generate_content', 'embeddings']);
/** `openinference.span.kind` values of a model call and of a tool call. */
const OPENINFERENCE_MODEL_KINDS = new Set(['LLM', 'EMBEDDING']);

/** The first non-empty value of `keys`, span attributes before resource attributes. */
export function first(span: Pick<DecodedSpan, 'attributes' | 'resource'>, ...keys: string[]): AttrValue {
  for (const source of [span.attributes, span.resource] as Attributes[]) {
    for (const k of keys) {
      const v = source.get(k);
      if (v !== undefined && v !== null && v !== '') return v;
    }
  }
  return null;
}

export const text = (v: AttrValue): string | null => (v === null ? null : String(v));
export const number = (v: AttrValue): number =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : 0;

/** What a span says about its model call, tool and category, whatever convention it follows. */
export interface Reading {
  category: Exclude<SpanCategory, 'skill_invocation'> | 'invoke_skill' | null;
  provider: string | null;
  model: string | null;
  /** Every input token, cached ones included. */
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
  tool: string | null;
  /** An error the attributes name (beyond the span's status). */
  error: boolean;
}

/** Claude Code's beta trace spans (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA), by span name. */
function claudeCode(span: DecodedSpan): Reading | null {
  const a = span.attributes;
  const get = (k: string) => a.get(k) ?? null;
  if (span.name === 'claude_code.llm_request') {
    const cacheRead = number(get('cache_read_tokens'));
    const cacheCreation = number(get('cache_creation_tokens'));
    return {
      category: 'model_call',
      provider: text(first(span, ...PROVIDER)),
      model: text(get('model')) ?? text(first(span, ...MODEL)),
      input: number(get('input_tokens')) + cacheRead + cacheCreation,
      output: number(get('output_tokens')),
      cacheRead,
      cacheCreation,
      tool: null,
      error: get('error') !== null,
    };
  }
  if (span.name === 'claude_code.tool') {
    const none = { provider: null, model: null, input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
    // Documented without an error attribute: a failed tool is known by the span's status.
    return { ...none, category: 'tool_call', tool: text(get('tool_name')), error: false };
  }
  return null;
}

function categoryOf(span: DecodedSpan): Reading['category'] {
  const op = text(span.attributes.get('gen_ai.operation.name') ?? null);
  if (op === 'invoke_skill') return 'invoke_skill';
  if (op === 'execute_tool' || span.attributes.get('mcp.method.name') === 'tools/call') return 'tool_call';
  if (op !== null && MODEL_OPS.has(op)) return 'model_call';
  if (op !== null) return 'other';
  const kind = text(span.attributes.get('openinference.span.kind') ?? null)?.toUpperCase() ?? null;
  if (kind === 'TOOL') return 'tool_call';
  if (kind !== null && OPENINFERENCE_MODEL_KINDS.has(kind)) return 'model_call';
  if (kind !== null) return 'other';
  return traceloopTool(span) ? 'tool_call' : null;
}

const traceloopTool = (span: DecodedSpan) => span.attributes.get(TRACELOOP_KIND) === 'tool';

/** The span kinds of the two sides of an MCP request (OTLP Span.SpanKind). */
const SERVER_KIND = 2;
const CLIENT_KIND = 3;

/**
 * The MCP request a span is one side of (MCP semantic conventions: `mcp.session.id` and
 * `jsonrpc.request.id` on the client span, kind CLIENT, and on the server span, kind SERVER), or
 * null when it names none. The stores pair the two sides of one `tools/call` by it when trace
 * context was not propagated (store/call-pairs.ts).
 */
export function mcpRequest(span: DecodedSpan): { session: string; id: string; side: 'client' | 'server' } | null {
  const side = span.kind === CLIENT_KIND ? 'client' : span.kind === SERVER_KIND ? 'server' : null;
  const session = text(span.attributes.get('mcp.session.id') ?? null);
  const id = text(span.attributes.get('jsonrpc.request.id') ?? null);
  if (side === null || session === null || session === '' || id === null || id === '') return null;
  return { session, id, side };
}

/**
 * The MCP server a span names: `mcp.server.name`; else, on a span of an MCP method, the server's
 * own name on its server span (kind SERVER: the resource's `service.name`, the process that serves
 * the call) or `server.address` on the client's.
 */
export function mcpServer(span: DecodedSpan): string | null {
  const named = text(first(span, 'mcp.server.name'));
  if (named !== null || !span.attributes.has('mcp.method.name')) return named;
  return span.kind === SERVER_KIND
    ? text(span.resource.get('service.name') ?? null)
    : text(first(span, 'server.address'));
}

/** Reads a span by the conventions above. */
export function readSpan(span: DecodedSpan): Reading {
  const cc = claudeCode(span);
  if (cc !== null) return cc;
  const cacheRead = number(first(span, ...CACHE_READ));
  const cacheCreation = number(first(span, ...CACHE_CREATION));
  const reported = number(first(span, ...INPUT));
  return {
    category: categoryOf(span),
    provider: text(first(span, ...PROVIDER)),
    model: text(first(span, ...MODEL)),
    input: cacheRead + cacheCreation > reported ? reported + cacheRead + cacheCreation : reported,
    output: number(first(span, ...OUTPUT)),
    cacheRead,
    cacheCreation,
    tool: text(first(span, ...TOOL)) ?? (traceloopTool(span) ? text(first(span, TRACELOOP_ENTITY)) : null),
    error: first(span, 'error.type') !== null,
  };
}
