/**
 * Process entry: config -> stores -> demo seed -> authenticator -> app -> listen, and a graceful
 * shutdown on SIGINT/SIGTERM. Everything else lives in buildApp so tests never need a process.
 */
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from './app.ts';
import { createAuthenticator } from './auth/authenticator.ts';
import { loadDevIssuer } from './auth/dev-issuer.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createMetrics, instrumentStore } from './observability/metrics.ts';
import { startOtlpGrpc } from './grpc/otlp-grpc.ts';
import { raiseOpenFileLimit, type RaisedLimit } from './open-files.ts';
import { openRegistryStore } from './store/open-registry.ts';
import { openTraceStore } from './store/open-traces.ts';
import { RedisRateLimiter } from './store/redis/rate-limiter.ts';
import { RedisKeyValueCache } from './store/redis/kv-cache.ts';
import { InProcessRateLimiter } from './store/memory/rate-limiter.ts';
import type { RateLimiter } from './store/rate-limit-port.ts';
import { demoApiKeys, seedDemoIfEmpty, seedDemoTracesIfEmpty } from './seed/seed.ts';
import { startRetention } from './otlp/retention.ts';
import { outboxBound, startWebhooks } from './insights/webhooks/start.ts';
import { webhookGuard } from './insights/webhook-guard.ts';
import { compact } from './shared/compact.ts';
import { startDetection } from './insights/scheduler.ts';
import { startInsightRetention } from './insights/retention.ts';
import { STEP_S } from './insights/rules.ts';

async function printDevHint(config: Config, origin: string): Promise<void> {
  if (!config.auth.devIssuer || !config.seedDemo) return;
  const issuer = await loadDevIssuer(config.dataDir);
  const token = await issuer.mint({ sub: 'user-alice', org: 'org-acme', ttlSeconds: 3600 });
  process.stdout.write(
    `\nDemo data is loaded. Try (token valid 1 h; mint more with npm run token):\n` +
      `  curl -s -H "Authorization: Bearer ${token}" '${origin}/mcp/v1/tools?limit=5'\n` +
      // The fragment never reaches the server: the console page keeps it in the tab's sessionStorage.
      `  console (signed in as user-alice): ${origin}/console#token=${token}\n\n`,
  );
}

/** The caps start-up derived (or was given), and the open-file limit they were derived from. */
function logConnectionCaps(log: FastifyBaseLogger, config: Config, openFiles: RaisedLimit): void {
  const { connections } = config;
  log.info(
    {
      openFiles: { soft: openFiles.soft ?? 'unknown', hard: openFiles.hard ?? 'unknown' },
      httpMaxConnections: connections.httpMax,
      ...(config.otlpGrpcPort !== undefined
        ? { grpcMaxConnections: connections.grpcMax, grpcCallsPerCaller: connections.grpcCallsPerCaller }
        : {}),
      idleTimeoutMs: connections.idleTimeoutMs,
    },
    'connection caps',
  );
  if (openFiles.note !== undefined) log.warn({ openFiles }, openFiles.note);
}

async function main(): Promise<void> {
  // Before the configuration: the connection caps are derived from the limit in force.
  const openFiles = await raiseOpenFileLimit();
  let config: Config;
  try {
    config = loadConfig(undefined, openFiles.soft);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  const metrics = createMetrics();
  const registry = instrumentStore(
    await openRegistryStore(config, (message) => process.stdout.write(`${message}\n`)),
    'registry',
    metrics,
    ['insights'],
  );
  if (config.seedDemo && (await seedDemoIfEmpty(registry))) {
    process.stdout.write('seeded demo data into an empty registry\n');
  }
  const traces = instrumentStore(await openTraceStore(config), 'traces', metrics);
  if (config.seedDemo && (await seedDemoTracesIfEmpty(registry, traces, config.demoTraceSpans))) {
    process.stdout.write(`seeded ${config.demoTraceSpans} demo spans into an empty trace store\n`);
  }
  const authenticator = await createAuthenticator(config, registry, {
    onJwksFetch: (outcome) => metrics.jwksRefreshes.inc({ outcome }),
    // Demo credentials are public: never honoured in production, even in a store seeded by a dev run.
    refusedApiKeys: config.nodeEnv === 'production' ? demoApiKeys() : [],
  });
  // Shared counters when several replicas run (REDIS_URL); this process's memory otherwise.
  const rateLimiter: RateLimiter =
    config.redisUrl !== undefined ? new RedisRateLimiter(config.redisUrl) : new InProcessRateLimiter();
  const apqCache = config.redisUrl !== undefined ? new RedisKeyValueCache(config.redisUrl) : undefined;
  // Refused webhook targets are logged by the app's logger, there once the app is built.
  const guard = await webhookGuard(config, { info: (obj, msg) => app.log.info(obj, msg) });
  const app = await buildApp({
    services: { config, registry, traces, metrics, ...compact({ webhooks: guard }) },
    authenticator,
    logger: { level: config.logLevel },
    metrics,
    rateLimiter,
    ...(apqCache !== undefined ? { apqCache } : {}),
  });

  const retention = startRetention(traces, config.traceRetentionDays, app.log);
  const webhooks = await startWebhooks(config, registry, metrics, app.log);
  const detection = startDetection({
    traces,
    evaluations: traces,
    insights: registry.insights,
    state: registry.detection,
    config: config.detection,
    outbox: outboxBound(config.webhooks, metrics, app.log),
    metrics: metrics.detection,
    log: app.log,
  });
  const insightRetention = startInsightRetention({
    insights: registry.insights,
    days: config.insightRetentionDays,
    lagS: config.detection.settleS + STEP_S,
    log: app.log,
    pruned: metrics.detection.pruned,
  });
  const origin = await app.listen({ host: config.host, port: config.port });
  const grpc =
    config.otlpGrpcPort === undefined
      ? null
      : await startOtlpGrpc(app, {
          config,
          port: config.otlpGrpcPort,
          authenticate: (header) => authenticator.authenticate(header),
          registry,
          metrics,
        });
  if (grpc !== null) app.log.info({ port: grpc.port }, 'OTLP over gRPC listening');
  logConnectionCaps(app.log, config, openFiles);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    try {
      retention.stop();
      detection.stop();
      insightRetention.stop();
      await webhooks?.stop();
      await grpc?.close();
      await app.close(); // closes the stores, authenticator, limiter and cache too (see AppOptions)
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  await printDevHint(config, origin);
}

await main();
