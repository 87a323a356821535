/**
 * The workspace tree of an organization, kept per store between requests while the registry's
 * generation is unchanged (any import, by any process, moves it). Every caller's Access needs the
 * whole tree of its organization; reading and mapping it again for every request was a quarter of
 * a one-agent GraphQL query. The generation is read before the tree, so a tree is never kept under
 * a newer generation than its own. Bounded: at most MAX_ORGS trees per store, least recently used
 * dropped first. The workspaces are frozen: requests share them.
 */
import type { Workspace } from '../domain/types.ts';
import type { RegistryStore } from '../store/registry-port.ts';

const MAX_ORGS = 1000;

interface Tree {
  generation: string;
  workspaces: readonly Workspace[];
}

const treesOf = new WeakMap<RegistryStore, Map<string, Tree>>();

/**
 * Every workspace of `orgId`, from the cache while the store's generation is unchanged; `current`
 * reads the generation (a request passes its own, read once).
 */
export async function orgTree(
  store: RegistryStore,
  orgId: string,
  current: () => Promise<string> = () => store.generation(),
): Promise<readonly Workspace[]> {
  const generation = await current();
  let trees = treesOf.get(store);
  if (trees === undefined) {
    trees = new Map();
    treesOf.set(store, trees);
  }
  let tree = trees.get(orgId);
  if (tree === undefined || tree.generation !== generation) {
    const workspaces = (await store.listOrgWorkspaces(orgId)).map((w) => Object.freeze(w));
    tree = { generation, workspaces: Object.freeze(workspaces) };
  }
  trees.delete(orgId);
  trees.set(orgId, tree);
  if (trees.size > MAX_ORGS) trees.delete(trees.keys().next().value as string);
  return tree.workspaces;
}
