/**
 * Webhook durability: insights are recorded (with their deliveries) into a DATA_DIR, the real
 * service starts on it and begins sending; the receiver holds every request open and the service
 * is killed with SIGKILL before any is answered. Restarted, the service sends every insight again,
 * each with the `webhook-id` its delivery had before the crash (a duplicate allowed, a loss never),
 * and the receiver verifies every request with the standardwebhooks package.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import { loadConfig } from '../../src/config.ts';
import { loadSigningKey, subscriptionSecret } from '../../src/insights/webhooks/secret.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { insight, subscription } from '../contract/insight-contract.ts';
import { READY_TIMEOUT_MS, freePort, waitUntilReady } from '../fixtures/service-process.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { startReceiver, verified, type Receiver } from '../fixtures/webhook-receiver.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-kill-hooks-'));
const children: ChildProcess[] = [];
let receiver: Receiver | undefined;
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await receiver?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<{ child: ChildProcess; origin: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      SEED_DEMO: 'false',
      DEMO_TRACE_SPANS: '0',
      LOG_LEVEL: 'error',
      NODE_ENV: 'development',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      WEBHOOK_ALLOWED_TARGETS: '127.0.0.1',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_POLL_MS: '100',
    },
    stdio: 'ignore',
  });
  children.push(child);
  return { child, origin: `http://127.0.0.1:${port}` };
}

/** A sample of the service's /metrics, by its name and labels as printed. */
async function sample(origin: string, name: string): Promise<number | undefined> {
  expect(await waitUntilReady(origin)).toBe(true);
  const text = await (await fetch(`${origin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Resolves when `done()` holds, or rejects after the deadline (a hang or a loss, never a measure of speed). */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The outbox as the database holds it: delivery id -> insight id. */
function outbox(): Map<string, string> {
  const db = new DatabaseSync(path.join(dataDir, 'registry.sqlite'), { readOnly: true });
  try {
    const rows = db.prepare('SELECT id, insight_id FROM webhook_deliveries').all();
    return new Map(rows.map((r) => [r.id as string, r.insight_id as string]));
  } finally {
    db.close();
  }
}

describe('kill -9 between commit and delivery', () => {
  it(
    'delivers every insight after a restart, each with its original webhook-id',
    async () => {
      const hooks = await startReceiver();
      receiver = hooks;
      hooks.answer = () => 'hold';
      const store = new SqliteRegistryStore(path.join(dataDir, 'registry.sqlite'));
      await store.importBundle(parseBundle(smallBundle()));
      await store.insights.createSubscription(subscription('sub-1', { url: hooks.url }));
      // Windows of yesterday: the service's insight retention (90 days) must not take them at start.
      const endS = Math.floor(Date.now() / 1000);
      const window = { window_start_s: endS - 86_400, window_end_s: endS };
      const insights = Array.from({ length: 24 }, (_, i) => insight(`in-${String(i).padStart(2, '0')}`, window));
      expect(await store.insights.recordInsights(insights, Date.now())).toHaveLength(24);
      await store.close();
      const owed = outbox();
      expect(owed.size).toBe(24);

      const { child: first, origin } = await start();
      const exited = new Promise((resolve) => first.once('exit', resolve));
      const arrived = await Promise.race([hooks.waitFor(1).then(() => true), exited.then(() => false)]);
      expect(arrived, 'the service sent before it ended').toBe(true);
      // Every request is held: the outbox still owes all 24 (attempts cut by the timeout stay in it).
      expect(await sample(origin, 'gateway_webhook_outbox_deliveries')).toBe(24);
      first.kill('SIGKILL');
      await exited;
      const beforeCrash = hooks.received.length;
      expect(beforeCrash).toBeGreaterThan(0);
      // Nothing was answered: the outbox owes every insight still.
      expect(outbox()).toEqual(owed);

      hooks.answer = () => ({ status: 200 });
      const second = await start();
      const answered = () => new Set(hooks.received.slice(beforeCrash).map((r) => r.headers['webhook-id']));
      await until(() => [...owed.keys()].every((id) => answered().has(id)), 'every delivery after the restart');
      await until(() => outbox().size === 0, 'the outbox to empty');
      expect(await sample(second.origin, 'gateway_webhook_outbox_deliveries')).toBe(0);
      const claims =
        'gateway_store_query_duration_seconds_count{store="registry",method="insights.claimDeliveries",outcome="ok"}';
      expect(await sample(second.origin, claims)).toBeGreaterThan(0);
      expect(
        await sample(second.origin, 'gateway_webhook_deliveries_total{outcome="succeeded"}'),
      ).toBeGreaterThanOrEqual(24);

      const config = loadConfig({ DATA_DIR: dataDir });
      const key = await loadSigningKey(config);
      expect(fs.statSync(path.join(dataDir, 'webhook-signing.key')).mode & 0o777).toBe(0o600);
      const secret = subscriptionSecret(key ?? '', 'salt-sub-1');
      for (const request of hooks.received) {
        const body = verified(secret, request) as { data: { id: string } };
        const id = request.headers['webhook-id'] ?? '';
        expect(owed.get(id), `a webhook-id of the outbox: ${id}`).toBe(body.data.id);
      }
      expect(new Set(hooks.received.map((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id))).toEqual(
        new Set(insights.map((i) => i.id)),
      );
    },
    4 * READY_TIMEOUT_MS,
  );
});
