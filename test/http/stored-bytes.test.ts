/**
 * `/metrics` gauges of what the embedded stores hold on disk (`gateway_stored_bytes`): the DuckDB
 * trace file and its WAL, the SQLite registry file and its WAL, each the size the file has on disk,
 * asked when Prometheus scrapes; a store that cannot answer leaves its samples out of the scrape
 * instead of failing `/metrics`; the DuckDB engine opened directly (tools) finds its own file.
 * PostgreSQL's sizes: test/store/postgres-stored-bytes.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { spansBody } from '../fixtures/otlp-body.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function storedBytes(app: TestApp): Promise<Map<string, number>> {
  const res = await app.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  const samples = new Map<string, number>();
  for (const m of res.body.matchAll(/^gateway_stored_bytes\{(.*)\} (\d+)$/gm))
    samples.set(m[1] as string, Number(m[2]));
  return samples;
}

const sizeOf = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

describe('gateway_stored_bytes', () => {
  it('reports the embedded files and WALs at their size on disk', async () => {
    t = await startTestApp();
    const app = t;
    const headers = { ...(await app.auth('u-admin')), 'content-type': 'application/json' };
    for (let i = 0; i < 5; i++)
      expect(
        (await app.app.inject({ method: 'POST', url: '/v1/traces', headers, payload: spansBody(200, 200, 'user.id') }))
          .statusCode,
      ).toBe(200);
    const traces = path.join(app.dataDir, 'traces.duckdb');
    const registry = path.join(app.dataDir, 'registry.sqlite');
    const onDisk = () =>
      new Map([
        ['store="registry",engine="sqlite",part="file"', sizeOf(registry)],
        ['store="registry",engine="sqlite",part="wal"', sizeOf(`${registry}-wal`)],
        ['store="traces",engine="duckdb",part="file"', sizeOf(traces)],
        ['store="traces",engine="duckdb",part="wal"', sizeOf(`${traces}.wal`)],
      ]);
    // The engine may checkpoint between the scrape and the stat: asked again until both agree.
    await expect.poll(async () => [...(await storedBytes(app))], { timeout: 30_000 }).toEqual([...onDisk()]);
    const samples = await storedBytes(app);
    // 1,000 spans of distinct 200-byte values were committed: in the WAL, or in the file after a checkpoint.
    const tracesBytes =
      (samples.get('store="traces",engine="duckdb",part="file"') ?? 0) +
      (samples.get('store="traces",engine="duckdb",part="wal"') ?? 0);
    expect(tracesBytes).toBeGreaterThan(1000 * 200);
    // The imported bundle: in the WAL, or in the file after a checkpoint.
    const registryBytes =
      (samples.get('store="registry",engine="sqlite",part="file"') ?? 0) +
      (samples.get('store="registry",engine="sqlite",part="wal"') ?? 0);
    expect(registryBytes).toBeGreaterThan(16 * 1024);
  });

  it('leaves out the samples of a store that cannot answer, and /metrics still answers', async () => {
    t = await startTestApp();
    await t.traces.close();
    const samples = await storedBytes(t);
    expect([...samples.keys()].sort()).toEqual([
      'store="registry",engine="sqlite",part="file"',
      'store="registry",engine="sqlite",part="wal"',
    ]);
  });

  it('the DuckDB engine outside its thread names its own file (tools open it so)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bytes-'));
    const file = path.join(dir, 'traces.duckdb');
    const store = await DuckDbTraceStore.open(file, { sealEveryMs: 0 });
    try {
      expect(await store.storedBytes()).toEqual({ file: sizeOf(file), wal: sizeOf(`${file}.wal`) });
      expect(sizeOf(file)).toBeGreaterThan(0);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const memory = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    expect(await memory.storedBytes()).toEqual({});
    await memory.close();
  });
});
