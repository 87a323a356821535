/**
 * The only reader of `process.env`. Every setting is parsed, validated and typed here; a bad
 * value stops start-up with a message naming the variable. The table in README.md lists them.
 */
import path from 'node:path';

export interface Config {
  host: string;
  port: number;
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: string;
  /** Embedded store files live here (registry.sqlite, traces.duckdb, dev issuer keys). */
  dataDir: string;
  /** PostgreSQL for both stores when set (server mode). */
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  seedDemo: boolean;
  /** Number of demo spans generated on first start. */
  demoTraceSpans: number;
  requestTimeoutMs: number;
  bodyLimitBytes: number;
  rateLimit: { perMinute: number };
  /** Entries of the per-caller response cache of read routes; 0 turns it off. */
  responseCacheEntries: number;
  auth: AuthConfig;
}

export interface AuthConfig {
  jwksUrl: string | undefined;
  jwksFile: string | undefined;
  issuers: string[];
  audience: string | undefined;
  algorithms: string[];
  clockToleranceS: number;
  orgClaim: string;
  jwksStaleS: number;
  /** Outside production a dev issuer whose keys live in DATA_DIR is trusted too. */
  devIssuer: boolean;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = str(env, 'NODE_ENV', 'development');
  if (nodeEnv !== 'development' && nodeEnv !== 'production' && nodeEnv !== 'test') {
    throw new ConfigError(`NODE_ENV must be development, production or test, got "${nodeEnv}"`);
  }
  const dataDir = path.resolve(str(env, 'DATA_DIR', './data'));
  return {
    host: str(env, 'HOST', '127.0.0.1'),
    port: int(env, 'PORT', 8080, 0, 65535),
    nodeEnv,
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    dataDir,
    databaseUrl: optional(env, 'DATABASE_URL'),
    redisUrl: optional(env, 'REDIS_URL'),
    seedDemo: bool(env, 'SEED_DEMO', true),
    demoTraceSpans: int(env, 'DEMO_TRACE_SPANS', 20000, 0),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 10000, 1),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1048576, 1024),
    rateLimit: { perMinute: int(env, 'RATE_LIMIT_PER_MIN', 600, 1) },
    responseCacheEntries: int(env, 'RESPONSE_CACHE_ENTRIES', 5000, 0),
    auth: {
      jwksUrl: optional(env, 'AUTH_JWKS_URL'),
      jwksFile: optional(env, 'AUTH_JWKS_FILE'),
      issuers: list(env, 'AUTH_ISSUERS', []),
      audience: optional(env, 'AUTH_AUDIENCE'),
      algorithms: list(env, 'AUTH_ALGORITHMS', ['RS256', 'ES256', 'EdDSA']),
      clockToleranceS: int(env, 'AUTH_CLOCK_TOLERANCE_S', 30, 0, 3600),
      orgClaim: str(env, 'AUTH_ORG_CLAIM', 'org_id'),
      jwksStaleS: int(env, 'AUTH_JWKS_STALE_S', 3600, 0),
      devIssuer: nodeEnv !== 'production',
    },
  };
}
