/**
 * The embedded registry engine: one SQLite file through `node:sqlite`, WAL mode, prepared
 * statements cached by SQL text. Id lists are bound as one JSON parameter (`json_each(?)`), so a
 * batch of any size is one statement and values are never spliced into SQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
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
import type { ReadyProgress } from '../../shared/api-document.ts';
import { importBundle } from './import-bundle.ts';
import { migrate } from './migrate.ts';
import {
  artifactColumns,
  readyArtifactColumns,
  artifactOfValues,
  toIdentity,
  toMembership,
  toOrganization,
  toProject,
  toReadyArtifact,
  relationshipOfValues,
  toRepo,
  toUser,
  toToolGroup,
  toToolRef,
  toWorkspace,
  type Row,
} from '../sql-rows.ts';
import {
  artifactSearchSql,
  LATEST_BY_ID,
  LATEST_WORKSPACES,
  RELATIONSHIPS_OF_IDS,
  toolAggregateSql,
} from './registry-sql.ts';
import { runStatement } from './run-statement.ts';
import { WalIndexHeader } from './wal-index.ts';
import { SqliteMcpServers } from './mcp-servers.ts';
import { SqliteInsights } from './insights.ts';
import { SqliteDetectionState } from './detection-state.ts';
import type { McpServerQuery, NewMcpServerVersion } from '../mcp-server-port.ts';
import { databaseFileBytes, type StoredBytes } from '../stored-bytes.ts';

const IN = 'IN (SELECT value FROM json_each(?))';
const ARTIFACT_COLUMNS = artifactColumns();
const READY_COLUMNS = readyArtifactColumns();

/** The RegistryStore port over one SQLite file (or `:memory:`); see the port for the invariants. */
export class SqliteRegistryStore implements RegistryStore {
  readonly engine = 'sqlite' as const;
  private readonly db: DatabaseSync;
  /** Prepared statements by SQL text: rows as objects, and as arrays (`arrays`). */
  private readonly statements = [new Map<string, StatementSync>(), new Map<string, StatementSync>()] as const;
  /** The file's wal-index header, read for the generation; absent for `:memory:`. */
  private readonly walIndex: WalIndexHeader | undefined;
  /** The wal-index header when the generation was last read, and that generation. */
  private seen: { header: string; generation: string } | null = null;
  private readonly mcp: SqliteMcpServers;
  readonly insights: SqliteInsights;
  readonly detection: SqliteDetectionState;

