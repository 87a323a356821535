/**
 * The open-file limit and the connection caps derived from it (src/open-files.ts, src/config.ts):
 * the limit read from /proc, raised to the hard limit through prlimit where it is lower, and
 * degrading to "unknown" where it cannot be read; the caps shared two thirds to HTTP and one third
 * to gRPC below the limit less the process's reserve; and the service started under a 1,024 soft
 * limit logs the caps of its 4,096 hard one.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { raiseOpenFileLimit, readOpenFileLimit } from '../../src/open-files.ts';
import { READY_TIMEOUT_MS, freePort } from '../fixtures/service-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});
const tempDir = async () => {
  const d = await fs.mkdtemp(path.join(os.tmpdir(), 'gw-files-'));
  dirs.push(d);
  return d;
};
const hasPrlimit = (() => {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasPrlimit)
  console.warn('NOTICE: prlimit (util-linux) is missing; the tests that start processes under a limit are skipped');

describe('the open-file limit', () => {
  it('is read from a limits file, "unlimited" included, and is unknown where there is none', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'limits');
    const header = 'Limit                     Soft Limit           Hard Limit           Units     \n';
    await fs.writeFile(
      file,
      `${header}Max open files            1024                 4096                 files     \n`,
    );
    expect(readOpenFileLimit(file)).toEqual({ soft: 1024, hard: 4096 });
    await fs.writeFile(
      file,
      `${header}Max open files            65536                unlimited            files     \n`,
    );
    expect(readOpenFileLimit(file)).toEqual({ soft: 65536, hard: Infinity });
    await fs.writeFile(file, header);
    expect(readOpenFileLimit(file)).toBeNull();
    expect(readOpenFileLimit(path.join(dir, 'none'))).toBeNull();
  });

  it.skipIf(!hasPrlimit)('a soft limit below the hard one is raised to it', async () => {
    const child = spawn('prlimit', ['--nofile=1024:4096', 'sleep', '60'], { stdio: 'ignore' });
    try {
      const pid = child.pid as number;
      // prlimit hands its process to sleep once the limit is set: wait for that.
      while (readOpenFileLimit(`/proc/${pid}/limits`)?.soft !== 1024) await new Promise((r) => setTimeout(r, 10));
      expect(await raiseOpenFileLimit(pid)).toEqual({ soft: 4096, hard: 4096 });
      expect(readOpenFileLimit(`/proc/${pid}/limits`)).toEqual({ soft: 4096, hard: 4096 });
    } finally {
      child.kill();
    }
  });
});

describe('connection caps', () => {
  const grpcOn = { OTLP_GRPC_PORT: '4317' };
  it('share the limit less the reserve: two thirds to HTTP and one third to gRPC, all to HTTP without gRPC', () => {
    expect(loadConfig(grpcOn, 4096).connections).toEqual({
      httpMax: 2458,
      grpcMax: 1228,
      idleTimeoutMs: 30_000,
      grpcMaxAgeMs: 1_800_000,
      grpcCallsPerCaller: 4,
    });
    expect(loadConfig({}, 4096).connections.httpMax).toBe(3686);
    // Large limits: memory, not descriptors, is the bound.
    expect(loadConfig(grpcOn, 1_048_576).connections).toMatchObject({ httpMax: 20_000, grpcMax: 5000 });
    // Unknown limit (not Linux): a conservative 1,024.
    expect(loadConfig(grpcOn).connections).toMatchObject({ httpMax: 512, grpcMax: 256 });
  });

  it('given caps that leave the process fewer than 256 descriptors stop start-up, naming the variables', () => {
    expect(() => loadConfig({ ...grpcOn, HTTP_MAX_CONNECTIONS: '3800' }, 4096)).toThrow(
      new ConfigError(
        'HTTP_MAX_CONNECTIONS + OTLP_GRPC_MAX_CONNECTIONS (5028) leave fewer than 256 of the 4096 open files the process may hold for its stores; lower them or raise the limit (ulimit -n)',
      ),
    );
    expect(
      loadConfig({ ...grpcOn, HTTP_MAX_CONNECTIONS: '2000', OTLP_GRPC_MAX_CONNECTIONS: '1840' }, 4096).connections,
    ).toMatchObject({
      httpMax: 2000,
      grpcMax: 1840,
    });
    expect(() => loadConfig({ IDLE_TIMEOUT_MS: 'soon' })).toThrow('IDLE_TIMEOUT_MS must be a whole number, got "soon"');
    expect(() => loadConfig({ OTLP_GRPC_CALLS_PER_CALLER: '0' })).toThrow(
      'OTLP_GRPC_CALLS_PER_CALLER must be between 1 and 10000, got 0',
    );
  });

  it.skipIf(!hasPrlimit)(
    'the service started under a soft limit of 1,024 (hard 4,096) logs the caps of 4,096',
    async () => {
      const child = spawn('prlimit', ['--nofile=1024:4096', process.execPath, 'src/main.ts'], {
        cwd: ROOT,
        env: {
          ...process.env,
          NODE_ENV: 'development',
          DATA_DIR: await tempDir(),
          PORT: String(await freePort()),
          OTLP_GRPC_PORT: String(await freePort()),
          SEED_DEMO: 'false',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      const caps = await new Promise<Record<string, unknown> | null>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const line = out.split('\n').find((l) => l.includes('"msg":"connection caps"'));
          if (line !== undefined) resolve(JSON.parse(line) as Record<string, unknown>);
        });
        child.once('exit', () => resolve(null));
      });
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      expect(caps).toMatchObject({
        openFiles: { soft: 4096, hard: 4096 },
        httpMaxConnections: 2458,
        grpcMaxConnections: 1228,
        grpcCallsPerCaller: 4,
        idleTimeoutMs: 30_000,
      });
    },
    2 * READY_TIMEOUT_MS,
  );
});
