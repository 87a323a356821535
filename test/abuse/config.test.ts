/**
 * Production fails closed: it refuses to start without an audience and a
 * trusted issuer, names the variable, never seeds demo data unless asked, and never honours the
 * demo credentials that anyone can read in the source.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { ApiError } from '../../src/errors.ts';
import { demoApiKeys, seedDemoIfEmpty } from '../../src/seed/seed.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { READY_TIMEOUT_MS, freePort, waitUntilReady } from '../fixtures/service-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});
const tempDir = async () => {
  const d = await fs.mkdtemp(path.join(os.tmpdir(), 'gw-cfg-'));
  dirs.push(d);
  return d;
};

const trusted = {
  AUTH_AUDIENCE: 'gateway-api',
  AUTH_ISSUERS: 'https://idp.test',
  AUTH_JWKS_URL: 'https://idp.test/jwks.json',
};

function refusal(env: Record<string, string>): string {
  try {
    loadConfig({ NODE_ENV: 'production', ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return 'started';
}

describe('production configuration', () => {
  it('refuses to start without an audience, an issuer allow-list or signing keys, naming the variable', () => {
    expect(refusal({ ...trusted, AUTH_AUDIENCE: '' })).toMatch(/^AUTH_AUDIENCE is required when NODE_ENV=production/);
    expect(refusal({ ...trusted, AUTH_ISSUERS: '' })).toMatch(/^AUTH_ISSUERS is required when NODE_ENV=production/);
    expect(refusal({ ...trusted, AUTH_JWKS_URL: '' })).toMatch(
      /^AUTH_JWKS_URL or AUTH_JWKS_FILE is required when NODE_ENV=production/,
    );
    expect(refusal({})).toMatch(/^AUTH_AUDIENCE is required/);
    expect(refusal(trusted)).toBe('started');
  });

  it(
    'the process exits with the message instead of starting',
    async () => {
      const dataDir = await tempDir();
      const child = spawn(process.execPath, ['src/main.ts'], {
        cwd: ROOT,
        env: {
          ...process.env,
          NODE_ENV: 'production',
          DATA_DIR: dataDir,
          PORT: '0',
          AUTH_AUDIENCE: '',
          AUTH_ISSUERS: 'https://idp.test',
          AUTH_JWKS_URL: 'https://idp.test/jwks.json',
        },
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).toBe(2);
      expect(stderr).toMatch(/^configuration error: AUTH_AUDIENCE is required when NODE_ENV=production/);
    },
    2 * READY_TIMEOUT_MS,
  );

  it('seeds demo data by default outside production only', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).seedDemo).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', ...trusted }).seedDemo).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', ...trusted, SEED_DEMO: 'true' }).seedDemo).toBe(true);
  });

  it(
    'a production service seeded with the demo data on request refuses its demo API key',
    async () => {
      const dataDir = await tempDir();
      const jwks = path.join(dataDir, 'jwks.json');
      await fs.writeFile(jwks, JSON.stringify({ keys: [] }));
      const port = await freePort();
      const child = spawn(process.execPath, ['src/main.ts'], {
        cwd: ROOT,
        stdio: 'ignore',
        env: {
          ...process.env,
          ...trusted,
          AUTH_JWKS_URL: '',
          AUTH_JWKS_FILE: jwks,
          NODE_ENV: 'production',
          SEED_DEMO: 'true',
          DEMO_TRACE_SPANS: '0',
          DATA_DIR: dataDir,
          PORT: String(port),
          LOG_LEVEL: 'warn',
        },
      });
      try {
        expect(await waitUntilReady(`http://127.0.0.1:${port}`)).toBe(true);
        const res = await fetch(`http://127.0.0.1:${port}/mcp/v1/tools?limit=1`, {
          headers: { authorization: `Bearer ${demoApiKeys()[0]}` },
        });
        expect(res.status).toBe(401);
        expect(((await res.json()) as { code: string }).code).toBe('invalid_api_key');
      } finally {
        child.kill('SIGKILL');
      }
    },
    2 * READY_TIMEOUT_MS,
  );

  it('the demo API keys are refused in production, even in a store a development run seeded', async () => {
    const dataDir = await tempDir();
    const store = new SqliteRegistryStore(path.join(dataDir, 'registry.sqlite'));
    try {
      expect(await seedDemoIfEmpty(store)).toBe(true);
      const [key] = demoApiKeys();
      expect(key).toBe('agk_eegwipeJs7BvCibib6uMb15OTLzi0005');
      const dev = await createAuthenticator(loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir }), store);
      expect(await dev.authenticate(`Bearer ${key}`)).toMatchObject({ kind: 'service_account', agentId: 'agent-0005' });
      const prod = await createAuthenticator(
        loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir, ...trusted }),
        store,
        { refusedApiKeys: demoApiKeys() },
      );
      const refused = await prod.authenticate(`Bearer ${key}`).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe('invalid_api_key');
    } finally {
      await store.close();
    }
  });
});
