/**
 * What creating a webhook subscription tells and costs (REST and GraphQL): a refused host name is
 * answered with one message whatever the resolver said, never an address or a resolver's error
 * code (the service's log has them); a lookup without an answer is cut at
 * WEBHOOK_LOOKUP_TIMEOUT_MS, and one hanging holds its own organization's lookup slot only; and a
 * caller creates at most WEBHOOK_CREATIONS_PER_MIN a minute, refused ones included, the next
 * answered 429 rate_limited with Retry-After before any lookup.
 * Resolvers of the test's own; the rate limiter's clock moved by hand.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LookupGate, type Resolve } from '../../src/insights/webhooks/lookup.ts';
import { InProcessRateLimiter } from '../../src/store/memory/rate-limiter.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp, type TestAppOptions } from '../helpers/test-app.ts';

const NOT_REACHABLE =
  "the URL's host does not resolve, or resolves to an address webhooks may not reach (see WEBHOOK_ALLOWED_TARGETS)";

/** u-admin (admin of ws-a and its subtree) and u-wadmin, admin of ws-a-team only. */
function bundle() {
  const b = smallBundle();
  const t0 = '2026-01-01T00:00:00Z';
  b.users.push({ id: 'u-wadmin', org_id: 'org-a', created_at: t0, updated_at: t0 });
  b.memberships.push({ workspace_id: 'ws-a-team', user_id: 'u-wadmin', role: 'admin' });
  return b;
}

/** Names of the service's network and one public name; every lookup recorded. */
function internalDns() {
  const looked: string[] = [];
  const fail = (code: string) => Promise.reject(Object.assign(new Error(`getaddrinfo ${code}`), { code }));
  const resolve: Resolve = async (host) => {
    looked.push(host);
    if (host === 'vm') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'db.internal') return [{ address: '10.0.0.5', family: 4 }];
    if (host === 'metadata.internal') return [{ address: 'fd00:ec2::254', family: 6 }];
    if (host === 'public.example') return [{ address: '93.184.215.14', family: 4 }];
    if (host === 'slow.example') return new Promise<never>(() => undefined);
    return fail(host === 'flaky.internal' ? 'EAI_AGAIN' : 'ENOTFOUND');
  };
  return { resolve, looked };
}

const CREATE = `mutation($input: CreateWebhookSubscriptionInput!) {
  createWebhookSubscription(input: $input) { secret }
}`;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start(options: TestAppOptions): Promise<TestApp> {
  t = await startTestApp({ bundle: bundle(), ...options });
  return t;
}

function client(app: TestApp, headers: { authorization: string }) {
  return {
    rest: (url: string, ws = 'ws-a-team') =>
      app.app.inject({ method: 'POST', url: `/skill/v1/workspaces/${ws}/webhooks`, headers, payload: { url } }),
    graph: async (url: string, ws = 'ws-a-team') => {
      const res = await app.app.inject({
        method: 'POST',
        url: '/graphql',
        headers,
        payload: { query: CREATE, variables: { input: { workspaceId: ws, url } } },
      });
      return res.json<{
        data?: { createWebhookSubscription: { secret: string } | null } | null;
        errors?: { message: string; extensions: { code: string; field?: string; http?: { status: number } } }[];
      }>();
    },
  };
}

