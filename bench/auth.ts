/**
 * Authentication overhead: requests/s of `GET /mcp/v1/tools?limit=50` with the real authenticator
 * (jose verification, token cache) against the same app whose authenticator skips verification
 * and returns the same caller, in one run, same connections. Target ratio >= 0.8.
 * Usage: npm run bench:auth [-- --seconds 8 --connections 10]
 */
import type { Authenticator } from '../src/auth/caller.ts';
import { argNumber, fmt, load, startDemoApp } from './harness.ts';

const seconds = argNumber('seconds', 8);
const connections = argNumber('connections', 10);
const trusting: Authenticator = {
  authenticate: async () => ({ kind: 'user', orgId: 'org-acme', userId: 'user-alice' }),
};

const real = await startDemoApp();
const open = await startDemoApp({ authenticator: trusting });
const path = '/mcp/v1/tools?limit=50';
console.log(`auth benchmark: ${path}, ${seconds}s per run, ${connections} connections`);
{
  const without = await load({
    url: `${open.url}${path}`,
    headers: { authorization: 'Bearer anything' },
    seconds,
    connections,
  });
  const withAuth = await load({
    url: `${real.url}${path}`,
    headers: { authorization: `Bearer ${real.token}` },
    seconds,
    connections,
  });
  console.log(`  auth skipped            ${fmt(without)}`);
  console.log(`  jose + token cache      ${fmt(withAuth)}`);
  console.log(`  ratio ${(withAuth.rps / without.rps).toFixed(2)} (target >= 0.8)`);
}
await real.close();
await open.close();
