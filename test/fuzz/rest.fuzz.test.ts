/**
 * Property-based fuzzing of every REST operation: generated bodies, query strings, headers and
 * content types. Every response is a success of the operation's shape or a problem body whose
 * `status` equals the HTTP status and whose `code` belongs to that status in the catalogue; never
 * a 500; and rejected requests change nothing. FUZZ_RUNS sets the runs per operation
 * (`npm run test:fuzz` runs the full campaign).
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeExportRequest } from '../../src/otlp/traces/decode.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { decodeProtobufReference } from '../fixtures/otlp-reference-decoder.ts';
import { DESIGN_ONLY, SPEC_STATUS } from '../helpers/spec-errors.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

let t: TestApp;
let headers: Record<string, string>;
let snapshot: string;

async function stateOf(): Promise<string> {
  const h = headers;
  const urls = ['/mcp/v1/tools?limit=200', '/registry/v1/users?limit=200', '/registry/v1/workspaces/ws-a/export'];
  const bodies = await Promise.all(
    urls.map((url) => t.app.inject({ method: 'GET', url, headers: h }).then((r) => r.body)),
  );
  return bodies.join('\n');
}

beforeAll(async () => {
  // Limits are tested elsewhere; here they would only turn late requests into 429s.
  t = await startTestApp({ env: { RATE_LIMIT_PER_MIN: '10000000' } });
  headers = await t.auth('u-admin');
  snapshot = await stateOf();
});
afterAll(async () => {
  await t.close();
});

interface Response {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

function checkResponse(res: Response, successKeys: string[]): void {
  expect(res.statusCode, res.body.slice(0, 300)).not.toBe(500);
  if (res.statusCode === 200) {
    const body = JSON.parse(res.body) as Record<string, unknown> | unknown[];
    if (!Array.isArray(body)) for (const k of successKeys) expect(body).toHaveProperty(k);
    return;
  }
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(res.body) as { code: string; status: number; title: string; detail: string };
  expect(problem.status).toBe(res.statusCode);
  // The status the specification's table (not the project's catalogue) gives the code.
  const specified = SPEC_STATUS.get(problem.code) ?? DESIGN_ONLY.get(problem.code);
  expect(specified, `code ${problem.code} is in the specification`).toBeDefined();
  expect(specified).toBe(res.statusCode);
  expect(typeof problem.detail).toBe('string');
  expect(problem.detail).not.toMatch(/SELECT|sqlite|stack|at .*\.ts:\d+/i);
}

const asCount = (v: unknown): number => Number(v);

/** Text of any Unicode: astral characters, control characters and lone surrogates included. */
const anyText = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string());

const jsonish = fc.oneof(
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string(),
  fc.constant(''),
  fc.constant('{"query": "x", "limit": 5}'),
);

const searchBody = fc.record(
  {
    query: fc.oneof(anyText, fc.integer(), fc.constant(null)),
    strategy: fc.oneof(fc.constantFrom('keyword', 'prefix', 'exact', 'fuzzy'), fc.string()),
    sorts: fc.oneof(fc.array(fc.constantFrom('name', '-name', 'relevance', '-created_at', 'bogus', '')), fc.string()),
    limit: fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.double(), fc.string()),
    offset: fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.string()),
    cursor: fc.oneof(fc.string(), fc.base64String()),
    workspace_id: fc.oneof(fc.constantFrom('ws-a', 'ws-b', 'ws-a-team', 'nope'), fc.string()),
    extra: fc.anything(),
  },
  { requiredKeys: [] },
);

const aggregateBody = fc.record(
  {
    group_by: fc.oneof(fc.array(fc.constantFrom('server_id', 'owner', 'is_system', 'colour')), fc.anything()),
    filters: fc.oneof(
      fc.dictionary(
        fc.constantFrom('server_id', 'owner', 'is_system', 'nope'),
        fc.oneof(fc.string(), fc.boolean(), fc.array(fc.string())),
      ),
      fc.anything(),
    ),
    metrics: fc.oneof(fc.array(fc.constantFrom('count', 'servers', 'latest_updated_at', 'nope')), fc.anything()),
    limit: fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.string()),
    offset: fc.integer({ min: -5, max: 100 }),
    workspace_id: fc.oneof(fc.constantFrom('ws-a', 'ws-b'), fc.string()),
  },
  { requiredKeys: [] },
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/merge-patch+json',
  'multipart/form-data; boundary=x',
  undefined,
);

