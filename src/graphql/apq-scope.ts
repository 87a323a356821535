/**
 * Automatic persisted queries scoped per organization (DESIGN §6: nothing of one tenant is seen by
 * another). Apollo looks a hash up before any plugin can see the request, with the hash alone; a
 * shared cache would tell a caller whether any other organization ever sent a query text. So the
 * /graphql handler runs each request inside `runInOrg` (an AsyncLocalStorage that follows the
 * request through Apollo's pipeline), and the cache Apollo is given prefixes every key with the
 * caller's organization. It wraps any KeyValueCache (Apollo's in-memory LRU, the shared Redis one):
 * replicas still share the entries of one organization. Outside `runInOrg` the cache is empty and
 * keeps nothing (fail closed).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { PersistedQueryOptions } from '@apollo/server';

type KeyValueCache = NonNullable<PersistedQueryOptions['cache']>;

const orgOfRequest = new AsyncLocalStorage<string>();

/** Runs `handle` (one GraphQL request) with the persisted queries of organization `orgId`. */
export function runInOrg<T>(orgId: string, handle: () => T): T {
  return orgOfRequest.run(orgId, handle);
}

/** The key of `key` in the current organization, or undefined outside a request. */
function scoped(key: string): string | undefined {
  const org = orgOfRequest.getStore();
  // Encoded so that no organization id can spell another's prefix (ids may contain ':').
  return org === undefined ? undefined : `${encodeURIComponent(org)}:${key}`;
}

/**
 * `inner` (read when used, so it may be Apollo's own cache, built with the server) with its keys
 * scoped to the organization of the request being handled.
 */
export function orgScopedCache(inner: () => KeyValueCache): KeyValueCache {
  return {
    async get(key) {
      const k = scoped(key);
      return k === undefined ? undefined : inner().get(k);
    },
    async set(key, value, options) {
      const k = scoped(key);
      if (k !== undefined) await inner().set(k, value, options);
    },
    async delete(key) {
      const k = scoped(key);
      return k === undefined ? false : inner().delete(k);
    },
  };
}
