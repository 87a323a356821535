/**
 * The server-mode registry engine: PostgreSQL through a pg.Pool, the same semantics as the SQLite
 * engine (test/contract/registry-contract.ts runs unchanged on both). Text ordering uses the "C"
 * collation, as SQLite's binary ordering does. Connection failures surface as StoreUnavailableError.
 */
import type pg from 'pg';
import type { ArtifactKind, ArtifactVersion, Bundle, Identity, ProfileImage } from '../../domain/types.ts';
import {
  StoreUnavailableError,
  type ArtifactQuery,
  type ImportCounts,
  type KindCounts,
  type Page,
  type ReadyArtifact,
  type RegistryStore,
  type RelationshipsWithEnds,
  type ToolAggregateQuery,
  type ToolGroup,
  type ToolRef,
} from '../registry-port.ts';
import {
  artifactColumns,
  readyArtifactColumns,
  toArtifact,
  toIdentity,
  toMembership,
  toOrganization,
  toProject,
  toReadyArtifact,
  toRelationship,
  toRepo,
  toUser,
  toToolGroup,
  toToolRef,
  toWorkspace,
  type Row,
} from '../sql-rows.ts';
import { importBundle } from './import-bundle.ts';
import { isConnectionFailure } from './pool.ts';
import {
  artifactSearchSql,
  endWorkspacesOf,
  RELATIONSHIPS_OF,
  relationshipsWithEndsSql,
  toolAggregateSql,
} from './registry-sql.ts';
import { sqlNumber } from '../sql-values.ts';
import { freshRead } from '../../shared/fresh-read.ts';
import type { StoredBytes } from '../stored-bytes.ts';
import { REGISTRY_TABLES, tableBytes } from './stored-bytes.ts';
import { PostgresMcpServers } from './mcp-servers.ts';
import { PostgresInsights } from './insights.ts';
import { PostgresDetectionState } from './detection-state.ts';
import type { McpServerQuery, NewMcpServerVersion } from '../mcp-server-port.ts';

const ID = 'id COLLATE "C"';

const ARTIFACT_COLUMNS = artifactColumns();
/** The columns of the page's `artifacts a`, whole and ready. */
const PAGE_COLUMNS = artifactColumns('a');
const READY_PAGE_COLUMNS = readyArtifactColumns('a');

