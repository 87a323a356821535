/**
 * The development issuer's key file on a busy machine (src/auth/dev-issuer.ts): here every file
 * write first leaves the file empty for a while, as a slow disk can. Processes starting together
 * into an empty DATA_DIR must still all get the one key, never a half-written file (CI saw
 * "Unexpected end of JSON input" when the key was written in place).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const writeFile: typeof real.writeFile = async (file, data, options) => {
    await real.writeFile(file, '', options);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await real.writeFile(file, data, typeof options === 'object' ? { ...options, flag: 'w' } : options);
  };
  return { ...real, writeFile, default: { ...real, writeFile } };
});

describe('the development issuer on a slow disk', () => {
  it('gives processes starting together one whole key, and leaves only the key file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dev-issuer-race-'));
    const loads = await Promise.allSettled(Array.from({ length: 4 }, () => loadDevIssuer(dir)));
    expect(loads.map((l) => l.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    const kids = loads.map((l) => (l.status === 'fulfilled' ? l.value.publicJwk.kid : null));
    expect(new Set(kids).size).toBe(1);
    expect(fs.readdirSync(dir)).toEqual(['dev-issuer.jwk.json']);
    expect(fs.statSync(path.join(dir, 'dev-issuer.jwk.json')).mode & 0o777).toBe(0o600);
  });
});
