/**
 * The MCP server part of the SQLite registry engine (mcp-server-port.ts): lists over the
 * `mcp_servers` table of migration 006 and publishes in IMMEDIATE transactions, which SQLite
 * serializes, so the checks of a publish and its `is_latest` refresh see every committed version.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { McpServerVersion } from '../../domain/types.ts';
import type { McpServerQuery, McpServerStore, NewMcpServerVersion } from '../mcp-server-port.ts';
import {
  checkPublish,
  latestVersion,
  mcpListConditions,
  MCP_SERVER_COLUMNS,
  nameAndVersion,
  storedInstant,
  toMcpServerVersion,
  type Neighbour,
  type VersionOrder,
} from '../mcp-server-rows.ts';
import type { Row } from '../sql-rows.ts';

const IN = 'IN (SELECT value FROM json_each(?))';

type Query = (sql: string, ...params: (string | number | null)[]) => Row[];

/** Makes the latest version of `name` in `orgId` the only one marked latest; versions that change get `updated_at` `at` (if later). */
function refreshLatest(all: Query, orgId: string, name: string, at: string): void {
  const versions = all(
    'SELECT version, status, published_at FROM mcp_servers WHERE org_id = ? AND name = ?',
    orgId,
    name,
  );
  const latest = latestVersion(versions as unknown as VersionOrder[]);
  all(
    `UPDATE mcp_servers SET is_latest = 1 - is_latest, updated_at = max(updated_at, ?)
     WHERE org_id = ? AND name = ? AND is_latest <> (version IS ?)`,
    at,
    orgId,
    name,
    latest,
  );
}

export class SqliteMcpServers implements McpServerStore {
  /** `all` runs a statement (the store's cached statements and error mapping); `wrote` counts a local commit. */
  private readonly db: DatabaseSync;
  private readonly all: Query;
  private readonly wrote: () => void;

  constructor(db: DatabaseSync, all: Query, wrote: () => void) {
    this.db = db;
    this.all = all;
    this.wrote = wrote;
  }

  async listMcpServerVersions(query: McpServerQuery): Promise<McpServerVersion[]> {
    if (query.workspaceIds.length === 0 || query.limit <= 0) return [];
    const { where, params } = mcpListConditions(query, () => '?', 0);
    return this.all(
      `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE workspace_id ${IN}${where} ORDER BY name, version LIMIT ?`,
      JSON.stringify(query.workspaceIds),
      ...params,
      query.limit,
    ).map(toMcpServerVersion);
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
      const stored = this.all(
        'SELECT id, name, version, workspace_id FROM mcp_servers WHERE org_id = ? AND (name = ? OR id = ?)',
        v.org_id,
        name,
        v.id,
      );
      checkPublish(v, name, version, stored as unknown as Neighbour[]);
      this.all(
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
      refreshLatest(this.all, v.org_id, name, at);
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
    } finally {
      this.wrote();
    }
  }
}
