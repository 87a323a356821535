/**
 * The OTLP/HTTP request the ingestion benchmarks send: `count` spans of mixed categories (skill
 * invocations, chats, tool calls) with nine attributes each and one resource attribute, random
 * trace and span ids; protobuf, or OTLP/JSON with hex ids.
 */
import crypto from 'node:crypto';
import { encodeExportRequest } from '../src/traces/otlp-decode.ts';

export function benchBody(i: number, count: number, json: boolean): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: count }, (_, j) => {
    const traceId = crypto.randomBytes(16);
    const spanId = crypto.randomBytes(8);
    const kind = j % 4;
    const attrs = [
      {
        key: 'gen_ai.operation.name',
        value: { stringValue: kind === 0 ? 'invoke_skill' : kind === 1 ? 'chat' : 'execute_tool' },
      },
      { key: 'skill.id', value: { stringValue: 'skill-0001' } },
      { key: 'skill.version', value: { intValue: 1 + (j % 3) } },
      { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
      { key: 'gen_ai.usage.input_tokens', value: { intValue: 100 + j } },
      { key: 'gen_ai.usage.output_tokens', value: { intValue: 20 } },
      { key: 'user.id', value: { stringValue: `user-${i % 7}` } },
      { key: 'session.id', value: { stringValue: `s-${i}` } },
      { key: 'gen_ai.tool.name', value: { stringValue: 'create_issue' } },
    ];
    const start = now + BigInt(j) * 1000n;
    return {
      traceId: json ? traceId.toString('hex') : traceId,
      spanId: json ? spanId.toString('hex') : spanId,
      name: `span-${j}`,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + 5_000_000n),
      attributes: attrs,
    };
  });
  const message = {
    resourceSpans: [
      { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] }, scopeSpans: [{ spans }] },
    ],
  };
  return json ? Buffer.from(JSON.stringify(message)) : encodeExportRequest(message);
}
