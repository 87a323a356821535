/**
 * What every caller's Access reads from the registry, kept per store between requests while the
 * registry's generation is unchanged (any import, by any process, moves it): the workspace tree of
 * an organization, and a user's memberships. Reading and mapping them again for every request was
 * a quarter of a one-agent GraphQL query (the tree) and a round trip of every PostgreSQL request
 * (the memberships). The generation is read before the value, so a value is never kept under a
 * newer generation than its own. Bounded: a number of keys per store and kind, least recently used
 * dropped first. The values are frozen: requests share them.
 */
import type { Membership, Workspace } from '../domain/types.ts';
import type { RegistryStore } from '../store/registry-port.ts';

const MAX_ORGS = 1000;
const MAX_USERS = 10_000;

interface Kept<V> {
  generation: string;
  value: V;
}

/** A value of the store by key, read once per generation: `current` reads it (a request passes its own). */
type KeptLookup<V> = (store: RegistryStore, key: string, current?: () => Promise<string>) => Promise<V>;

/** A `KeptLookup` over `read`, kept as the file comment says. */
function keptByGeneration<V>(maxKeys: number, read: (store: RegistryStore, key: string) => Promise<V>): KeptLookup<V> {
  const keptOf = new WeakMap<RegistryStore, Map<string, Kept<V>>>();
  return async (store, key, current = () => store.generation()) => {
    const generation = await current();
    let kept = keptOf.get(store);
    if (kept === undefined) {
      kept = new Map();
      keptOf.set(store, kept);
    }
    let entry = kept.get(key);
    if (entry === undefined || entry.generation !== generation) entry = { generation, value: await read(store, key) };
    kept.delete(key);
    kept.set(key, entry);
    if (kept.size > maxKeys) kept.delete(kept.keys().next().value as string);
    return entry.value;
  };
}

const frozenAll = <T extends object>(rows: T[]): readonly T[] => Object.freeze(rows.map((r) => Object.freeze(r)));

/** Every workspace of an organization, while the store's generation is unchanged; at most 1,000 per store. */
export const orgTree: KeptLookup<readonly Workspace[]> = keptByGeneration(MAX_ORGS, async (store, orgId) =>
  frozenAll(await store.listOrgWorkspaces(orgId)),
);

/** A user's direct memberships, kept like `orgTree`; at most 10,000 users per store. */
export const userMemberships: KeptLookup<readonly Membership[]> = keptByGeneration(MAX_USERS, async (store, userId) =>
  frozenAll(await store.getMembershipsOfUser(userId)),
);
