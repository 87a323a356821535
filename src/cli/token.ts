/**
 * `npm run token -- [--sub ID] [--org ID] [--ttl 1h] [--client ID]`: prints a token signed by
 * the dev issuer (DATA_DIR keys). Refused in production, where only configured issuers count.
 */
import { parseArgs } from 'node:util';
import { loadDevIssuer } from '../auth/dev-issuer.ts';
import { loadConfig } from '../config.ts';

const { values } = parseArgs({
  options: {
    sub: { type: 'string', default: 'user-alice' },
    org: { type: 'string', default: 'org-acme' },
    ttl: { type: 'string', default: '1h' },
    client: { type: 'string' },
  },
});

function seconds(ttl: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(ttl);
  if (m === null) throw new Error(`--ttl must look like 90s, 15m, 1h or 2d, got ${ttl}`);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? '') as '' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}

const config = loadConfig();
if (!config.auth.devIssuer) {
  process.stderr.write('the dev issuer is disabled in production; use your identity provider\n');
  process.exit(1);
}
const issuer = await loadDevIssuer(config.dataDir, {
  ...(config.auth.audience ? { audience: config.auth.audience } : {}),
  orgClaim: config.auth.orgClaim,
});
const token =
  values.client !== undefined
    ? await issuer.mint({ sub: values.client, ttlSeconds: seconds(values.ttl), claims: { client_id: values.client } })
    : await issuer.mint({ sub: values.sub, org: values.org, ttlSeconds: seconds(values.ttl) });
process.stdout.write(`${token}\n`);