const queryString = fc
  .dictionary(
    fc.oneof(fc.constantFrom('limit', 'offset', 'cursor'), fc.string({ maxLength: 8 })),
    fc.oneof(fc.integer({ min: -10, max: 500 }).map(String), fc.string({ maxLength: 12 })),
    { maxKeys: 3 },
  )
  .map((d) => new URLSearchParams(d).toString());

const dimension = fc.constantFrom(
  'harness',
  'skill',
  'skill_version',
  'command',
  'mcp',
  'tool',
  'model',
  'user',
  'evaluation',
  'bogus',
);
const statsBody = fc.record(
  {
    start_time_unix_seconds: fc.oneof(fc.integer({ min: -10, max: 2_000_000_000 }), fc.double(), anyText),
    end_time_unix_seconds: fc.oneof(fc.integer({ min: -10, max: 2_000_000_000 }), fc.constant(1_790_000_000)),
    request_type: fc.oneof(fc.constantFrom('scalar', 'table', 'time_series'), anyText),
    bucket: fc.oneof(fc.constantFrom('day', 'week', null), anyText),
    compare: fc.oneof(fc.constantFrom('none', 'previous_period', null), anyText),
    workspace_id: fc.oneof(fc.constantFrom('ws-a-team', 'ws-b', 'ws-a'), anyText, fc.constant(null)),
    queries: fc.array(
      fc.record(
        {
          name: anyText,
          measure: fc.oneof(
            fc.constantFrom('spans', 'traces', 'error_rate', 'latency_p99', 'tokens', 'evaluation_score'),
            anyText,
          ),
          group_by: fc.array(dimension, { maxLength: 4 }),
          limit: fc.oneof(fc.integer({ min: -1, max: 5000 }), fc.constant(null)),
          order: fc.oneof(
            fc.record({ by: fc.oneof(dimension, anyText), direction: fc.constantFrom('asc', 'desc', 'up') }),
            fc.constant(null),
          ),
          filters: fc.array(
            fc.record({
              key: dimension,
              op: fc.constantFrom('eq', 'neq', 'in', 'exists', 'not_exists', 'like'),
              value: fc.oneof(anyText, fc.integer(), fc.boolean(), fc.array(anyText, { maxLength: 3 })),
            }),
            { maxLength: 3 },
          ),
        },
        { requiredKeys: ['name', 'measure'] },
      ),
      { maxLength: 4 },
    ),
  },
  { requiredKeys: [] },
);