describe('creating a webhook subscription', () => {
  it('tells nothing of what a refused name resolves to, over REST and GraphQL; the log does', async () => {
    const dns = internalDns();
    const logged: object[] = [];
    const app = await start({
      env: { WEBHOOK_CREATIONS_PER_MIN: '100' },
      webhookLookups: { resolve: dns.resolve, gate: new LookupGate(2) },
      webhookLog: { info: (obj) => logged.push(obj) },
    });
    const as = client(app, await app.auth('u-wadmin'));
    const hosts = ['vm', 'db.internal', 'metadata.internal', 'gone.internal', 'flaky.internal'];
    for (const host of hosts) {
      const url = `http://${host}:8080/admin?token=s3cret`;
      const rest = await as.rest(url);
      const problem = expectProblem(rest, 422, 'invalid_field');
      expect([host, problem.field, problem.detail]).toEqual([host, '/url', `/url ${NOT_REACHABLE}`]);
      const graph = await as.graph(url);
      expect([host, graph.errors?.[0]?.message, graph.errors?.[0]?.extensions.code]).toEqual([
        host,
        `/url ${NOT_REACHABLE}`,
        'invalid_field',
      ]);
      for (const body of [rest.body, JSON.stringify(graph)])
        for (const leak of ['127.0.0.1', '10.0.0.5', 'fd00', 'ENOTFOUND', 'EAI_AGAIN', 'loopback', 'private', 'unique'])
          expect([host, body]).not.toEqual([host, expect.stringContaining(leak)]);
    }
    expect(dns.looked).toEqual(hosts.flatMap((h) => [h, h]));
    // The service's log says what each resolved to (the host only: the URL's query may hold secrets).
    expect(logged.slice(0, 10).filter((_, i) => i % 2 === 0)).toEqual([
      { host: 'vm', reason: 'private_address', detail: 'vm resolves to 127.0.0.1, a loopback address' },
      { host: 'db.internal', reason: 'private_address', detail: 'db.internal resolves to 10.0.0.5, a private address' },
      {
        host: 'metadata.internal',
        reason: 'private_address',
        detail: 'metadata.internal resolves to fd00:ec2::254, a unique-local address',
      },
      { host: 'gone.internal', reason: 'unresolved', detail: 'the lookup of gone.internal failed: ENOTFOUND' },
      { host: 'flaky.internal', reason: 'unresolved', detail: 'the lookup of flaky.internal failed: EAI_AGAIN' },
    ]);
    expect(JSON.stringify(logged)).not.toContain('s3cret');
    expect((await as.rest('https://public.example/hooks')).statusCode).toBe(201);
  });

  it('cuts a lookup without an answer at WEBHOOK_LOOKUP_TIMEOUT_MS: 422, try again later', async () => {
    const dns = internalDns();
    const app = await start({
      env: { WEBHOOK_LOOKUP_TIMEOUT_MS: '100' },
      webhookLookups: { resolve: dns.resolve, gate: new LookupGate(2) },
    });
    const problem = expectProblem(
      await client(app, await app.auth('u-wadmin')).rest('https://slow.example/x'),
      422,
      'invalid_field',
    );
    expect(problem.detail).toBe("/url the URL's host did not resolve within 100 ms; try again later");
  });

  it("an organization whose lookup hangs waits for its own slot: 422, try again later; another's creation goes on", async () => {
    const dns = internalDns();
    const app = await start({
      env: { WEBHOOK_LOOKUP_TIMEOUT_MS: '100' },
      webhookLookups: { resolve: dns.resolve, gate: new LookupGate(2, 1) },
    });
    const orgA = client(app, await app.auth('u-wadmin'));
    expectProblem(await orgA.rest('https://slow.example/x'), 422, 'invalid_field');
    // slow.example's lookup still holds org-a's slot, past its timeout: org-a's next is not looked up.
    const rest = expectProblem(await orgA.rest('https://public.example/hooks'), 422, 'invalid_field');
    const busy = "/url the URL's host could not be looked up now: too many lookups are under way; try again later";
    expect(rest.detail).toBe(busy);
    const graph = await orgA.graph('https://public.example/hooks');
    expect([graph.errors?.[0]?.message, graph.errors?.[0]?.extensions.code]).toEqual([busy, 'invalid_field']);
    expect(dns.looked).toEqual(['slow.example']);
    const orgB = client(app, await app.auth('u-b', 'org-b'));
    expect((await orgB.rest('https://public.example/hooks', 'ws-b')).statusCode).toBe(201);
    expect(dns.looked).toEqual(['slow.example', 'public.example']);
  });

  it('a caller creates at most WEBHOOK_CREATIONS_PER_MIN a minute, refused ones included; then 429 until the window ends', async () => {
    let clock = 1_800_000_000_000; // the start of a minute
    const dns = internalDns();
    const app = await start({
      env: { WEBHOOK_CREATIONS_PER_MIN: '3' },
      rateLimiter: new InProcessRateLimiter(() => clock),
      webhookLookups: { resolve: dns.resolve, gate: new LookupGate(2) },
    });
    const wadmin = client(app, await app.auth('u-wadmin'));
    const held = async () =>
      (await app.registry.insights.listSubscriptions('org-a', ['ws-a-team', 'ws-a', 'ws-a-sub'])).length;
    expect((await wadmin.rest('https://public.example/1')).statusCode).toBe(201);
    expectProblem(await wadmin.rest('http://vm/2'), 422, 'invalid_field');
    expect((await wadmin.graph('https://public.example/3')).data?.createWebhookSubscription?.secret).toMatch(/^whsec_/);
    expect([await held(), dns.looked.length]).toEqual([2, 3]);

    // The fourth, over either transport: refused before its host is looked up, nothing stored.
    const over = await wadmin.rest('https://public.example/4');
    const problem = expectProblem(over, 429, 'rate_limited');
    expect([over.headers['retry-after'], over.headers['ratelimit-policy'], over.headers.ratelimit]).toEqual([
      '60',
      '"per-caller";q=3;w=60',
      '"per-caller";r=0;t=60',
    ]);
    expect(problem.detail).toBe('more than 3 requests a minute; retry in 60 s');
    const graphOver = await wadmin.graph('https://public.example/5');
    expect(graphOver.errors?.[0]?.extensions).toMatchObject({ code: 'rate_limited', http: { status: 429 } });
    expect([await held(), dns.looked.length]).toEqual([2, 3]);

    // Another caller has its own quota.
    const admin = client(app, await app.auth('u-admin'));
    expect((await admin.rest('https://public.example/6', 'ws-a')).statusCode).toBe(201);

    clock += 59_999;
    const last = await wadmin.rest('https://public.example/7');
    expectProblem(last, 429, 'rate_limited');
    expect(last.headers['retry-after']).toBe('1');
    clock += 1;
    expect((await wadmin.rest('https://public.example/8')).statusCode).toBe(201);
    expect((await wadmin.graph('https://public.example/9')).data?.createWebhookSubscription?.secret).toMatch(/^whsec_/);
    expect(await held()).toBe(5);
  });
});
