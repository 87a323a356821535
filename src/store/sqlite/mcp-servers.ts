/**
 * The MCP server part of the SQLite registry engine (mcp-server-port.ts): lists over the
 * `mcp_servers` table of migration 006 and publishes in IMMEDIATE transactions, which SQLite
 * serializes, so the checks of a publish and its `is_latest` refresh see every committed version.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { BundleWrites } from '../import-bundle.ts';
import type { McpServerEntry, McpServerVersion } from '../../domain/types.ts';
import type { McpServerQuery, McpServerStore, NewMcpServerVersion, ReadyMcpServerVersion } from '../mcp-server-port.ts';
import {
  checkImport,
  checkPublish,
  latestVersion,
  mcpListConditions,
  MCP_SERVER_COLUMNS,
  nameAndVersion,
  READY_MCP_SERVER_COLUMNS,
  storedInstant,
  readyMcpServerOfArray,
  toMcpServerVersion,
  type Neighbour,
  type VersionOrder,
} from '../mcp-server-rows.ts';
import type { Row } from '../sql-rows.ts';

const IN = 'IN (SELECT value FROM json_each(?))';

type Query = (sql: string, ...params: (string | number | null)[]) => Row[];
type ArrayQuery = (sql: string, ...params: (string | number | null)[]) => unknown[][];

/** The versions sharing an organization with a name or an id (each half searches its unique index; a row may come twice). */
const NEIGHBOURS = `SELECT id, name, version, workspace_id FROM mcp_servers WHERE org_id = ?1 AND name = ?2
  UNION ALL SELECT id, name, version, workspace_id FROM mcp_servers WHERE org_id = ?1 AND id = ?3`;