  /** `progress`: told how a long fill of ready-to-send documents goes (the first open after an upgrade). */
  constructor(file: string, progress?: ReadyProgress) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new DatabaseSync(file);
    this.db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;',
    );
    migrate(this.db, progress);
    if (file !== ':memory:')
      this.walIndex = WalIndexHeader.of(file, Number(this.all('PRAGMA page_size')[0]?.page_size));
    const all = (sql: string, ...params: (string | number | null)[]) => this.all(sql, ...params);
    const arrays = (sql: string, ...params: (string | number | null)[]) => this.arrays(sql, ...params);
    this.mcp = new SqliteMcpServers(this.db, all, arrays);
    this.insights = new SqliteInsights(this.db, all);
    this.detection = new SqliteDetectionState(all);
  }

  private stmt(sql: string, arrays = false): StatementSync {
    const cache = this.statements[arrays ? 1 : 0];
    let s = cache.get(sql);
    if (s === undefined) {
      s = this.db.prepare(sql);
      s.setReturnArrays(arrays);
      cache.set(sql, s);
    }
    return s;
  }

  private all(sql: string, ...params: (string | number | null)[]): Row[] {
    return runStatement(this.db, () => this.stmt(sql).all(...params));
  }

  /** As `all`, each row an array of the selected columns: no object, nor a name, per value. */
  private arrays(sql: string, ...params: (string | number | null)[]): unknown[][] {
    return runStatement(this.db, () => this.stmt(sql, true).all(...params) as unknown[] as unknown[][]);
  }

  /** Artifact versions of a statement selecting `ARTIFACT_COLUMNS`, read as arrays. */
  private artifactRows(sql: string, ...params: (string | number | null)[]): ArtifactVersion[] {
    return this.arrays(sql, ...params).map(artifactOfValues);
  }

  async ping(): Promise<void> {
    this.all('SELECT 1');
  }

  /** The database file and its WAL (`:memory:` holds nothing on disk). */
  async storedBytes(): Promise<StoredBytes> {
    return databaseFileBytes(this.db.isOpen ? this.db.location() : null, (file) => `${file}-wal`);
  }

  async close(): Promise<void> {
    this.walIndex?.close();
    if (this.db.isOpen) this.db.close();
  }

  async generation(): Promise<string> {
    if (!this.db.isOpen) throw new StoreUnavailableError('the registry database is closed');
    // The counter of migration 008, which every write a reader sees moves (bookkeeping writes do
    // not). Every commit of any connection moves the wal-index header (wal-index.ts), so while it
    // stays the counter cannot have moved: it is read again only after a commit. Read after the
    // header, the counter is at least as new as it, so the pair kept is never older than it says.
    const header = this.walIndex?.read() ?? null;
    if (header !== null && header === this.seen?.header) return this.seen.generation;
    const generation = `g${String(this.all('SELECT n FROM registry_generation WHERE id = 1')[0]?.n)}`;
    this.seen = header === null ? null : { header, generation };
    return generation;
  }

  async isEmpty(): Promise<boolean> {
    return this.all('SELECT 1 FROM organizations LIMIT 1').length === 0;
  }

  async importBundle(bundle: Bundle): Promise<ImportCounts> {
    return importBundle(this.db, bundle);
  }

  async getOrganizations(ids: readonly string[]) {
    return this.all(`SELECT * FROM organizations WHERE id ${IN} ORDER BY id`, JSON.stringify(ids)).map(toOrganization);
  }

  async getUsers(ids: readonly string[]) {
    return this.all(`SELECT * FROM users WHERE id ${IN} ORDER BY id`, JSON.stringify(ids)).map(toUser);
  }

  async listUsers(orgId: string, limit: number, offset: number) {
    const total = Number(this.all('SELECT COUNT(*) AS n FROM users WHERE org_id = ?', orgId)[0]?.n ?? 0);
    const items =
      limit === 0
        ? []
        : this.all('SELECT * FROM users WHERE org_id = ? ORDER BY id LIMIT ? OFFSET ?', orgId, limit, offset).map(
            toUser,
          );
    return { items, total };
  }

  async listOrgWorkspaces(orgId: string) {
    return this.all('SELECT * FROM workspaces WHERE org_id = ? ORDER BY id', orgId).map(toWorkspace);
  }

  async getWorkspaces(ids: readonly string[]) {
    return this.all(`SELECT * FROM workspaces WHERE id ${IN} ORDER BY id`, JSON.stringify(ids)).map(toWorkspace);
  }

  async getMembershipsOfUser(userId: string) {
    return this.all('SELECT * FROM memberships WHERE user_id = ? ORDER BY workspace_id', userId).map(toMembership);
  }

  async getMembershipsOfWorkspaces(workspaceIds: readonly string[]) {
    return this.all(
      `SELECT * FROM memberships WHERE workspace_id ${IN} ORDER BY workspace_id, user_id`,
      JSON.stringify(workspaceIds),
    ).map(toMembership);
  }

  async getProjects(ids: readonly string[]) {
    return this.all(`SELECT * FROM projects WHERE id ${IN} ORDER BY id`, JSON.stringify(ids)).map(toProject);
  }

  async listProjects(workspaceIds: readonly string[]) {
    return this.all(`SELECT * FROM projects WHERE workspace_id ${IN} ORDER BY id`, JSON.stringify(workspaceIds)).map(
      toProject,
    );
  }

  async getRepos(ids: readonly string[]) {
    return this.all(`SELECT * FROM repos WHERE id ${IN} ORDER BY id`, JSON.stringify(ids)).map(toRepo);
  }

  async listRepos(workspaceIds: readonly string[]) {
    return this.all(`SELECT * FROM repos WHERE workspace_id ${IN} ORDER BY id`, JSON.stringify(workspaceIds)).map(
      toRepo,
    );
  }

  async listArtifactsOfRepos(repoIds: readonly string[]) {
    return this.artifactRows(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest = 1 AND repo_id ${IN} ORDER BY id`,
      JSON.stringify(repoIds),
    );
  }

  async listToolsOfServers(workspaceIds: readonly string[], serverIds: readonly string[]) {
    return this.artifactRows(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest = 1 AND kind = 'tool' AND workspace_id ${IN} AND server_id ${IN} ORDER BY server_id, name, id`,
      JSON.stringify(workspaceIds),
      JSON.stringify(serverIds),
    );
  }

  async findArtifacts(query: ArtifactQuery): Promise<Page<ArtifactVersion>> {
    // `seq` is the first of the artifact columns.
    return this.artifactPage(query, (seqs) =>
      this.arrays(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE seq ${IN}`, seqs).map((v) => [
        Number(v[0]),
        artifactOfValues(v),
      ]),
    );
  }

  async findReadyArtifacts(query: ArtifactQuery): Promise<Page<ReadyArtifact>> {
    return this.artifactPage(query, (seqs) =>
      this.all(`SELECT ${READY_COLUMNS} FROM artifacts WHERE seq ${IN}`, seqs).map((r) => [
        Number(r.seq),
        toReadyArtifact(r),
      ]),
    );
  }

  /** The count, the page's `seq`s in order (from the covering sort index), then `read` those rows (by a JSON list of seqs). */
  private artifactPage<T>(query: ArtifactQuery, read: (seqs: string) => [number, T][]): Page<T> {
    if (query.workspaceIds.length === 0) return { items: [], total: 0 };
    const sql = artifactSearchSql(query);
    if (sql === null) return { items: [], total: 0 };
    const total = Number(this.all(sql.count, ...sql.params)[0]?.n ?? 0);
    if (query.limit === 0 || total <= query.offset) return { items: [], total };
    const seqs = this.all(sql.page, ...sql.params, query.limit, query.offset).map((r) => Number(r.seq));
    const rows = new Map(read(JSON.stringify(seqs)));
    const items = seqs.map((seq) => rows.get(seq) as T);
    return { items, total };
  }

  async listArtifacts(workspaceIds: readonly string[], kind?: ArtifactKind) {
    const ofKind = kind === undefined ? [] : [kind];
    return this.artifactRows(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest = 1 ${kind === undefined ? '' : 'AND kind = ? '}AND workspace_id ${IN} ORDER BY id`,
      ...ofKind,
      JSON.stringify(workspaceIds),
    );
  }

  async getArtifacts(ids: readonly string[]) {
    // One id (a lookup by id, an edge of one item): equality, without a JSON list to bind and scan.
    if (ids.length === 1)
      return this.artifactRows(`SELECT ${ARTIFACT_COLUMNS} FROM ${LATEST_BY_ID} = ?`, ids[0] as string);
    return this.artifactRows(`SELECT ${ARTIFACT_COLUMNS} FROM ${LATEST_BY_ID} ${IN} ORDER BY id`, JSON.stringify(ids));
  }

  async getArtifactVersions(ids: readonly string[]) {
    return this.artifactRows(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE id ${IN} ORDER BY id, version_ordinal`,
      JSON.stringify(ids),
    );
  }

  async findSkillByName(workspaceIds: readonly string[], name: string) {
    const [row] = this.artifactRows(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE is_latest = 1 AND kind = 'skill' AND name = ? AND workspace_id ${IN} ORDER BY id LIMIT 1`,
      name,
      JSON.stringify(workspaceIds),
    );
    return row ?? null;
  }

  async aggregateTools(query: ToolAggregateQuery): Promise<Page<ToolGroup>> {
    if (query.workspaceIds.length === 0) return { items: [], total: 0 };
    const sql = toolAggregateSql(query);
    const total = Number(this.all(sql.count, ...sql.params)[0]?.n ?? 0);
    if (query.limit === 0 || total <= query.offset) return { items: [], total };
    const rows = this.all(sql.page, ...sql.params, query.limit, query.offset);
    return { items: rows.map((r) => toToolGroup(query, r)), total };
  }

  async toolRefs(query: ToolAggregateQuery): Promise<ToolRef[]> {
    if (query.workspaceIds.length === 0 || query.limit === 0) return [];
    const sql = toolAggregateSql(query);
    const rows = this.all(sql.refs, ...sql.params, query.limit);
    return rows.map((r) => toToolRef(query, r));
  }

  async countArtifacts(
    by: 'workspace' | 'project' | 'creator',
    ids: readonly string[],
    within?: readonly string[],
  ): Promise<KindCounts> {
    const column = { workspace: 'workspace_id', project: 'project_id', creator: 'created_by' }[by];
    const scope = within === undefined ? '' : `AND workspace_id ${IN}`;
    const rows = this.all(
      `SELECT ${column} AS k, kind, COUNT(*) AS n FROM artifacts WHERE is_latest = 1 AND ${column} ${IN} ${scope} GROUP BY ${column}, kind ORDER BY kind`,
      JSON.stringify(ids),
      ...(within === undefined ? [] : [JSON.stringify(within)]),
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
    const rows = this.all(
      `SELECT workspace_id AS k, COUNT(*) AS n FROM memberships WHERE workspace_id ${IN} GROUP BY workspace_id`,
      JSON.stringify(workspaceIds),
    );
    return new Map(rows.map((r) => [r.k as string, Number(r.n)]));
  }

  async getRelationships(artifactIds: readonly string[]) {
    const ids = JSON.stringify(artifactIds);
    return this.arrays(RELATIONSHIPS_OF_IDS, ids, ids).map(relationshipOfValues);
  }

  /** Two statements: a join would look up both ends of every relationship, and was slower. */
  async getRelationshipsWithEnds(artifactIds: readonly string[]): Promise<RelationshipsWithEnds> {
    const relationships = await this.getRelationships(artifactIds);
    const asked = new Set(artifactIds);
    const others = new Set(relationships.flatMap((r) => [r.from.id, r.to.id]).filter((id) => !asked.has(id)));
    const rows = others.size === 0 ? [] : this.all(LATEST_WORKSPACES, JSON.stringify([...others]));
    return { relationships, otherEndWorkspaces: new Map(rows.map((r) => [r.id as string, r.workspace_id as string])) };
  }

  async getIdentitiesOfAgents(agentIds: readonly string[]) {
    return this.all(`SELECT * FROM identities WHERE agent_id ${IN} ORDER BY agent_id`, JSON.stringify(agentIds)).map(
      toIdentity,
    );
  }

  async findIdentityByClientId(clientId: string): Promise<Identity | null> {
    const [row] = this.all('SELECT * FROM identities WHERE client_id = ?', clientId);
    return row === undefined ? null : toIdentity(row);
  }

  async findIdentityByApiKeyHash(hash: string): Promise<Identity | null> {
    const [row] = this.all('SELECT * FROM identities WHERE api_key_hash = ?', hash);
    return row === undefined ? null : toIdentity(row);
  }

  async getProfileImage(agentId: string): Promise<ProfileImage | null> {
    const [row] = this.all('SELECT content_type, bytes FROM profile_images WHERE agent_id = ?', agentId);
    return row === undefined
      ? null
      : { content_type: row.content_type as string, bytes: new Uint8Array(row.bytes as Uint8Array) };
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
