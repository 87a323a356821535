/**
 * The OTLP/HTTP request the ingestion benchmarks send: `count` spans of mixed categories (skill
 * invocations, chats, tool calls) with nine attributes each and one resource attribute, random
 * trace and span ids; protobuf, or OTLP/JSON with hex ids.
 */
import crypto from 'node:crypto';
import { encodeExportRequest } from '../src/traces/otlp-decode.ts';

/**
 * A request body whose spans get new ids for every request: `stamp(n)` writes `n` into the last four
 * bytes of every trace and span id (in place: the caller must not stamp a body while it is being sent),
 * so that no span id repeats across requests, as with real exporters.
 */
export function stampableBody(i: number, count: number, json: boolean): { body: Buffer; stamp(n: number): void } {
  const ids: Buffer[] = [];
  const body = benchBody(i, count, json, ids);
  const offsets = ids.map((id) => {
    const needle = json ? Buffer.from(id.toString('hex')) : id;
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
      for (const { end } of offsets) (json ? text : tail).copy(body, end - (json ? 8 : 4));
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
