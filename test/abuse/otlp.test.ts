/**
 * Abuse of the OTLP receiver, through a listening server: a gzip
 * bomb, more spans than a request may carry, oversized values, and spans that claim statistics the
 * sender has no right to. Each is answered at once with a bounded answer and changes nothing else.
 */
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { abuseBundle, otlpBody, otlpSpan } from './fixture.ts';

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await startTestApp({ bundle: abuseBundle() });
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await t.close();
});

const MiB = 1024 * 1024;
const rssMiB = () => process.memoryUsage().rss / MiB;

async function post(body: Buffer | string, headers: Record<string, string>, gzip = false) {
  const started = Date.now();
  const res = await fetch(`${url}/v1/traces`, {
    method: 'POST',
    body: gzip ? zlib.gzipSync(body) : body,
    headers: { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}), ...headers },
  });
  return { status: res.status, ms: Date.now() - started, text: await res.text() };
}

/** The admin's totals of a skill over the last week. */
async function totals(skill: string) {
  const now = Math.floor(Date.now() / 1000);
  const res = await t.app.inject({
    method: 'POST',
    url: `/skill/v1/skills/${skill}/traces/stats/query`,
    headers: await t.auth('u-admin'),
    payload: {
      start_time_unix_seconds: now - 7 * 86400,
      end_time_unix_seconds: now + 3600,
      request_type: 'scalar',
      queries: [
        { name: 'spans', measure: 'spans' },
        { name: 'cost', measure: 'cost' },
        { name: 'tokens', measure: 'tokens' },
        { name: 'errors', measure: 'error_rate' },
      ],
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return Object.fromEntries(
    res.json().data.results.map((r: { query_name: string; value: number }) => [r.query_name, r.value]),
  );
}

describe('a gzip bomb and a flood of spans', () => {
  it('refuses 61 KB of gzip that inflates to 60 MB of brackets with 400 and an OTLP Status, without growing memory', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(60 * MiB, '['), { level: 9 });
    expect(bomb.length).toBeLessThan(128 * 1024);
    const before = rssMiB();
    const res = await post(bomb, { ...(await t.auth('u-admin')), 'content-encoding': 'gzip' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual({ code: 3, message: `the body inflates to more than ${16 * MiB} bytes` });
    // Before the fix: 33 s with the event loop held, RSS 2.2 GB.
    expect(res.ms).toBeLessThan(5000);
    expect(rssMiB() - before).toBeLessThan(100);
  });

  it('refuses a body of brackets nested deeper than JSON allows, under the size bound, before parsing it', async () => {
    const res = await post(Buffer.alloc(8 * MiB, '['), await t.auth('u-admin'), true);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(/nests arrays and objects deeper than 64 levels/);
  });

  it('answers a viewer 403 before reading, inflating or decoding the body', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(60 * MiB, '['), { level: 9 });
    const res = await fetch(`${url}/v1/traces`, {
      method: 'POST',
      body: bomb,
      headers: { ...(await t.auth('u-viewer')), 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('access_denied');
  });

  it('refuses a request of more than 10,000 spans as a whole, storing none', async () => {
    const before = await t.traces.countSpans();
    const spans = Array.from({ length: 12_000 }, () => otlpSpan({ 'skill.id': 'sk-1' }));
    const body = Buffer.from(otlpBody(spans));
    const res = await post(body, await t.auth('u-admin'), true);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toBe(
      'the request carries more than 10000 spans; send at most 10000 per request',
    );
    expect(await t.traces.countSpans()).toBe(before);
  });
});

describe('the bounds leave room for real telemetry', () => {
  it('stores a request at the limits: 10,000 spans in a body of almost 16 MiB', async () => {
    const before = await t.traces.countSpans();
    const attrs = Object.fromEntries(Array.from({ length: 12 }, (_, k) => [`app.attribute.${k}`, 'v'.repeat(35)]));
    const body = otlpBody(
      Array.from({ length: 10_000 }, (_, i) =>
        otlpSpan({ ...attrs, 'skill.id': 'sk-1', 'gen_ai.tool.name': `tool-${i}`, 'user.id': 'é'.repeat(128) }),
      ),
    );
    expect(Buffer.byteLength(body)).toBeGreaterThan(15 * MiB);
    expect(Buffer.byteLength(body)).toBeLessThan(16 * MiB);
    const res = await post(body, await t.auth('u-admin'), true);
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text)).toEqual({});
    expect(await t.traces.countSpans()).toBe(before + 10_000);
  });
});

describe('oversized values', () => {
  it('refuses a 50 MB attribute value (51 KB of gzip) as a body over the bound', async () => {
    const body = otlpBody([otlpSpan({ 'gen_ai.tool.name': 'x'.repeat(50 * MiB) })]);
    const before = rssMiB();
    const res = await post(body, await t.auth('u-admin'), true);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(/inflates to more than/);
    expect(rssMiB() - before).toBeLessThan(150);
  });

  it('rejects spans whose stored values pass 256 bytes, keeping the others', async () => {
    const before = await t.traces.countSpans();
    const long = 'é'.repeat(129); // 258 bytes in UTF-8, 129 characters
    const res = await post(
      otlpBody(
        [
          otlpSpan({ 'gen_ai.tool.name': long }),
          otlpSpan({ 'user.id': long }),
          otlpSpan({ 'session.id': 'ok', 'gen_ai.request.model': 'm'.repeat(300) }),
          otlpSpan({ 'gen_ai.tool.name': 'é'.repeat(128) }),
        ],
        { 'service.name': 'h' },
      ),
      await t.auth('u-admin'),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({
      partialSuccess: {
        rejectedSpans: 3,
        errorMessage: '3 span(s): an attribute value longer than 256 bytes (span name: 1024)',
      },
    });
    expect(await t.traces.countSpans()).toBe(before + 1);
  });
});

describe('statistics poisoning', () => {
  it('a span counts for a skill only when its sender can read the skill', async () => {
    const victim = await totals('sk-1');
    const poison = (skill: Record<string, string>) =>
      otlpSpan({ ...skill, 'gen_ai.operation.name': 'invoke_skill', 'gen_ai.usage.cost': 1000 }, undefined, 2);
    const res = await post(
      otlpBody([
        poison({ 'skill.id': 'sk-1' }),
        poison({ 'skill.name': 'summarize' }),
        poison({ 'skill.id': 'sk-b1' }),
        poison({ 'skill.id': 'no-such-skill' }),
        otlpSpan({ 'skill.id': 'sk-2', 'gen_ai.operation.name': 'invoke_skill', 'gen_ai.usage.cost': 2.5 }),
      ]),
      await t.auth('u-editor'),
    );
    expect(res.status).toBe(200);
    const { partialSuccess } = JSON.parse(res.text);
    expect(partialSuccess.rejectedSpans).toBe(4);
    expect(partialSuccess.errorMessage).toContain(
      '1 span(s): skill "sk-1" does not exist or the sender cannot read it',
    );
    expect(partialSuccess.errorMessage).toContain(
      '1 span(s): skill named "summarize" does not exist or the sender cannot read it',
    );
    expect(partialSuccess.errorMessage).toContain(
      '1 span(s): skill "sk-b1" does not exist or the sender cannot read it',
    );
    expect(await totals('sk-1')).toEqual(victim);
    expect(await totals('sk-2')).toMatchObject({ spans: 1, cost: 2.5 });
  });

  it('an agent service account can claim only the skills of its own workspace subtree', async () => {
    const key = { authorization: `Bearer ${TEST_API_KEY}` };
    const res = await post(
      otlpBody([otlpSpan({ 'skill.id': 'sk-1' }), otlpSpan({ 'skill.id': 'sk-2', 'gen_ai.usage.cost': 1 })]),
      key,
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).partialSuccess).toEqual({
      rejectedSpans: 1,
      errorMessage: '1 span(s): skill "sk-1" does not exist or the sender cannot read it',
    });
  });

  it('rejects token counts, costs and durations outside their ranges, with the range in the reason', async () => {
    const before = await totals('sk-2');
    const res = await post(
      otlpBody([
        otlpSpan({ 'skill.id': 'sk-2', 'gen_ai.usage.input_tokens': 9_007_199_254_740_000 }),
        otlpSpan({ 'skill.id': 'sk-2', 'gen_ai.usage.output_tokens': -5 }),
        otlpSpan({ 'skill.id': 'sk-2', 'gen_ai.usage.cost': 1e6 }),
        otlpSpan({ 'skill.id': 'sk-2', 'gen_ai.usage.cost': -1 }),
        {
          ...otlpSpan({ 'skill.id': 'sk-2' }),
          endTimeUnixNano: String(
            BigInt(Math.floor(Date.now() / 1000) - 60) * 1_000_000_000n + 31n * 86_400_000_000_000n,
          ),
        },
      ]),
      await t.auth('u-editor'),
    );
    const { partialSuccess } = JSON.parse(res.text);
    expect(partialSuccess.rejectedSpans).toBe(5);
    expect(partialSuccess.errorMessage.split('; ').sort()).toEqual([
      '1 span(s): duration out of range (at most 2,592,000 s)',
      '2 span(s): cost out of range (0 to 10,000 USD per span)',
      '2 span(s): token counts out of range (0 to 100,000,000 per span)',
    ]);
    expect(await totals('sk-2')).toEqual(before);
  });

  it('refuses spans that start more than a day ahead of the receiver (kept forever, outside every time partition)', async () => {
    const before = await totals('sk-2');
    const now = Math.floor(Date.now() / 1000);
    const res = await post(
      otlpBody([
        otlpSpan({ 'skill.id': 'sk-2' }, now + 2 * 86_400),
        otlpSpan({ 'skill.id': 'sk-2' }, 9_000_000_000),
        otlpSpan({ 'skill.id': 'sk-2' }, now + 600),
      ]),
      await t.auth('u-editor'),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).partialSuccess).toEqual({
      rejectedSpans: 2,
      errorMessage: "2 span(s): a start time more than a day ahead of the receiver's clock",
    });
    expect((await totals('sk-2')).spans).toBe(Number(before.spans) + 1);
  });
});
