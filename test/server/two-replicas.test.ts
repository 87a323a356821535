/**
 * Server mode end to end: two service processes on one PostgreSQL database (reached through a TCP
 * proxy the test can cut) and one Redis. A write through one replica (span ingestion, a bundle
 * import) is visible through the other; a rate limit of N a minute allows N in total across both;
 * with PostgreSQL gone requests answer 503 and /readyz is not ready, and once it is back they
 * answer 200 again without a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { PG_URL, postgresReachable } from '../contract/pg-schema.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { READY_TIMEOUT_MS, freePort, waitUntilReady } from '../fixtures/service-process.ts';
import { REDIS_URL, redisReachable } from '../helpers/redis-server.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESOURCE = attrs({ 'workspace.id': 'ws-acme-platform' });

const up = (await postgresReachable()) && (await redisReachable('the two-replica tests'));
if (!up) console.warn('NOTICE: PostgreSQL or Redis unreachable; the two-replica test is skipped');

/** A TCP proxy to PostgreSQL that can drop every connection and refuse new ones. */
async function proxy(target: URL) {
  let open = true;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise<void>((r) => {
        open = false;
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe.skipIf(!up)('two replicas on one PostgreSQL and Redis', () => {
  const database = `gw_replicas_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-replicas-'));
  const children: ChildProcess[] = [];
  let px: Awaited<ReturnType<typeof proxy>> | undefined;
  let databaseUrl: string;
  let urls: string[] = [];
  let headers: Record<string, string>;

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const target = new URL(PG_URL);
    px = await proxy(target);
    databaseUrl = `postgres://${target.username || 'postgres'}@127.0.0.1:${px.port}/${database}`;
    const ports = [await freePort(), await freePort()];
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      RATE_LIMIT_PER_MIN: '5',
      DEMO_TRACE_SPANS: '0',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      REQUEST_TIMEOUT_MS: '3000',
    };
    // Both start at once: migrations and the demo seed must be safe to race.
    for (const port of ports) {
      children.push(
        spawn(process.execPath, ['src/main.ts'], { cwd: ROOT, env: { ...env, PORT: String(port) }, stdio: 'ignore' }),
      );
    }
    urls = ports.map((p) => `http://127.0.0.1:${p}`);
    for (const url of urls) expect(await waitUntilReady(url), `${url} ready`).toBe(true);
    const token = await (await loadDevIssuer(dataDir)).mint({ sub: 'user-alice', org: 'org-acme' });
    headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  }, 2 * READY_TIMEOUT_MS);

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await px?.close();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A skill's spans, traces and invocations within a minute of `now`, as one replica answers them. */
  async function spansTracesInvocations(url: string, skill: string, now: number): Promise<number[]> {
    const stats = await fetch(`${url}/skill/v1/skills/${skill}/traces/stats/query`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        start_time_unix_seconds: now - 60,
        end_time_unix_seconds: now + 60,
        request_type: 'scalar',
        queries: [
          { name: 'spans', measure: 'spans' },
          { name: 'traces', measure: 'traces' },
          { name: 'invocations', measure: 'skill_invocations' },
        ],
      }),
    });
    const answer = (await stats.json()) as { data?: { results: { value: number }[] } };
    expect(stats.status, JSON.stringify(answer)).toBe(200);
    return (answer.data?.results ?? []).map((r) => r.value);
  }

  it('sees through one replica what was written through the other', async () => {
    const [a, b] = urls as [string, string];
    const now = Math.floor(Date.now() / 1000);
    const span = {
      traceId: 'c'.repeat(32),
      spanId: 'd'.repeat(16),
      name: 'invoke',
      startTimeUnixNano: `${now}000000000`,
      endTimeUnixNano: `${now}200000000`,
      attributes: attrs({ 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'skill-0001' }),
    };
    const ingest = await fetch(`${a}/v1/traces`, {
      method: 'POST',
      headers,
      body: JSON.stringify(otlpTraceBody({ resource: RESOURCE, spans: [span] })),
    });
    expect(ingest.status).toBe(200);
    const stats = await fetch(`${b}/skill/v1/skills/skill-0001/traces/stats/query`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        start_time_unix_seconds: now - 60,
        end_time_unix_seconds: now + 60,
        request_type: 'scalar',
        queries: [{ name: 's', measure: 'spans' }],
      }),
    });
    expect(((await stats.json()) as { data: { results: { value: number }[] } }).data.results[0]?.value).toBe(1);

    // A bundle imported through the CLI (a third writer) is visible through replica B.
    const probe = {
      ...headers,
      authorization: `Bearer ${await (await loadDevIssuer(dataDir)).mint({ sub: 'user-probe', org: 'org-probe' })}`,
    };
    const exportUrl = `${b}/registry/v1/workspaces/ws-probe/export`;
    expect((await fetch(exportUrl, { headers: probe })).status).toBe(401);
    const t0 = '2026-11-01T00:00:00Z';
    const bundle = {
      organizations: [{ id: 'org-probe', name: 'Probe', status: 'active' }],
      users: [{ id: 'user-probe', org_id: 'org-probe', created_at: t0, updated_at: t0 }],
      workspaces: [
        {
          id: 'ws-probe',
          org_id: 'org-probe',
          name: 'probe',
          display_name: 'Probe',
          kind: 'org',
          workspace_status: 'active',
          created_at: t0,
          created_by: 'user-probe',
          updated_at: t0,
          updated_by: 'user-probe',
        },
      ],
      memberships: [{ workspace_id: 'ws-probe', user_id: 'user-probe', role: 'admin' }],
      artifacts: [
        {
          id: 'agent-probe',
          kind: 'agent',
          name: 'Replica Probe',
          artifact_status: 'active',
          source_type: 'upload',
          extension: 'yaml',
          content_hash_hex: 'ab'.repeat(32),
          commit_ts: t0,
          version_ordinal: 1,
          is_latest: true,
          workspace_id: 'ws-probe',
          created_at: t0,
          created_by: 'user-probe',
          updated_at: t0,
          updated_by: 'user-probe',
        },
      ],
    };
    const file = path.join(dataDir, 'bundle.json');
    fs.writeFileSync(file, JSON.stringify(bundle));
    // Asynchronously: the PostgreSQL proxy runs on this process's event loop.
    const cli = spawn(process.execPath, ['src/cli/import.ts', file], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: dataDir },
    });
    let stderr = '';
    cli.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((r) => cli.on('exit', r));
    expect(code, stderr).toBe(0);
    const after = await fetch(exportUrl, { headers: probe });
    expect(after.status).toBe(200);
    expect(((await after.json()) as { artifacts: { id: string }[] }).artifacts.map((x) => x.id)).toEqual([
      'agent-probe',
    ]);
  }, 30_000);

  it('counts every span of one trace ingested through both replicas at once exactly once', async () => {
    const now = Math.floor(Date.now() / 1000);
    const traceId = 'e'.repeat(32);
    const requests = 12;
    const perRequest = 50;
    const body = (i: number) =>
      JSON.stringify(
        otlpTraceBody({
          resource: RESOURCE,
          spans: Array.from({ length: perRequest }, (_, j) => ({
            traceId,
            spanId: (i * 1000 + j + 1).toString(16).padStart(16, '0'),
            name: 'step',
            startTimeUnixNano: `${now}000000000`,
            endTimeUnixNano: `${now}100000000`,
            // The skill invocation rides in the last request: the other spans arrive before it, through either replica.
            attributes:
              i === requests - 1 && j === 0
                ? attrs({ 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'skill-0002' })
                : attrs({ 'gen_ai.operation.name': 'chat' }),
          })),
        }),
      );
    const answers = await Promise.all(
      Array.from({ length: requests }, (_, i) =>
        fetch(`${urls[i % 2]}/v1/traces`, { method: 'POST', headers, body: body(i) }),
      ),
    );
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({});
    }
    for (const url of urls) {
      expect(await spansTracesInvocations(url, 'skill-0002', now)).toEqual([requests * perRequest, 1, 1]);
    }
  });

  it('counts a request sent to both replicas at once, three times over, exactly once', async () => {
    const now = Math.floor(Date.now() / 1000);
    const body = (n: number) =>
      JSON.stringify(
        otlpTraceBody({
          resource: RESOURCE,
          spans: Array.from({ length: 200 }, (_, j) => ({
            traceId: (n * 1000 + Math.floor(j / 4) + 1).toString(16).padStart(32, 'f'),
            spanId: (n * 1000 + j + 1).toString(16).padStart(16, 'f'),
            name: 'invoke',
            startTimeUnixNano: `${now - 30}000000000`,
            endTimeUnixNano: `${now - 30}100000000`,
            attributes: attrs({ 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'skill-0003' }),
          })),
        }),
      );
    // Five batches; each goes to both replicas at the same moment, three times (what retries after
    // lost answers look like behind a load balancer).
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          fetch(`${urls[i % 2]}/v1/traces`, { method: 'POST', headers, body: body(Math.floor(i / 2)) }),
        ),
      );
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({});
      }
    }
    for (const url of urls) {
      expect(await spansTracesInvocations(url, 'skill-0003', now)).toEqual([1000, 250, 1000]);
    }
  }, 30_000);

  it('allows N requests a minute in total across both replicas', async () => {
    // Stay inside one minute window.
    const second = new Date().getUTCSeconds();
    if (second > 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    // Counters outlive a run in Redis: start this caller from zero.
    const redis = new Redis(REDIS_URL);
    const stale = await redis.keys('gw:rl:u:org-acme:user-alice|*');
    if (stale.length > 0) await redis.del(...stale);
    redis.disconnect();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${urls[i % 2]}/mcp/v1/tools?limit=1`, { headers });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  }, 30_000);

  it('shares GraphQL persisted queries between replicas through Redis', async () => {
    const [a, b] = urls as [string, string];
    const { createHash } = await import('node:crypto');
    // Not `tools`: it spends the rate limit the test above used up, as REST operation 6 does.
    const query = `{ users(first: 1) { totalCount } } # run ${Math.random()}`;
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const hashOnly = JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash } } });
    const unknown = (await (await fetch(`${b}/graphql`, { method: 'POST', headers, body: hashOnly })).json()) as {
      errors?: { extensions?: { code?: string } }[];
    };
    expect(unknown.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const registered = await fetch(`${a}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash } } }),
    });
    expect(registered.status).toBe(200);
    const found = (await (await fetch(`${b}/graphql`, { method: 'POST', headers, body: hashOnly })).json()) as {
      data?: { users: { totalCount: number } };
    };
    expect(found.data?.users.totalCount).toBeGreaterThan(0);
  }, 30_000);

  it('answers 503 while PostgreSQL is gone and recovers without a restart', async () => {
    const [a, b] = urls as [string, string];
    px!.cut();
    const started = Date.now();
    const down = await fetch(`${a}/registry/v1/users?limit=1`, { headers });
    expect(down.status).toBe(503);
    expect(((await down.json()) as { code: string }).code).toBe('service_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await fetch(`${b}/readyz`)).status).toBe(503);
    px!.restore();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await fetch(`${a}/registry/v1/users?limit=1`, { headers })).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    expect((await fetch(`${b}/readyz`)).status).toBe(200);
  }, 30_000);
});
