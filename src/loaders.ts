/**
 * The per-request DataLoader set (STYLE "DataLoader discipline"): one instance per request, so
 * its cache never outlives one caller's authorization. Every by-id and by-parent lookup of the
 * GraphQL resolvers (and of `_entities`) goes through here, so the number of store round trips
 * depends on the depth of a query, not on the number of items.
 *
 * Invariants: a batch function makes one store call for all its keys and returns results in key
 * order, with `null` (by-id) or `[]` (by-parent) for a key the store does not know. Loaders only
 * fetch; authorization stays with the callers, which check every object they expose.
 */
import DataLoader from 'dataloader';
import type {
  ArtifactVersion,
  Identity,
  McpServerVersion,
  Membership,
  Project,
  Relationship,
  Repo,
  User,
} from './domain/types.ts';
import type { RegistryStore } from './store/registry-port.ts';

/** The loaders of one request; each batches its keys into one store call. */
export interface Loaders {
  /** Latest artifact version by artifact id. */
  readonly artifact: DataLoader<string, ArtifactVersion | null>;
  /** Every version of an artifact, oldest first. */
  readonly artifactVersions: DataLoader<string, ArtifactVersion[]>;
  readonly project: DataLoader<string, Project | null>;
  readonly repo: DataLoader<string, Repo | null>;
  /** Users by id; `peek` answers those already loaded without a promise. */
  readonly user: PeekLoader<User | null>;
  /** Relationships with the artifact at either end. */
  readonly relationships: DataLoader<string, Relationship[]>;
  /** The service-account identity of an agent. */
  readonly identity: DataLoader<string, Identity | null>;
  /** Latest-artifact counts by kind, per workspace, project or creator. */
  readonly artifactCountsByWorkspace: DataLoader<string, Record<string, number>>;
  readonly artifactCountsByProject: DataLoader<string, Record<string, number>>;
  readonly artifactCountsByCreator: DataLoader<string, Record<string, number>>;
  readonly memberCount: DataLoader<string, number>;
  /** Direct memberships of a workspace. */
  readonly membershipsOfWorkspace: DataLoader<string, Membership[]>;
  /** Projects held directly by a workspace, ordered by id. */
  readonly projectsOfWorkspace: DataLoader<string, Project[]>;
  /** Source repositories held directly by a workspace, ordered by id. */
  readonly reposOfWorkspace: DataLoader<string, Repo[]>;
  /** Latest artifacts synced from a repository (any workspace; callers filter), ordered by id. */
  readonly artifactsOfRepo: DataLoader<string, ArtifactVersion[]>;
  /** Latest artifacts held directly by a workspace, ordered by id. */
  readonly artifactsOfWorkspace: DataLoader<string, ArtifactVersion[]>;
  /**
   * Latest artifacts created by a user, within the caller's readable workspaces, ordered by id.
   * The port lists artifacts by workspace only, so one call loads the readable scope for all keys.
   */
  readonly artifactsOfCreator: DataLoader<string, ArtifactVersion[]>;
  /** Latest version of an MCP server by id, within the caller's organization. */
  readonly mcpServer: DataLoader<string, McpServerVersion | null>;
  /** Every version of an MCP server (deleted ones included), by `published_at`. */
  readonly mcpServerVersions: DataLoader<string, McpServerVersion[]>;
  /** Latest tools whose `server_id` is the key, within the caller's readable workspaces, by name then id. */
  readonly toolsOfServer: DataLoader<string, ArtifactVersion[]>;
}

/**
 * A DataLoader whose loaded values can also be read synchronously: a field whose value an earlier
 * batch of the request already loaded answers at once, which spares graphql-js a promise per field.
 */
export class PeekLoader<V> extends DataLoader<string, V> {
  private readonly loaded: Map<string, V>;

  constructor(batch: (keys: readonly string[]) => Promise<V[]>) {
    const loaded = new Map<string, V>();
    super(async (keys) => {
      const values = await batch(keys);
      for (const [i, key] of keys.entries()) loaded.set(key, values[i] as V);
      return values;
    });
    this.loaded = loaded;
  }

  /** The value loaded (or primed) for `key` in this request, else undefined. */
  peek(key: string): V | undefined {
    return this.loaded.get(key);
  }

  override prime(key: string, value: V | PromiseLike<V> | Error): this {
    // DataLoader keeps the first value primed or loaded for a key; so does `peek`.
    if (!(value instanceof Error) && !isPromiseLike(value) && !this.loaded.has(key)) this.loaded.set(key, value);
    return super.prime(key, value);
  }

  override clear(key: string): this {
    this.loaded.delete(key);
    return super.clear(key);
  }

