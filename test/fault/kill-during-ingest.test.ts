/**
 * Durability: a real service process is killed with SIGKILL while OTLP batches are in flight,
 * then restarted on the same DATA_DIR; every span it acknowledged with 200 is still stored, and
 * once every batch sent is sent again (as exporters do after a failed request), each span is
 * stored exactly once: the batches cut by the crash were either committed whole or not at all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { READY_TIMEOUT_MS, freePort, waitUntilReady } from '../fixtures/service-process.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-kill-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function start(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      DEMO_TRACE_SPANS: '0',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      MAX_EVENT_LOOP_DELAY_MS: '0',
    },
    stdio: 'ignore',
  });
  children.push(child);
  if (await waitUntilReady(`http://127.0.0.1:${port}`)) return child;
  throw new Error('the service did not become ready');
}

const NOW = Math.floor(Date.now() / 1000);
function batch(n: number, size: number): string {
  const spans = Array.from({ length: size }, (_, i) => ({
    traceId: (n * 1000 + i + 1).toString(16).padStart(32, 'a'),
    spanId: (n * 1000 + i + 1).toString(16).padStart(16, 'b'),
    name: 'invoke',
    startTimeUnixNano: `${NOW}000000000`,
    endTimeUnixNano: `${NOW}100000000`,
    attributes: attrs({ 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'skill-0001' }),
  }));
  return JSON.stringify(otlpTraceBody({ resource: attrs({ 'workspace.id': 'ws-acme-platform' }), spans }));
}

describe('kill -9 during ingestion', () => {
  it(
    'keeps every acknowledged span across a crash and restart',
    async () => {
      const port = await freePort();
      const first = await start(port);
      const token = await (await loadDevIssuer(dataDir)).mint({ sub: 'user-alice', org: 'org-acme' });
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      let acknowledged = 0;
      let n = 0;
      const sender = async () => {
        for (;;) {
          const size = 200;
          try {
            const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
              method: 'POST',
              headers,
              body: batch(n++, size),
            });
            if (res.status === 200) acknowledged += size;
          } catch {
            return; // the process is gone
          }
        }
      };
      const senders = [sender(), sender(), sender()];
      await new Promise((r) => setTimeout(r, 1500));
      first.kill('SIGKILL');
      await Promise.all(senders);
      expect(acknowledged).toBeGreaterThan(0);

      await start(port);
      const stored = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/skill/v1/skills/skill-0001/traces/stats/query`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            start_time_unix_seconds: NOW - 60,
            end_time_unix_seconds: NOW + 60,
            request_type: 'scalar',
            queries: [{ name: 'spans', measure: 'spans' }],
          }),
        });
        expect(res.status).toBe(200);
        return ((await res.json()) as { data: { results: { value: number }[] } }).data.results[0]?.value ?? 0;
      };
      expect(await stored()).toBeGreaterThanOrEqual(acknowledged);
      // Every batch the senders began, sent again: whatever the crash cut, each span counts once.
      for (let i = 0; i < n; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, { method: 'POST', headers, body: batch(i, 200) });
        expect(res.status).toBe(200);
      }
      expect(await stored()).toBe(n * 200);
    },
    4 * READY_TIMEOUT_MS,
  );
});
