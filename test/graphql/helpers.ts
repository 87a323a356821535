/** GraphQL test plumbing: a query over inject() as a given user, and a store-call counter. */
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { TestApp } from '../helpers/test-app.ts';

export interface GraphqlResponse {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
  errors?: {
    message: string;
    path?: (string | number)[];
    extensions: { code: string; http?: { status: number } } & Record<string, unknown>;
  }[];
}

/** POST /graphql as `user` of `org` (u-admin of org-a by default). */
export async function gql(
  t: TestApp,
  query: string,
  variables?: Record<string, unknown>,
  user = 'u-admin',
  org = 'org-a',
): Promise<GraphqlResponse> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await t.auth(user, org)), 'content-type': 'application/json' },
    payload: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  });
  const body = res.json();
  return { status: res.statusCode, data: body.data, errors: body.errors };
}

/** The error codes of a response, by path. */
export function errorCodes(res: GraphqlResponse): Record<string, string> {
  return Object.fromEntries((res.errors ?? []).map((e) => [(e.path ?? []).join('.'), e.extensions.code]));
}

export interface CountingStore {
  wrap(store: RegistryStore): RegistryStore;
  /** Calls per store method since the last reset. */
  calls(): Record<string, number>;
  total(): number;
  reset(): void;
}

/**
 * Wraps a real store in a Proxy that counts every method call (each is one round trip), those of
 * its insight part too (as `insights.<method>`).
 */
export function countingStore(): CountingStore {
  let counts: Record<string, number> = {};
  const counted = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(object, prop, receiver) {
        const value = Reflect.get(object, prop, receiver) as unknown;
        if (typeof prop !== 'string') return value;
        if (prefix === '' && prop === 'insights') return counted(value as object, 'insights.');
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const name = `${prefix}${prop}`;
          counts[name] = (counts[name] ?? 0) + 1;
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });
  return {
    wrap: (store) => counted(store, ''),
    calls: () => ({ ...counts }),
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    reset: () => {
      counts = {};
    },
  };
}