  override clearAll(): this {
    this.loaded.clear();
    return super.clearAll();
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** One row per key: the row whose `keyOf` equals the key, else null. */
function byKey<T>(fetch: (keys: readonly string[]) => Promise<T[]>, keyOf: (row: T) => string) {
  return async (keys: readonly string[]): Promise<(T | null)[]> => {
    const rows = new Map((await fetch(keys)).map((row) => [keyOf(row), row]));
    return keys.map((k) => rows.get(k) ?? null);
  };
}

/** Every row under each key it belongs to (a row may belong to several), in store order. */
function groupedBy<T>(fetch: (keys: readonly string[]) => Promise<T[]>, keysOf: (row: T) => string[]) {
  return async (keys: readonly string[]): Promise<T[][]> => {
    const groups = new Map<string, T[]>(keys.map((k) => [k, []]));
    for (const row of await fetch(keys)) {
      for (const k of new Set(keysOf(row))) groups.get(k)?.push(row);
    }
    return keys.map((k) => groups.get(k) as T[]);
  };
}

/** Counts by kind; `within` (the caller's readable scope) limits them to artifacts the caller can read. */
function counts(
  store: RegistryStore,
  by: 'workspace' | 'project' | 'creator',
  within?: () => Promise<readonly string[]>,
) {
  return new DataLoader<string, Record<string, number>>(async (keys) => {
    const found = await store.countArtifacts(by, keys, within === undefined ? undefined : await within());
    return keys.map((k) => found.get(k) ?? {});
  });
}

/**
 * Builds the loader set of one request. `orgId` is the caller's organization (MCP server ids are
 * unique within one); `readableWorkspaceIds` is the caller's readable scope, asked only by the
 * loaders that list across workspaces.
 */
export function createLoaders(
  store: RegistryStore,
  orgId: string,
  readableWorkspaceIds: () => Promise<readonly string[]>,
): Loaders {
  const artifact = new DataLoader(
    byKey(
      (ids) => store.getArtifacts(ids),
      (a) => a.id,
    ),
  );
  const project = new DataLoader(
    byKey(
      (ids) => store.getProjects(ids),
      (p) => p.id,
    ),
  );
  const repo = new DataLoader(
    byKey(
      (ids) => store.getRepos(ids),
      (r) => r.id,
    ),
  );
  const mcpServer = new DataLoader(
    byKey(
      (ids) => store.getMcpServers(orgId, ids),
      (m) => m.id,
    ),
  );
  const primeArtifacts = (rows: ArtifactVersion[]) => {
    for (const row of rows) if (row.is_latest) artifact.prime(row.id, row);
    return rows;
  };

  return {
    artifact,
    project,
    repo,
    artifactVersions: new DataLoader(
      groupedBy(
        async (ids) => primeArtifacts(await store.getArtifactVersions(ids)),
        (a) => [a.id],
      ),
    ),
    user: new PeekLoader(
      byKey(
        (ids) => store.getUsers(ids),
        (u) => u.id,
      ),
    ),
    relationships: new DataLoader(
      groupedBy(
        (ids) => store.getRelationships(ids),
        (r) => [r.from.id, r.to.id],
      ),
    ),
    identity: new DataLoader(
      byKey(
        (ids) => store.getIdentitiesOfAgents(ids),
        (i) => i.agent_id,
      ),
    ),
    artifactCountsByWorkspace: counts(store, 'workspace'),
    // A workspace holds only its own artifacts; a project or a creator may have some in workspaces
    // (or, for a creator, organizations) the caller cannot read.
    artifactCountsByProject: counts(store, 'project', readableWorkspaceIds),
    artifactCountsByCreator: counts(store, 'creator', readableWorkspaceIds),
    memberCount: new DataLoader(async (ids) => {
      const found = await store.countMembers(ids);
      return ids.map((id) => found.get(id) ?? 0);
    }),
    membershipsOfWorkspace: new DataLoader(
      groupedBy(
        (ids) => store.getMembershipsOfWorkspaces(ids),
        (m) => [m.workspace_id],
      ),
    ),
    projectsOfWorkspace: new DataLoader(
      groupedBy(
        async (ids) => {
          const rows = await store.listProjects(ids);
          for (const p of rows) project.prime(p.id, p);
          return rows;
        },
        (p) => [p.workspace_id],
      ),
    ),
    reposOfWorkspace: new DataLoader(
      groupedBy(
        async (ids) => {
          const rows = await store.listRepos(ids);
          for (const r of rows) repo.prime(r.id, r);
          return rows;
        },
        (r) => [r.workspace_id],
      ),
    ),
    artifactsOfRepo: new DataLoader(
      groupedBy(
        async (ids) => primeArtifacts(await store.listArtifactsOfRepos(ids)),
        (a) => (a.repo_id === undefined ? [] : [a.repo_id]),
      ),
    ),
    artifactsOfWorkspace: new DataLoader(
      groupedBy(
        async (ids) => primeArtifacts(await store.listArtifacts(ids)),
        (a) => [a.workspace_id],
      ),
    ),
    mcpServer,
    mcpServerVersions: new DataLoader(
      groupedBy(
        async (ids) => {
          const rows = await store.getMcpServerHistory(orgId, ids);
          for (const row of rows) if (row.is_latest) mcpServer.prime(row.id, row);
          return rows;
        },
        (m) => [m.id],
      ),
    ),
    toolsOfServer: new DataLoader(
      groupedBy(
        async (ids) => {
          const scope = await readableWorkspaceIds();
          return scope.length === 0 ? [] : primeArtifacts(await store.listToolsOfServers(scope, ids));
        },
        (a) => (a.server_id === undefined ? [] : [a.server_id]),
      ),
    ),
    artifactsOfCreator: new DataLoader(
      groupedBy(
        async () => {
          const scope = await readableWorkspaceIds();
          return scope.length === 0 ? [] : primeArtifacts(await store.listArtifacts(scope));
        },
        (a) => [a.created_by],
      ),
    ),
  };
}