/** A new version, not yet latest (refreshLatest decides); `at` is its `published_at`, `updated_at` and `status_changed_at`. */
function insert(all: Query, v: Omit<McpServerEntry, 'published_at'>, name: string, version: string, at: string) {
  all(
    `INSERT INTO mcp_servers (${MCP_SERVER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
    v.org_id,
    v.id,
    version,
    name,
    v.workspace_id,
    JSON.stringify(v.server),
    v.status,
    at,
    at,
    at,
    v.created_by,
    v.created_by,
  );
}

/**
 * Makes the latest version of `name` in `orgId` the only one marked latest. A stored version whose
 * mark changes was updated at `at` (if later); a version written now (`fresh`) keeps its times.
 */
function refreshLatest(all: Query, orgId: string, name: string, at: string, fresh: readonly string[]): void {
  const versions = all(
    'SELECT version, status, published_at FROM mcp_servers WHERE org_id = ? AND name = ?',
    orgId,
    name,
  );
  all(
    `UPDATE mcp_servers SET is_latest = 1 - is_latest,
       updated_at = CASE WHEN version ${IN} THEN updated_at ELSE max(updated_at, ?) END
     WHERE org_id = ? AND name = ? AND is_latest <> (version IS ?)`,
    JSON.stringify(fresh),
    at,
    orgId,
    name,
    latestVersion(versions as unknown as VersionOrder[]),
  );
}

/** A stored version changed by a re-import: its times move only when something differs. */
const UPDATE_IN_PLACE = `UPDATE mcp_servers SET server_json = ?1, status = ?2, workspace_id = ?3, created_by = ?4,
  updated_by = ?4, published_at = coalesce(?5, published_at), updated_at = max(updated_at, ?6),
  status_changed_at = CASE WHEN status = ?2 THEN status_changed_at ELSE max(status_changed_at, ?6) END
  WHERE org_id = ?7 AND id = ?8 AND version = ?9 AND (server_json IS NOT ?1 OR status IS NOT ?2
    OR workspace_id IS NOT ?3 OR created_by IS NOT ?4 OR published_at IS NOT coalesce(?5, published_at))`;

/** The import's MCP server writes (store/import-bundle.ts), within the importing transaction. */
export function mcpServerWrites(db: DatabaseSync): Pick<BundleWrites<void>, 'mcpServers'> {
  const statements = new Map<string, StatementSync>();
  const all: Query = (sql, ...params) => {
    let statement = statements.get(sql);
    if (statement === undefined) statements.set(sql, (statement = db.prepare(sql)));
    return statement.all(...params);
  };
  return {
    mcpServers: (entries, at) => {
      /** The versions each (organization, name) got from this import. */
      const fresh = new Map<string, { org_id: string; name: string; versions: string[] }>();
      for (const e of entries) {
        const { name, version } = nameAndVersion(e.server);
        const stored = all(NEIGHBOURS, e.org_id, name, e.id) as unknown as Neighbour[];
        const publishedAt = e.published_at === undefined ? null : storedInstant(e.published_at);
        const key = JSON.stringify([e.org_id, name]);
        const written = fresh.get(key) ?? { org_id: e.org_id, name, versions: [] };
        fresh.set(key, written);
        if (checkImport(e, name, version, stored)) {
          const json = JSON.stringify(e.server);
          all(UPDATE_IN_PLACE, json, e.status, e.workspace_id, e.created_by, publishedAt, at, e.org_id, e.id, version);
        } else {
          insert(all, e, name, version, publishedAt ?? at);
          written.versions.push(version);
        }
        // Every version of a server sits in one workspace: the bundle's.
        all(
          `UPDATE mcp_servers SET workspace_id = ?, updated_at = max(updated_at, ?), updated_by = ?
           WHERE org_id = ? AND id = ? AND workspace_id <> ?`,
          e.workspace_id,
          at,
          e.created_by,
          e.org_id,
          e.id,
          e.workspace_id,
        );
      }
      for (const n of fresh.values()) refreshLatest(all, n.org_id, n.name, at, n.versions);
    },
  };
}

export class SqliteMcpServers implements McpServerStore {
  /** `all` runs a statement (the store's cached statements and error mapping); `arrays` too, rows as arrays. */
  private readonly db: DatabaseSync;
  private readonly all: Query;
  private readonly arrays: ArrayQuery;

  constructor(db: DatabaseSync, all: Query, arrays: ArrayQuery) {
    this.db = db;
    this.all = all;
    this.arrays = arrays;
  }

  async listMcpServerVersions(query: McpServerQuery): Promise<McpServerVersion[]> {
    return this.list(MCP_SERVER_COLUMNS, query, this.all).map(toMcpServerVersion);
  }

  /** Rows as arrays: a page of objects of eleven members costs SQLite and the mapping about half again. */
  async listReadyMcpServerVersions(query: McpServerQuery): Promise<ReadyMcpServerVersion[]> {
    return this.list(READY_MCP_SERVER_COLUMNS, query, this.arrays).map(readyMcpServerOfArray);
  }

  private list<R>(columns: string, query: McpServerQuery, run: (sql: string, ...p: (string | number)[]) => R[]): R[] {
    if (query.workspaceIds.length === 0 || query.limit <= 0) return [];
    const { where, params } = mcpListConditions(query, () => '?', 0);
    return run(
      `SELECT ${columns} FROM mcp_servers WHERE workspace_id ${IN}${where} ORDER BY name, version LIMIT ?`,
      JSON.stringify(query.workspaceIds),
      ...params,
      query.limit,
    );
  }

  async getMcpServerVersionsByName(workspaceIds: readonly string[], name: string): Promise<McpServerVersion[]> {
    if (workspaceIds.length === 0) return [];
    return this.all(
      `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE name = ? AND workspace_id ${IN} ORDER BY version, org_id`,
      name,
      JSON.stringify(workspaceIds),
    ).map(toMcpServerVersion);
  }

  async getMcpServers(orgId: string, ids: readonly string[]): Promise<McpServerVersion[]> {
    if (ids.length === 0) return [];
    return this.all(
      `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE org_id = ? AND is_latest = 1 AND id ${IN} ORDER BY id`,
      orgId,
      JSON.stringify(ids),
    ).map(toMcpServerVersion);
  }

  async getMcpServerHistory(orgId: string, ids: readonly string[]): Promise<McpServerVersion[]> {
    if (ids.length === 0) return [];
    return this.all(
      `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE org_id = ? AND id ${IN} ORDER BY id, published_at, version`,
      orgId,
      JSON.stringify(ids),
    ).map(toMcpServerVersion);
  }

  async publishMcpServer(v: NewMcpServerVersion): Promise<McpServerVersion> {
    const { name, version } = nameAndVersion(v.server);
    const at = storedInstant(v.published_at);
    this.all('BEGIN IMMEDIATE');
    try {
      const [ws] = this.all('SELECT org_id FROM workspaces WHERE id = ?', v.workspace_id);
      if (ws?.org_id !== v.org_id) throw new Error(`the workspace ${v.workspace_id} is not one of ${v.org_id}`);
      const stored = this.all(NEIGHBOURS, v.org_id, name, v.id);
      checkPublish(v, name, version, stored as unknown as Neighbour[]);
      insert(this.all, v, name, version, at);
      refreshLatest(this.all, v.org_id, name, at, [version]);
      const [row] = this.all(
        `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE org_id = ? AND id = ? AND version = ?`,
        v.org_id,
        v.id,
        version,
      );
      this.all('COMMIT');
      return toMcpServerVersion(row as Row);
    } catch (err) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw err;
    }
  }
}
