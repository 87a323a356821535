/**
 * The only reader of `process.env`. Every setting is parsed, validated and typed here; a bad
 * value stops start-up with a message naming the variable. docs/configuration.md lists them.
 */
import path from 'node:path';
import { bool, ConfigError, int, list, optional, str, type Env } from './config-values.ts';
import { webhookConfig, type WebhookConfig } from './config-webhooks.ts';
import { detectionConfig, insightRetentionDays, type DetectionConfig } from './config-detection.ts';

export { ConfigError } from './config-values.ts';

/** The client-credentials token shapes auth/client-tokens.ts can recognise. */
export const CLIENT_TOKEN_SHAPES = ['rfc9068', 'auth0', 'keycloak', 'entra'] as const;
export type ClientTokenShape = (typeof CLIENT_TOKEN_SHAPES)[number];

export interface Config {
  host: string;
  port: number;
  /** OTLP over gRPC listens here (on `host`) when set; off by default. */
  otlpGrpcPort: number | undefined;
  /** GraphQL introspection and the browser explorer at GET /graphql: on outside production. */
  graphqlExplorer: boolean;
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
  /** Spans and metric points older than this many days are deleted (hourly); 0 keeps them all. */
  traceRetentionDays: number;
  /** Insights whose window ended more than this many days ago are deleted (hourly); 0 keeps them all. */
  insightRetentionDays: number;
  requestTimeoutMs: number;
  /** Event-loop delay (ms) above which new requests are shed with 503; 0 turns shedding off. */
  maxEventLoopDelayMs: number;
  bodyLimitBytes: number;
  rateLimit: { perMinute: number };
  /** OTLP ingestion quotas per caller and per organization (otlp/ingest-quotas.ts). */
  ingestQuotas: IngestQuotaLimits;
  /**
   * Workspaces whose MCP servers anyone may read over the MCP Registry API without credentials
   * (GET /v0.1/…); empty (the default): every request needs credentials.
   */
  mcpRegistryPublicWorkspaces: string[];
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>`. */
  metricsToken: string | undefined;
  /**
   * The service's public URL (scheme, host, optional port and path prefix; no trailing slash):
   * absolute URLs in answers (agent cards, the AI catalog) start with it. Unset: the request's own
   * origin, from its validated `Host` header (shared/base-url.ts).
   */
  publicBaseUrl: string | undefined;
  /** Entries of the per-caller response cache of read routes; 0 turns it off. */
  responseCacheEntries: number;
  /** Bytes of cached response bodies kept at most, all entries together. */
  responseCacheBytes: number;
  /** DESIGN §12: every request's work is bounded by these before it starts. */
  bounds: Bounds;
  /** Connection caps and timeouts of both ports (docs/deployment.md "Connections"). */
  connections: ConnectionLimits;
  /** Memory of the embedded trace engine, bounded whatever the input. */
  traceEngine: TraceEngineConfig;
  /** Webhook deliveries of insights (config-webhooks.ts). */
  webhooks: WebhookConfig;
  /** Insight detection on a schedule (config-detection.ts). */
  detection: DetectionConfig;
  auth: AuthConfig;
}

/** The bounds of DESIGN §12 (docs/configuration.md lists their variables). */
export interface Bounds {
  /** An OTLP body after decompression (also the largest body read from the wire). */
  otlpMaxDecompressedBytes: number;
  /** Spans per OTLP request. */
  otlpMaxSpans: number;
  /** Bytes of a stored dimension value (harness, skill, command, mcp, tool, model, user, session). */
  maxValueBytes: number;
  /** Distinct agent names as sent kept per workspace and UTC day (store/agent-names.ts). */
  agentNamesPerDay: number;
  /** Per span: tokens, cost (USD) and duration (seconds), each from 0. */
  spanMaxTokens: number;
  spanMaxCostUsd: number;
  spanMaxDurationS: number;
  /** Points of a statistics answer: queries × groups × buckets, ×2 with compare. */
  statsMaxPoints: number;
  /** Estimated cost of a GraphQL operation. */
  graphqlMaxCost: number;
}

/**
 * Records (spans, log records, metric data points) a second and bytes (decompressed OTLP bodies)
 * a UTC day, per caller and per organization; 0 turns that quota off.
 */
export interface IngestQuotaLimits {
  callerRecordsPerS: number;
  callerBytesPerDay: number;
  orgRecordsPerS: number;
  orgBytesPerDay: number;
}

/**
 * What one peer can hold open: connections, idle time, calls. The caps stay below the process's
 * open-file limit, so that a flood of connections is refused at the door instead of exhausting
 * the descriptors the stores and the samplers need.
 */
interface ConnectionLimits {
  /** Open connections to the HTTP port; more are closed as soon as they are accepted. */
  httpMax: number;
  /** Open connections to the gRPC port (when it listens); more are closed as soon as they are accepted. */
  grpcMax: number;
  /** A connection with no request (HTTP) or no call (gRPC) in progress is closed after this long. */
  idleTimeoutMs: number;
  /** A gRPC connection is asked to go away (GOAWAY) after this long, so clients spread over replicas. */
  grpcMaxAgeMs: number;
  /** gRPC calls one caller may have in flight on this process, over all its connections. */
  grpcCallsPerCaller: number;
}

interface TraceEngineConfig {
  /** Dimension values the DuckDB engine keeps in memory (a cache of its dictionary table). */
  dictionaryValues: number;
  /** DuckDB's memory_limit, in MiB. */
  memoryLimitMb: number;
  /**
   * Identity fingerprints the DuckDB writer holds per table, a UTC day at a time, to recognize
   * resent rows without reading its file on every write (store/duckdb/day-identities.ts).
   */
  identityKeys: number;
}

interface AuthConfig {
  jwksUrl: string | undefined;
  jwksFile: string | undefined;
  issuers: string[];
  audience: string | undefined;
  algorithms: string[];
  clockToleranceS: number;
  orgClaim: string;
  jwksStaleS: number;
  /** Least time between two fetches of a remote JWKS (an unknown kid refreshes at most this often). */
  jwksCooldownS: number;
  /** Outside production a dev issuer whose keys live in DATA_DIR is trusted too. */
  devIssuer: boolean;
  /** The client-credentials token shapes recognised (auth/client-tokens.ts). */
  clientTokenShapes: ClientTokenShape[];
}

function clientTokenShapes(names: string[]): ClientTokenShape[] {
  const known: readonly string[] = CLIENT_TOKEN_SHAPES;
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw new ConfigError(
      `AUTH_CLIENT_TOKEN_SHAPES: unknown shape ${unknown.join(', ')} (known: ${CLIENT_TOKEN_SHAPES.join(', ')})`,
    );
  }
  return names as ClientTokenShape[];
}

const GiB = 1024 * 1024 * 1024;

/**
 * Production fails closed (DESIGN §12): it needs an audience and a trusted issuer with keys, and
 * says which variable is missing instead of starting with rules that accept or reject everything.
 */
function checkProduction(auth: AuthConfig): void {
  if (auth.audience === undefined)
    throw new ConfigError(
      'AUTH_AUDIENCE is required when NODE_ENV=production (tokens for any audience would be accepted)',
    );
  if (auth.issuers.length === 0)
    throw new ConfigError('AUTH_ISSUERS is required when NODE_ENV=production (no issuer would be trusted)');
  if (auth.jwksUrl === undefined && auth.jwksFile === undefined) {
    throw new ConfigError(
      'AUTH_JWKS_URL or AUTH_JWKS_FILE is required when NODE_ENV=production (no signing key would be trusted)',
    );
  }
}

/** Records per second and bytes per UTC day, per caller and per organization (0: off). */
function ingestQuotas(env: Env): IngestQuotaLimits {
  return {
    callerRecordsPerS: int(env, 'INGEST_QUOTA_CALLER_RECORDS_PER_S', 100_000, 0),
    callerBytesPerDay: int(env, 'INGEST_QUOTA_CALLER_BYTES_PER_DAY', 10 * GiB, 0),
    orgRecordsPerS: int(env, 'INGEST_QUOTA_ORG_RECORDS_PER_S', 200_000, 0),
    orgBytesPerDay: int(env, 'INGEST_QUOTA_ORG_BYTES_PER_DAY', 20 * GiB, 0),
  };
}

/** Descriptors kept for the process's own files, pools, workers and pipes, whatever the limit. */
const RESERVED_FILES_MIN = 256;
/** The limit assumed where the process cannot read its own (not Linux). */
const UNKNOWN_FILE_LIMIT = 1024;
/** An idle HTTP/2 session costs tens of KB: beyond these, memory rather than descriptors is the bound. */
const HTTP_MAX_CONNECTIONS_CEILING = 20_000;
const GRPC_MAX_CONNECTIONS_CEILING = 5_000;

/** The descriptors the process keeps for itself: 256, or a tenth of the limit when that is more. */
function reservedFiles(openFiles: number): number {
  return Math.max(RESERVED_FILES_MIN, Math.ceil(openFiles / 10));
}

/**
 * The connection caps and timeouts. Each connection is one descriptor; the caps by default share
 * the open-file limit, less what the process keeps for itself, two thirds to HTTP and one third to
 * gRPC (all to HTTP when gRPC is off). Caps set explicitly that leave the process fewer than 256
 * descriptors stop start-up, naming the variable.
 */
function connectionLimits(env: Env, openFiles: number | undefined, grpcOn: boolean): ConnectionLimits {
  const limit = openFiles ?? UNKNOWN_FILE_LIMIT;
  const budget = Math.max(2, limit - reservedFiles(limit));
  const grpcShare = Math.max(1, Math.floor(budget / 3));
  const httpShare = grpcOn ? budget - grpcShare : budget;
  const httpMax = int(env, 'HTTP_MAX_CONNECTIONS', Math.min(HTTP_MAX_CONNECTIONS_CEILING, httpShare), 1, 1_000_000);
  const grpcMax = int(
    env,
    'OTLP_GRPC_MAX_CONNECTIONS',
    Math.min(GRPC_MAX_CONNECTIONS_CEILING, grpcShare),
    1,
    1_000_000,
  );
  const explicit =
    optional(env, 'HTTP_MAX_CONNECTIONS') !== undefined || optional(env, 'OTLP_GRPC_MAX_CONNECTIONS') !== undefined;
  if (explicit && openFiles !== undefined && httpMax + (grpcOn ? grpcMax : 0) > openFiles - RESERVED_FILES_MIN) {
    const names = grpcOn ? 'HTTP_MAX_CONNECTIONS + OTLP_GRPC_MAX_CONNECTIONS' : 'HTTP_MAX_CONNECTIONS';
    throw new ConfigError(
      `${names} (${httpMax + (grpcOn ? grpcMax : 0)}) leave fewer than ${RESERVED_FILES_MIN} of the ${openFiles} open files the process may hold for its stores; lower them or raise the limit (ulimit -n)`,
    );
  }
  return {
    httpMax,
    grpcMax,
    idleTimeoutMs: int(env, 'IDLE_TIMEOUT_MS', 30_000, 100, 86_400_000),
    grpcMaxAgeMs: int(env, 'OTLP_GRPC_MAX_CONNECTION_AGE_MS', 1_800_000, 1000, 86_400_000 * 7),
    grpcCallsPerCaller: int(env, 'OTLP_GRPC_CALLS_PER_CALLER', 4, 1, 10_000),
  };
}

/**
 * A quota smaller than the largest request the bounds admit would refuse such a request forever
 * (exporters retry a 429): each quota is 0 (off) or at least that request.
 */
function checkIngestQuotas(quotas: IngestQuotaLimits, bounds: Bounds): void {
  const rules: [string, number, string, number][] = [
    ['INGEST_QUOTA_CALLER_RECORDS_PER_S', quotas.callerRecordsPerS, 'OTLP_MAX_SPANS', bounds.otlpMaxSpans],
    ['INGEST_QUOTA_ORG_RECORDS_PER_S', quotas.orgRecordsPerS, 'OTLP_MAX_SPANS', bounds.otlpMaxSpans],
    [
      'INGEST_QUOTA_CALLER_BYTES_PER_DAY',
      quotas.callerBytesPerDay,
      'OTLP_MAX_DECOMPRESSED_BYTES',
      bounds.otlpMaxDecompressedBytes,
    ],
    [
      'INGEST_QUOTA_ORG_BYTES_PER_DAY',
      quotas.orgBytesPerDay,
      'OTLP_MAX_DECOMPRESSED_BYTES',
      bounds.otlpMaxDecompressedBytes,
    ],
  ];
  for (const [name, quota, boundName, bound] of rules)
    if (quota !== 0 && quota < bound)
      throw new ConfigError(`${name} must be 0 (off) or at least ${boundName} (${bound}), got ${quota}`);
}

/** A bearer token for /metrics: long enough not to be guessed, and sendable in a header as is. */
function metricsToken(env: Env): string | undefined {
  const token = optional(env, 'METRICS_TOKEN');
  if (token === undefined) return undefined;
  if (!/^[\x21-\x7e]{16,4096}$/.test(token))
    throw new ConfigError('METRICS_TOKEN must be 16 to 4096 printable ASCII characters without spaces');
  return token;
}

/**
 * An absolute http(s) URL without credentials, query or fragment; its trailing slashes dropped, so
 * paths are appended to it as they are.
 */
function publicBaseUrl(env: Env): string | undefined {
  const raw = optional(env, 'PUBLIC_BASE_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`PUBLIC_BASE_URL must be an http or https URL, got "${raw}"`);
  if (url.username !== '' || url.password !== '' || /[?#]/.test(raw))
    throw new ConfigError(`PUBLIC_BASE_URL must have no credentials, query or fragment, got "${raw}"`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * `openFiles` is the process's open-file limit (main.ts reads it, after raising it); without it the
 * connection caps are derived from a conservative 1,024.
 */
export function loadConfig(env: Env = process.env, openFiles?: number): Config {
  const nodeEnv = str(env, 'NODE_ENV', 'development');
  if (nodeEnv !== 'development' && nodeEnv !== 'production' && nodeEnv !== 'test') {
    throw new ConfigError(`NODE_ENV must be development, production or test, got "${nodeEnv}"`);
  }
  const production = nodeEnv === 'production';
  const dataDir = path.resolve(str(env, 'DATA_DIR', './data'));
  const auth: AuthConfig = {
    jwksUrl: optional(env, 'AUTH_JWKS_URL'),
    jwksFile: optional(env, 'AUTH_JWKS_FILE'),
    issuers: list(env, 'AUTH_ISSUERS', []),
    audience: optional(env, 'AUTH_AUDIENCE'),
    algorithms: list(env, 'AUTH_ALGORITHMS', ['RS256', 'ES256', 'EdDSA']),
    clockToleranceS: int(env, 'AUTH_CLOCK_TOLERANCE_S', 30, 0, 3600),
    orgClaim: str(env, 'AUTH_ORG_CLAIM', 'org_id'),
    jwksStaleS: int(env, 'AUTH_JWKS_STALE_S', 3600, 0),
    jwksCooldownS: int(env, 'AUTH_JWKS_COOLDOWN_S', 30, 0, 3600),
    devIssuer: !production,
    clientTokenShapes: clientTokenShapes(list(env, 'AUTH_CLIENT_TOKEN_SHAPES', [...CLIENT_TOKEN_SHAPES])),
  };
  if (production) checkProduction(auth);
  const otlpGrpcPort =
    optional(env, 'OTLP_GRPC_PORT') === undefined ? undefined : int(env, 'OTLP_GRPC_PORT', 0, 0, 65535);
  const config: Config = {
    host: str(env, 'HOST', '127.0.0.1'),
    port: int(env, 'PORT', 8080, 0, 65535),
    graphqlExplorer: bool(env, 'GRAPHQL_EXPLORER', nodeEnv !== 'production'),
    otlpGrpcPort,
    nodeEnv,
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    dataDir,
    databaseUrl: optional(env, 'DATABASE_URL'),
    redisUrl: optional(env, 'REDIS_URL'),
    // Never by default in production: the demo data set carries credentials anyone can read.
    seedDemo: bool(env, 'SEED_DEMO', !production),
    demoTraceSpans: int(env, 'DEMO_TRACE_SPANS', 20000, 0),
    traceRetentionDays: int(env, 'TRACE_RETENTION_DAYS', 30, 0, 36_500),
    insightRetentionDays: insightRetentionDays(env),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 10000, 1),
    maxEventLoopDelayMs: int(env, 'MAX_EVENT_LOOP_DELAY_MS', 1000, 0),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1048576, 1024),
    rateLimit: { perMinute: int(env, 'RATE_LIMIT_PER_MIN', 600, 1) },
    ingestQuotas: ingestQuotas(env),
    mcpRegistryPublicWorkspaces: list(env, 'MCP_REGISTRY_PUBLIC_WORKSPACES', []),
    metricsToken: metricsToken(env),
    publicBaseUrl: publicBaseUrl(env),
    responseCacheEntries: int(env, 'RESPONSE_CACHE_ENTRIES', 5000, 0),
    responseCacheBytes: int(env, 'RESPONSE_CACHE_BYTES', 64 * 1024 * 1024, 0),
    bounds: {
      otlpMaxDecompressedBytes: int(env, 'OTLP_MAX_DECOMPRESSED_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      otlpMaxSpans: int(env, 'OTLP_MAX_SPANS', 10_000, 1, 1_000_000),
      // At most 256: PostgreSQL's rollup and invocation indexes hold nine such values in a 2,704-byte index row.
      maxValueBytes: int(env, 'OTLP_MAX_VALUE_BYTES', 256, 16, 256),
      agentNamesPerDay: int(env, 'OTLP_MAX_AGENT_NAMES', 1000, 0, 1_000_000),
      spanMaxTokens: int(env, 'SPAN_MAX_TOKENS', 100_000_000, 1, Number.MAX_SAFE_INTEGER),
      spanMaxCostUsd: int(env, 'SPAN_MAX_COST_USD', 10_000, 1, 1_000_000_000),
      spanMaxDurationS: int(env, 'SPAN_MAX_DURATION_S', 30 * 86400, 1, 366 * 86400),
      statsMaxPoints: int(env, 'STATS_MAX_POINTS', 50_000, 100, 10_000_000),
      graphqlMaxCost: int(env, 'GRAPHQL_MAX_COST', 25_000, 100, 10_000_000),
    },
    connections: connectionLimits(env, openFiles, otlpGrpcPort !== undefined),
    traceEngine: {
      dictionaryValues: int(env, 'TRACE_DICTIONARY_VALUES', 10_000, 100, 10_000_000),
      memoryLimitMb: int(env, 'TRACE_MEMORY_LIMIT_MB', 1024, 64, 1_048_576),
      identityKeys: int(env, 'TRACE_IDENTITY_KEYS', 4_000_000, 0, 1_000_000_000),
    },
    webhooks: webhookConfig(env),
    detection: detectionConfig(env, nodeEnv),
    auth,
  };
  checkIngestQuotas(config.ingestQuotas, config.bounds);
  return config;
}