export class PostgresRegistryStore implements RegistryStore {
  readonly engine = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly mcp = new PostgresMcpServers(
    (sql, params) => this.all(sql, params),
    (work) => this.transaction(work),
  );
  readonly insights = new PostgresInsights(
    (sql, params) => this.all(sql, params),
    (work) => this.transaction(work),
  );
  readonly detection = new PostgresDetectionState((sql, params) => this.all(sql, params));

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Runs `work` in one transaction on a connection of its own; connection failures as StoreUnavailableError. */
  private async transaction<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let c: pg.PoolClient | undefined;
    try {
      c = await this.pool.connect();
      await c.query('BEGIN');
      const result = await work(c);
      await c.query('COMMIT');
      return result;
    } catch (err) {
      await c?.query('ROLLBACK').catch(() => undefined);
      if (isConnectionFailure(err))
        throw new StoreUnavailableError('the registry database cannot be reached', { cause: err });
      throw err;
    } finally {
      c?.release();
    }
  }

  private async all(sql: string, params: unknown[] = []): Promise<Row[]> {
    try {
      return (await this.pool.query(sql, params)).rows as Row[];
    } catch (err) {
      if (isConnectionFailure(err))
        throw new StoreUnavailableError('the registry database cannot be reached', { cause: err });
      throw err;
    }
  }

  async ping(): Promise<void> {
    await this.all('SELECT 1');
  }

  /** The registry's tables with their indexes (stored-bytes.ts). */
  storedBytes(): Promise<StoredBytes> {
    return tableBytes(this.pool, REGISTRY_TABLES);
  }

  /** Idempotent: the app's shutdown may close a store a test (or an operator's tool) already closed. */
  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }

  /**
   * One round trip shared by the requests that ask while it waits its turn (fresh-read.ts): each
   * still gets a reading started after it asked, so a write committed before a request arrived is
   * seen, as with a read of its own.
   */
  readonly generation = freshRead(async (): Promise<string> => {
    const [row] = await this.all('SELECT n FROM registry_generation WHERE id = 1');
    return String(sqlNumber(row?.n));
  });

  async isEmpty(): Promise<boolean> {
    return (await this.all('SELECT 1 FROM organizations LIMIT 1')).length === 0;
  }

  async importBundle(bundle: Bundle): Promise<ImportCounts> {
    try {
      return await importBundle(this.pool, bundle);
    } catch (err) {
      if (isConnectionFailure(err))
        throw new StoreUnavailableError('the registry database cannot be reached', { cause: err });
      throw err;
    }
  }

  async getOrganizations(ids: readonly string[]) {
    return (await this.all(`SELECT * FROM organizations WHERE id = ANY($1::text[]) ORDER BY ${ID}`, [ids])).map(
      toOrganization,
    );
  }

  async getUsers(ids: readonly string[]) {
    return (await this.all(`SELECT * FROM users WHERE id = ANY($1::text[]) ORDER BY ${ID}`, [ids])).map(toUser);
  }

  async listUsers(orgId: string, limit: number, offset: number) {
    const [count] = await this.all('SELECT COUNT(*)::int AS n FROM users WHERE org_id = $1', [orgId]);
    const items =
      limit === 0
        ? []
        : (
            await this.all(`SELECT * FROM users WHERE org_id = $1 ORDER BY ${ID} LIMIT $2 OFFSET $3`, [
              orgId,
              limit,
              offset,
            ])
          ).map(toUser);
    return { items, total: Number(count?.n ?? 0) };
  }

  async listOrgWorkspaces(orgId: string) {
    return (await this.all(`SELECT * FROM workspaces WHERE org_id = $1 ORDER BY ${ID}`, [orgId])).map(toWorkspace);
  }

  async getWorkspaces(ids: readonly string[]) {
    return (await this.all(`SELECT * FROM workspaces WHERE id = ANY($1::text[]) ORDER BY ${ID}`, [ids])).map(
      toWorkspace,
    );
  }

  async getMembershipsOfUser(userId: string) {
    return (
      await this.all('SELECT * FROM memberships WHERE user_id = $1 ORDER BY workspace_id COLLATE "C"', [userId])
    ).map(toMembership);
  }

  async getMembershipsOfWorkspaces(workspaceIds: readonly string[]) {
    return (
      await this.all(
        'SELECT * FROM memberships WHERE workspace_id = ANY($1::text[]) ORDER BY workspace_id COLLATE "C", user_id COLLATE "C"',
        [workspaceIds],
      )
    ).map(toMembership);
  }

  async getProjects(ids: readonly string[]) {
    return (await this.all(`SELECT * FROM projects WHERE id = ANY($1::text[]) ORDER BY ${ID}`, [ids])).map(toProject);
  }

  async listProjects(workspaceIds: readonly string[]) {
    return (
      await this.all(`SELECT * FROM projects WHERE workspace_id = ANY($1::text[]) ORDER BY ${ID}`, [workspaceIds])
    ).map(toProject);
  }

  async getRepos(ids: readonly string[]) {
    return (await this.all(`SELECT * FROM repos WHERE id = ANY($1::text[]) ORDER BY ${ID}`, [ids])).map(toRepo);
  }

  async listRepos(workspaceIds: readonly string[]) {
    return (
      await this.all(`SELECT * FROM repos WHERE workspace_id = ANY($1::text[]) ORDER BY ${ID}`, [workspaceIds])
    ).map(toRepo);
  }

  async listArtifactsOfRepos(repoIds: readonly string[]) {
    return (
      await this.all(
        `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest AND repo_id = ANY($1::text[]) ORDER BY ${ID}`,
        [repoIds],
      )
    ).map(toArtifact);
  }

  async listToolsOfServers(workspaceIds: readonly string[], serverIds: readonly string[]) {
    return (
      await this.all(
        `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest AND kind = 'tool' AND workspace_id = ANY($1::text[]) AND server_id = ANY($2::text[]) ORDER BY server_id COLLATE "C", name COLLATE "C", ${ID}`,
        [workspaceIds, serverIds],
      )
    ).map(toArtifact);
  }

  async findArtifacts(query: ArtifactQuery): Promise<Page<ArtifactVersion>> {
    return this.artifactPage(query, PAGE_COLUMNS, toArtifact);
  }

  async findReadyArtifacts(query: ArtifactQuery): Promise<Page<ReadyArtifact>> {
    return this.artifactPage(query, READY_PAGE_COLUMNS, toReadyArtifact);
  }

  private async artifactPage<T>(query: ArtifactQuery, columns: string, map: (r: Row) => T): Promise<Page<T>> {
    if (query.workspaceIds.length === 0) return { items: [], total: 0 };
    const sql = artifactSearchSql(query, columns);
    if (sql === null) return { items: [], total: 0 };
    const count = async () => Number((await this.all(sql.count, sql.params))[0]?.n ?? 0);
    if (query.limit === 0) return { items: [], total: await count() };
    const rows = await this.all(sql.page, [...sql.params, query.limit, query.offset]);
    // The page carries the match count; an empty page past the end asks for it alone.
    const first = rows[0];
    if (first === undefined) return { items: [], total: query.offset === 0 ? 0 : await count() };
    return { items: rows.map(map), total: Number(first.total_count) };
  }

  async listArtifacts(workspaceIds: readonly string[], kind?: ArtifactKind) {
    const rows =
      kind === undefined
        ? await this.all(
            `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest AND workspace_id = ANY($1::text[]) ORDER BY ${ID}`,
            [workspaceIds],
          )
        : await this.all(
            `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest AND kind = $2 AND workspace_id = ANY($1::text[]) ORDER BY ${ID}`,
            [workspaceIds, kind],
          );
    return rows.map(toArtifact);
  }

  async getArtifacts(ids: readonly string[]) {
    return (
      await this.all(
        `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest AND id = ANY($1::text[]) ORDER BY ${ID}`,
        [ids],
      )
    ).map(toArtifact);
  }

  async getArtifactVersions(ids: readonly string[]) {
    return (
      await this.all(
        `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE id = ANY($1::text[]) ORDER BY ${ID}, version_ordinal`,
        [ids],
      )
    ).map(toArtifact);
  }

  async findSkillByName(workspaceIds: readonly string[], name: string) {
    const [row] = await this.all(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest AND kind = 'skill' AND name = $2 AND workspace_id = ANY($1::text[]) ORDER BY ${ID} LIMIT 1`,
      [workspaceIds, name],
    );
    return row === undefined ? null : toArtifact(row);
  }

  async aggregateTools(query: ToolAggregateQuery): Promise<Page<ToolGroup>> {
    if (query.workspaceIds.length === 0) return { items: [], total: 0 };
    const sql = toolAggregateSql(query);
    const [count] = await this.all(sql.count, sql.params);
    const total = Number(count?.n ?? 0);
    if (query.limit === 0 || total <= query.offset) return { items: [], total };
    const rows = await this.all(sql.page, [...sql.params, query.limit, query.offset]);
    return { items: rows.map((r) => toToolGroup(query, r)), total };
  }

  async toolRefs(query: ToolAggregateQuery): Promise<ToolRef[]> {
    if (query.workspaceIds.length === 0 || query.limit === 0) return [];
    const sql = toolAggregateSql(query);
    const rows = await this.all(sql.refs, [...sql.params, query.limit]);
    return rows.map((r) => toToolRef(query, r));
  }

  async countArtifacts(
    by: 'workspace' | 'project' | 'creator',
    ids: readonly string[],
    within?: readonly string[],
  ): Promise<KindCounts> {
    const column = { workspace: 'workspace_id', project: 'project_id', creator: 'created_by' }[by];
    const scope = within === undefined ? '' : 'AND workspace_id = ANY($2::text[])';
    const rows = await this.all(
      `SELECT ${column} AS k, kind, COUNT(*)::int AS n FROM artifacts WHERE is_latest AND ${column} = ANY($1::text[]) ${scope} GROUP BY ${column}, kind ORDER BY kind COLLATE "C"`,
      within === undefined ? [ids] : [ids, within],
    );
    const out: KindCounts = new Map();
    for (const r of rows) {
      const counts = out.get(r.k as string) ?? {};
      counts[r.kind as string] = Number(r.n);
      out.set(r.k as string, counts);
    }
    return out;
  }

  async countMembers(workspaceIds: readonly string[]) {
    const rows = await this.all(
      'SELECT workspace_id AS k, COUNT(*)::int AS n FROM memberships WHERE workspace_id = ANY($1::text[]) GROUP BY workspace_id',
      [workspaceIds],
    );
    return new Map(rows.map((r) => [r.k as string, Number(r.n)]));
  }

  async getRelationships(artifactIds: readonly string[]) {
    return (await this.all(`SELECT r.* FROM relationships r ${RELATIONSHIPS_OF}`, [artifactIds])).map(toRelationship);
  }

  /** One round trip: each relationship with the workspace of each end not among the ids asked. */
  async getRelationshipsWithEnds(artifactIds: readonly string[]): Promise<RelationshipsWithEnds> {
    const rows = await this.all(relationshipsWithEndsSql(true), [artifactIds]);
    return { relationships: rows.map(toRelationship), otherEndWorkspaces: endWorkspacesOf(rows) };
  }

  async getIdentitiesOfAgents(agentIds: readonly string[]) {
    return (
      await this.all('SELECT * FROM identities WHERE agent_id = ANY($1::text[]) ORDER BY agent_id COLLATE "C"', [
        agentIds,
      ])
    ).map(toIdentity);
  }

  async findIdentityByClientId(clientId: string): Promise<Identity | null> {
    const [row] = await this.all('SELECT * FROM identities WHERE client_id = $1', [clientId]);
    return row === undefined ? null : toIdentity(row);
  }

  async findIdentityByApiKeyHash(hash: string): Promise<Identity | null> {
    const [row] = await this.all('SELECT * FROM identities WHERE api_key_hash = $1', [hash]);
    return row === undefined ? null : toIdentity(row);
  }

  async getProfileImage(agentId: string): Promise<ProfileImage | null> {
    const [row] = await this.all('SELECT content_type, bytes FROM profile_images WHERE agent_id = $1', [agentId]);
    return row === undefined
      ? null
      : { content_type: row.content_type as string, bytes: new Uint8Array(row.bytes as Buffer) };
  }

  // MCP servers (mcp-servers.ts)
  listMcpServerVersions(query: McpServerQuery) {
    return this.mcp.listMcpServerVersions(query);
  }

  listReadyMcpServerVersions(query: McpServerQuery) {
    return this.mcp.listReadyMcpServerVersions(query);
  }

  getMcpServerVersionsByName(workspaceIds: readonly string[], name: string) {
    return this.mcp.getMcpServerVersionsByName(workspaceIds, name);
  }

  getMcpServers(orgId: string, ids: readonly string[]) {
    return this.mcp.getMcpServers(orgId, ids);
  }

  getMcpServerHistory(orgId: string, ids: readonly string[]) {
    return this.mcp.getMcpServerHistory(orgId, ids);
  }

  publishMcpServer(version: NewMcpServerVersion) {
    return this.mcp.publishMcpServer(version);
  }
}
