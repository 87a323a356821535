/**
 * The OTLP requests the ingestion benchmarks send: `count` spans of mixed categories (skill
 * invocations, chats, tool calls) with nine attributes each and one resource attribute, random
 * trace and span ids; or `count` log records of Claude Code events (skill activations, API
 * requests, tool results) with a random prompt id each; protobuf, or OTLP/JSON (hex ids).
 */
import crypto from 'node:crypto';
import { encodeExportRequest } from '../src/otlp/traces/decode.ts';
import { encodeLogsRequest } from '../src/otlp/logs/decode.ts';
import { attr, attrs, otlpLogsBody, otlpTraceBody } from '../test/fixtures/otlp-body.ts';

/**
 * A request body whose spans get new ids for every request: `stamp(n)` writes `n` into the last four
 * bytes of every trace and span id (in place: the caller must not stamp a body while it is being sent),
 * so that no span id repeats across requests, as with real exporters.
 */
export function stampableBody(
  i: number,
  count: number,
  json: boolean,
  signal: 'traces' | 'logs' = 'traces',
): { body: Buffer; stamp(n: number): void } {
  const ids: Buffer[] = [];
  const body = signal === 'traces' ? benchBody(i, count, json, ids) : benchLogsBody(i, count, json, ids);
  // Log records carry their ids as hex text in both encodings.
  const hex = json || signal === 'logs';
  const offsets = ids.map((id) => {
    const needle = hex ? Buffer.from(id.toString('hex')) : id;
    const at = body.indexOf(needle);
    if (at < 0) throw new Error('an id is missing from its body');
    return { end: at + needle.length };
  });
  return {
    body,
    stamp(n: number) {
      const tail = Buffer.alloc(4);
      tail.writeUInt32BE(n >>> 0);
      const text = Buffer.from(tail.toString('hex'));
      for (const { end } of offsets) (hex ? text : tail).copy(body, end - (hex ? 8 : 4));
    },
  };
}

export function benchBody(i: number, count: number, json: boolean, ids: Buffer[] = []): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: count }, (_, j) => {
    const traceId = crypto.randomBytes(16);
    const spanId = crypto.randomBytes(8);
    ids.push(traceId, spanId);
    const kind = j % 4;
    const attributes = attrs({
      'gen_ai.operation.name': kind === 0 ? 'invoke_skill' : kind === 1 ? 'chat' : 'execute_tool',
      'skill.id': 'skill-0001',
      'skill.version': { intValue: 1 + (j % 3) },
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': { intValue: 100 + j },
      'gen_ai.usage.output_tokens': { intValue: 20 },
      'user.id': `user-${i % 7}`,
      'session.id': `s-${i}`,
      'gen_ai.tool.name': 'create_issue',
    });
    const start = now + BigInt(j) * 1000n;
    return {
      traceId: json ? traceId.toString('hex') : traceId,
      spanId: json ? spanId.toString('hex') : spanId,
      name: `span-${j}`,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + 5_000_000n),
      attributes,
    };
  });
  const message = otlpTraceBody({ resource: attrs({ 'service.name': 'bench' }), spans });
  return json ? Buffer.from(JSON.stringify(message)) : encodeExportRequest(message);
}

/** Claude Code events as its exporter sends them: body = event name, values as strings. */
export function benchLogsBody(i: number, count: number, json: boolean, ids: Buffer[] = []): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const records = Array.from({ length: count }, (_, j) => {
    const prompt = crypto.randomBytes(8);
    ids.push(prompt);
    const kind = j % 4;
    const common = [
      attr('prompt.id', prompt.toString('hex')),
      attr('session.id', `s-${i}`),
      attr('user.id', `user-${i % 7}`),
      attr('event.timestamp', new Date().toISOString()),
    ];
    const specific =
      kind === 0
        ? [attr('event.name', 'skill_activated'), attr('skill.name', 'summarize')]
        : kind === 1
          ? [
              attr('event.name', 'api_request'),
              attr('model', 'claude-sonnet-4-5'),
              attr('input_tokens', String(100 + j)),
              attr('output_tokens', '20'),
              attr('cost_usd', '0.0012'),
              attr('duration_ms', '900'),
            ]
          : [
              attr('event.name', 'tool_result'),
              attr('tool_name', 'Read'),
              attr('success', 'true'),
              attr('duration_ms', '12'),
            ];
    const name = ['skill_activated', 'api_request', 'tool_result', 'tool_result'][kind] as string;
    return {
      timeUnixNano: String(now + BigInt(j) * 1000n),
      body: { stringValue: `claude_code.${name}` },
      attributes: [...common, ...specific],
    };
  });
  const message = otlpLogsBody({
    resource: attrs({ 'service.name': 'claude-code' }),
    scope: { name: 'com.anthropic.claude_code.events' },
    records,
  });
  return json ? Buffer.from(JSON.stringify(message)) : encodeLogsRequest(message);
}
