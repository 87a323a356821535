/**
 * Hive Gateway (@graphql-hive/gateway) in process, as a router in front of our subgraph: the
 * supergraph served by `createGatewayRuntime` on a loopback port of its own, with
 * - demand control (`demandControl`): `maxCost`, the estimate in the response's `extensions.cost`;
 * - JWT authentication (`useJWT`): our dev issuer's ES256 key, an absent token let through (the
 *   directives decide), a bad one refused; the claims are not forwarded in `extensions`;
 * - the directives (`genericAuth`, protect-granular): `@authenticated`, and `@policy` with the
 *   policies of routerPolicies below;
 * - the caller's `Authorization` forwarded to our subgraph only (`propagateHeaders`), which
 *   authenticates it again; a foreign subgraph never sees it.
 *
 * The package is loaded by URL and the part of its API used here is declared below (names and
 * shapes from its index.d.ts, 2.15): its own declarations pull in `/// <reference lib="dom" />`
 * (through @whatwg-node/fetch), which would lay the DOM's fetch types over Node's in the whole
 * program and break `tsc` elsewhere.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportSPKI, importJWK, type CryptoKey, type JWTPayload } from 'jose';
import { clientOfToken } from '../../src/auth/client-tokens.ts';
import type { DevIssuer } from '../../src/auth/dev-issuer.ts';
import { CLIENT_TOKEN_SHAPES } from '../../src/config.ts';

type SigningKeyProvider = (kid?: string) => Promise<string> | string;
type TokenLookup = (params: { request: Request; url: URL; serverContext: Record<string, unknown> }) => unknown;

interface GatewayPlugin {
  onFetch?: (payload: { url: string; options: { body?: unknown; headers?: Record<string, string> } }) => void;
}

interface GatewayConfig {
  supergraph: string;
  logging: boolean;
  demandControl: { maxCost: number; includeExtensionMetadata: boolean };
  genericAuth: {
    mode: 'protect-granular';
    resolveUserFn: (context: { jwt?: { payload: JWTPayload } }) => JWTPayload | null;
    extractPolicies: (user: JWTPayload) => string[];
    rejectUnauthenticated: boolean;
  };
  propagateHeaders: {
    fromClientToSubgraphs: (payload: { request: Request; subgraphName: string }) => Record<string, string | null>;
  };
  plugins: () => GatewayPlugin[];
}

type GatewayRuntime = ((req: IncomingMessage, res: ServerResponse) => void) & { dispose(): Promise<void> | void };

interface HiveGatewayModule {
  createGatewayRuntime(config: GatewayConfig): GatewayRuntime;
  useJWT(options: {
    signingKeyProviders: [SigningKeyProvider];
    tokenLookupLocations: [TokenLookup];
    tokenVerification: { algorithms: string[]; issuer: string; audience: string };
    reject: { missingToken: boolean; invalidToken: boolean };
    forward: { payload: boolean; token: boolean };
  }): GatewayPlugin;
  createInlineSigningKeyProvider(signingKey: string): SigningKeyProvider;
  extractFromHeader(options: { name: string; prefix?: string }): TokenLookup;
}

/**
 * The policies of `@policy` a router grants from a verified token (docs/api.md): a
 * client-credentials token (a service account) reads the registry; a user's token reads the
 * registry and the directory. Which workspaces either may read, only the subgraph knows.
 */
function routerPolicies(claims: JWTPayload): string[] {
  return clientOfToken(claims, CLIENT_TOKEN_SHAPES) === undefined
    ? ['registry.read', 'directory.read']
    : ['registry.read'];
}

/** One request the router sent to a subgraph, as it sent it. */
export interface SubgraphFetch {
  url: string;
  query: string;
  variables: Record<string, unknown>;
  /** The `Authorization` header the router sent with it, if any. */
  authorization: string | undefined;
}

export interface HiveRouter {
  /** The router's GraphQL endpoint. */
  url: string;
  /** Every request the router sent to a subgraph, in order. */
  fetches: SubgraphFetch[];
  close(): Promise<void>;
}

function parseBody(body: unknown): { query: string; variables?: Record<string, unknown> } {
  if (typeof body !== 'string') throw new Error('the router sent a body that is not a string');
  return JSON.parse(body) as { query: string; variables?: Record<string, unknown> };
}

/** Starts Hive Gateway on `supergraphSdl`, trusting the tokens of `issuer`. */
export async function startHiveRouter(options: {
  supergraphSdl: string;
  issuer: DevIssuer;
  maxCost: number;
  /** The name of our subgraph in the supergraph: the only one the caller's bearer goes to. */
  ownSubgraph: string;
}): Promise<HiveRouter> {
  const hive = (await import(import.meta.resolve('@graphql-hive/gateway'))) as HiveGatewayModule;
  const { issuer } = options;
  const publicKeyPem = await exportSPKI((await importJWK(issuer.publicJwk, 'ES256')) as CryptoKey);
  const fetches: SubgraphFetch[] = [];
  const recorder: GatewayPlugin = {
    onFetch({ url, options: init }) {
      const { query, variables } = parseBody(init.body);
      const headers = new Headers(init.headers ?? {});
      fetches.push({
        url,
        query,
        variables: variables ?? {},
        authorization: headers.get('authorization') ?? undefined,
      });
    },
  };
  const runtime = hive.createGatewayRuntime({
    supergraph: options.supergraphSdl,
    logging: false,
    demandControl: { maxCost: options.maxCost, includeExtensionMetadata: true },
    genericAuth: {
      mode: 'protect-granular',
      resolveUserFn: (context) => context.jwt?.payload ?? null,
      extractPolicies: routerPolicies,
      rejectUnauthenticated: true,
    },
    propagateHeaders: {
      // Only to our subgraph: a foreign subgraph's operator must never get a token of our audience.
      fromClientToSubgraphs: ({ request, subgraphName }) =>
        subgraphName === options.ownSubgraph ? { authorization: request.headers.get('authorization') } : {},
    },
    plugins: () => [
      recorder,
      hive.useJWT({
        signingKeyProviders: [hive.createInlineSigningKeyProvider(publicKeyPem)],
        tokenLookupLocations: [hive.extractFromHeader({ name: 'authorization', prefix: 'Bearer' })],
        tokenVerification: { algorithms: ['ES256'], issuer: issuer.issuer, audience: issuer.audience },
        reject: { missingToken: false, invalidToken: true },
        forward: { payload: false, token: false },
      }),
    ],
  });
  const server = http.createServer(runtime);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    fetches,
    async close() {
      await runtime.dispose();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
