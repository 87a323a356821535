/**
 * Closing the DuckDB trace store while its small reads (ping, span count, stored bytes) or a
 * compile are in flight: each settles (answered, or refused as unavailable) and the process lives.
 * Closing the instance under a running statement is a native crash that takes the whole process
 * (a segmentation fault, exit 139), so the race runs in a child process and its exit is the verdict.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const STORE = fileURLToPath(new URL('../../src/store/duckdb/trace-store.ts', import.meta.url));

const SCRIPT = `
import { DuckDbTraceStore } from ${JSON.stringify(STORE)};
const [dir, op] = process.argv.slice(1);
const outcomes = new Set();
for (let i = 0; i < 5; i++) {
  const store = await DuckDbTraceStore.open(dir + '/t' + i + '.duckdb', { sealEveryMs: 0 });
  const read = op === 'count' ? store.countSpans() : op === 'bytes' ? store.storedBytes()
    : op === 'compile' ? store.compile({ orgId: 'o', subject: { agent: 'a' }, startS: 0, endS: 3600,
        measures: ['invocations'], groupBy: [], filters: [], workspaceIds: ['w'] })
    : store.ping();
  const settled = read.then(() => 'answered', (e) => e.name);
  await store.close();
  outcomes.add(await settled);
}
process.stdout.write(JSON.stringify([...outcomes]));
`;

describe('closing the DuckDB trace store under a read', () => {
  it.each(['ping', 'count', 'bytes', 'compile'])(
    '%s in flight: it settles and the process lives',
    { timeout: 150_000 },
    (op) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'duck-close-'));
      try {
        const child = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT, dir, op], {
          encoding: 'utf8',
          timeout: 120_000,
        });
        expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({
          status: 0,
          signal: null,
          stderr: '',
        });
        const outcomes = JSON.parse(child.stdout) as string[];
        for (const o of outcomes) expect(['answered', 'TraceStoreUnavailableError']).toContain(o);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