describe('REST fuzzing', () => {
  it('POST /skill/v1/skills/:id/traces/stats/query: the most complex validator', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          statsBody.map((b) => JSON.stringify(b)),
          jsonish,
        ),
        fc.constantFrom('sk-1', 'sk-b1', 'nope', '%F0%9F%98%80'),
        async (payload, skill) => {
          const res = await t.app.inject({
            method: 'POST',
            url: `/skill/v1/skills/${skill}/traces/stats/query`,
            headers: { ...headers, 'content-type': 'application/json' },
            payload,
          });
          checkResponse(res, ['data', 'meta']);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a caller of another organization never gets an id of this one, whatever it searches', async () => {
    const other = await t.auth('u-b', 'org-b');
    await fc.assert(
      fc.asyncProperty(anyText, fc.constantFrom('keyword', 'prefix', 'exact'), async (query, strategy) => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/agent/v1/agents/search',
          headers: { ...other, 'content-type': 'application/json' },
          payload: JSON.stringify({ query, strategy }),
        });
        checkResponse(res, ['items', 'page']);
        if (res.statusCode === 200) {
          const ids = res.json<{ items: { id: string; workspace_id: string }[] }>().items;
          for (const item of ids) expect(item.workspace_id).toBe('ws-b');
        }
        expect(res.body).not.toMatch(/"(ag-[123]|ws-a[^"]*|org-a)"/);
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /agent/v1/agents/search', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          searchBody.map((b) => JSON.stringify(b)),
          jsonish,
        ),
        contentType,
        async (payload, ct) => {
          const h: Record<string, string> = { ...headers };
          if (ct !== undefined) h['content-type'] = ct;
          checkResponse(await t.app.inject({ method: 'POST', url: '/agent/v1/agents/search', headers: h, payload }), [
            'items',
            'page',
          ]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('POST /mcp/v1/tools/aggregate', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          aggregateBody.map((b) => JSON.stringify(b)),
          jsonish,
        ),
        contentType,
        async (payload, ct) => {
          const h: Record<string, string> = { ...headers };
          if (ct !== undefined) h['content-type'] = ct;
          checkResponse(await t.app.inject({ method: 'POST', url: '/mcp/v1/tools/aggregate', headers: h, payload }), [
            'groups',
            'page',
          ]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['/mcp/v1/tools', ['items', 'page']],
    ['/registry/v1/users', ['items', 'page']],
    ['/skill/v1/insights/schemas', ['items']],
    ['/agent/v1/agents/ag-1/profile-image', []],
    ['/registry/v1/workspaces/ws-a-team/export', ['artifacts', 'projects', 'workspaces']],
  ] as const)('GET %s with generated query strings and headers', async (path, keys) => {
    await fc.assert(
      fc.asyncProperty(
        queryString,
        fc.constantFrom(undefined, 'application/json', 'image/*', '*/*', 'text/html'),
        async (qs, accept) => {
          const h: Record<string, string> = { ...headers };
          if (accept !== undefined) h.accept = accept;
          const res = await t.app.inject({ method: 'GET', url: qs === '' ? path : `${path}?${qs}`, headers: h });
          if (res.statusCode === 200 && !String(res.headers['content-type']).startsWith('application/json')) return;
          checkResponse(res, [...keys]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('path parameters of any shape', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 300 }), async (id) => {
        const enc = encodeURIComponent(id);
        for (const url of [`/agent/v1/agents/${enc}/profile-image`, `/registry/v1/workspaces/${enc}/export`]) {
          checkResponse(await t.app.inject({ method: 'GET', url, headers }), []);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('authorization headers of any shape get a 401 problem, never a 500', async () => {
    const header = fc.oneof(
      fc.string(),
      fc.string().map((s) => `Bearer ${s}`),
      fc.tuple(fc.base64String(), fc.base64String(), fc.base64String()).map(([a, b, c]) => `Bearer ${a}.${b}.${c}`),
      fc.constantFrom('Bearer', 'Bearer ', 'bearer x.y.z', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1LWFkbWluIn0.'),
    );
    await fc.assert(
      fc.asyncProperty(header, async (authorization) => {
        const res = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: { authorization } });
        checkResponse(res, ['items', 'page']);
        // No generated header is a valid credential: every one is an authentication failure.
        expect(res.statusCode).toBe(401);
      }),
      { numRuns: RUNS },
    );
  });

  it('left the stored data unchanged', async () => {
    expect(await stateOf()).toBe(snapshot);
  });
});

describe('OTLP and GraphQL fuzzing', () => {
  const anyValue = fc.oneof(
    fc.record({ stringValue: fc.string() }),
    fc.record({ intValue: fc.oneof(fc.integer(), fc.string()) }),
    fc.record({ boolValue: fc.boolean() }),
    fc.anything(),
  );
  const otlpSpan = fc.record(
    {
      traceId: fc.oneof(fc.stringMatching(/^[0-9a-f]{32}$/), fc.string()),
      spanId: fc.oneof(fc.stringMatching(/^[0-9a-f]{16}$/), fc.string()),
      name: fc.string(),
      startTimeUnixNano: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 63n }).map(String), fc.string(), fc.integer()),
      endTimeUnixNano: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 63n }).map(String), fc.string()),
      attributes: fc.array(
        fc.record({
          key: fc.constantFrom('skill.id', 'skill.name', 'gen_ai.usage.input_tokens', 'user.id', 'x'),
          value: anyValue,
        }),
        { maxLength: 4 },
      ),
      status: fc.oneof(fc.record({ code: fc.integer({ min: -1, max: 3 }) }), fc.anything()),
    },
    { requiredKeys: [] },
  );
  const otlpBody = fc.oneof(
    fc.array(otlpSpan, { maxLength: 5 }).map((spans) => JSON.stringify(otlpTraceBody({ resource: [], spans }))),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string(),
  );

  it('POST /v1/traces: 200 with an OTLP body, 400 with a Status, or a problem body; never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        otlpBody,
        fc.constantFrom('application/json', 'application/x-protobuf', 'text/plain'),
        async (payload, ct) => {
          const res = await t.app.inject({
            method: 'POST',
            url: '/v1/traces',
            headers: { ...headers, 'content-type': ct },
            payload,
          });
          expect(res.statusCode, res.body.slice(0, 200)).not.toBe(500);
          if (res.statusCode === 400 && ct === 'application/json') expect(JSON.parse(res.body).code).toBe(3);
          if (res.statusCode !== 200 && res.statusCode !== 400) checkResponse(res, []);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('POST /v1/traces with real protobuf and gzip bodies, mutated: the span count moves by exactly the accepted spans', async () => {
    const valid = (n: number) =>
      encodeExportRequest(
        otlpTraceBody({
          resource: attrs({ 'workspace.id': 'ws-a-team' }),
          spans: Array.from({ length: n }, (_, i) => ({
            traceId: crypto.randomBytes(16),
            spanId: crypto.randomBytes(8),
            name: `s${i}`,
            startTimeUnixNano: String(BigInt(Date.now() - 60_000) * 1_000_000n),
            endTimeUnixNano: String(BigInt(Date.now() - 59_000) * 1_000_000n),
            attributes: attrs({ 'gen_ai.operation.name': 'chat' }),
          })),
        }),
      );
    // A valid body, then bytes flipped, cut or inserted; sent as is or gzip-compressed.
    const mutated = fc
      .tuple(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.tuple(fc.constantFrom('flip', 'cut', 'insert'), fc.nat(), fc.integer({ min: 0, max: 255 })), {
          maxLength: 3,
        }),
        fc.boolean(),
      )
      .map(([n, edits, gzip]) => {
        let body = valid(n);
        for (const [kind, at, byte] of edits) {
          const i = body.length === 0 ? 0 : at % body.length;
          if (kind === 'flip') body[i] = byte;
          else if (kind === 'cut') body = body.subarray(0, i);
          else body = Buffer.concat([body.subarray(0, i), Buffer.from([byte]), body.subarray(i)]);
        }
        return { raw: Buffer.from(body), body: gzip ? zlib.gzipSync(body) : Buffer.from(body), gzip };
      });
    await fc.assert(
      fc.asyncProperty(mutated, async ({ raw, body, gzip }) => {
        const before = await t.traces.countSpans();
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/traces',
          headers: {
            ...headers,
            'content-type': 'application/x-protobuf',
            ...(gzip ? { 'content-encoding': 'gzip' } : {}),
          },
          payload: body,
        });
        expect(res.statusCode, res.body.slice(0, 200)).not.toBe(500);
        const stored = (await t.traces.countSpans()) - before;
        // How many spans the body holds, by the protobufjs reference decoder (null: not a valid request).
        let decoded: number | null;
        try {
          decoded = decodeProtobufReference(raw).length;
        } catch {
          decoded = null;
        }
        if (decoded === null) {
          expect(res.statusCode, 'an invalid body is refused').toBe(400);
          expect(stored, 'a refused request stores nothing').toBe(0);
          return;
        }
        expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
        const answer = ProtobufTraceSerializer.deserializeResponse(new Uint8Array(res.rawPayload));
        // protobufjs hands int64 fields back as strings (or Longs) whatever the declared type says.
        const rejected = asCount(answer.partialSuccess?.rejectedSpans ?? 0);
        // Every span the body holds is either stored or counted as rejected in the answer.
        expect(stored + rejected).toBe(decoded);
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /graphql: generated documents and variables never give a 500', async () => {
    const field = fc.constantFrom(
      'viewer { __typename }',
      'tools(first: 2) { totalCount }',
      'agent(id: "ag-1") { id name }',
      'agentSearch(query: "x") { totalCount }',
      'nope',
      '__schema { types { name } }',
      'workspace(id: "ws-b") { id }',
    );
    const doc = fc.oneof(
      fc.array(field, { minLength: 1, maxLength: 4 }).map((fs) => `{ ${fs.join(' ')} }`),
      fc.string(),
    );
    await fc.assert(
      fc.asyncProperty(doc, fc.option(fc.dictionary(fc.string(), fc.jsonValue())), async (query, variables) => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: JSON.stringify({ query, variables }),
        });
        expect(res.statusCode, res.body.slice(0, 200)).not.toBe(500);
        const body = JSON.parse(res.body) as { errors?: { extensions?: { code?: string } }[] };
        for (const e of body.errors ?? []) expect(e.extensions?.code).not.toBe('internal_error');
      }),
      { numRuns: RUNS },
    );
  });
});
