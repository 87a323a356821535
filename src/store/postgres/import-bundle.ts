/**
 * PostgreSQL's table writes of a validated bundle, taken in the import order of
 * store/import-bundle.ts within one transaction, with the semantics of the SQLite engine: upserts
 * (re-import updates in place), `is_latest` moved to the bundle's latest versions,
 * `root_workspace_id` derived from the tree, the full-text vector set on every version, and the
 * registry generation bumped so every replica's caches see the change. Any failure rolls back all.
 */
import type pg from 'pg';
import { IMPORT_LOCK } from './import-lock.ts';
import { RELATIONSHIP_COLUMN_NAMES } from '../sql-rows.ts';
import { fillAllRelationshipForms } from './relationship-forms.ts';
import type { Bundle } from '../../domain/types.ts';
import { apiDocumentJson } from '../../shared/api-document.ts';
import { fillReadyDocuments } from './ready-documents.ts';
import { mcpServerWrites } from './mcp-server-import.ts';
import type { ImportCounts } from '../registry-port.ts';
import { type BundleWrites, writeBundle } from '../import-bundle.ts';
import {
  identityRow,
  orNull,
  projectRow,
  relationshipRow,
  repoRow,
  str,
  userRow,
  workspaceRow,
} from '../bundle-rows.ts';

const upsert = (table: string, columns: string[], key: string[]) =>
  `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})
   ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${columns
     .filter((c) => !key.includes(c))
     .map((c) => `${c} = EXCLUDED.${c}`)
     .join(', ')}`;

const SQL = {
  org: upsert('organizations', ['id', 'name', 'status'], ['id']),
  user: upsert('users', ['id', 'org_id', 'name', 'email', 'status', 'created_at', 'updated_at', 'enrichment'], ['id']),
  workspace: upsert(
    'workspaces',
    [
      'id',
      'org_id',
      'parent_id',
      'root_workspace_id',
      'name',
      'display_name',
      'kind',
      'workspace_status',
      'created_at',
      'created_by',
      'updated_at',
      'updated_by',
    ],
    ['id'],
  ),
  membership: upsert('memberships', ['workspace_id', 'user_id', 'role'], ['workspace_id', 'user_id']),
  project: upsert(
    'projects',
    [
      'id',
      'workspace_id',
      'name',
      'display_name',
      'project_status',
      'knowledge_urls',
      'created_at',
      'created_by',
      'updated_at',
      'updated_by',
    ],
    ['id'],
  ),
  repo: upsert(
    'repos',
    [
      'id',
      'workspace_id',
      'name',
      'display_name',
      'source_uri',
      'default_branch',
      'created_at',
      'created_by',
      'updated_at',
      'updated_by',
    ],
    ['id'],
  ),
  relationship: upsert('relationships', [...RELATIONSHIP_COLUMN_NAMES], ['from_id', 'to_id', 'rel_type']),
  identity: upsert(
    'identities',
    ['agent_id', 'client_id', 'credential_kind', 'api_key_hash', 'api_key_last4', 'expires_at', 'revoked'],
    ['agent_id'],
  ),
  image: upsert('profile_images', ['agent_id', 'content_type', 'bytes'], ['agent_id']),
  artifact: `INSERT INTO artifacts (id, version_ordinal, is_latest, kind, name, name_lower, display_name, display_name_lower,
      workspace_id, project_id, artifact_status, created_at, created_by, updated_at, updated_by, server_id, provider_kind,
      owner, is_system, source_type, doc, search, repo_id, api_json)
    VALUES ($1, $2, $3, $4, $5, lower($5), $6, lower($6), $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
      setweight(to_tsvector('simple', $5), 'A') || setweight(to_tsvector('simple', coalesce($6, '')), 'B')
        || setweight(to_tsvector('simple', coalesce($20, '')), 'C'), $21, $22)
    ON CONFLICT (id, version_ordinal) DO UPDATE SET is_latest = EXCLUDED.is_latest, kind = EXCLUDED.kind,
      name = EXCLUDED.name, name_lower = EXCLUDED.name_lower, display_name = EXCLUDED.display_name,
      display_name_lower = EXCLUDED.display_name_lower, workspace_id = EXCLUDED.workspace_id,
      project_id = EXCLUDED.project_id, repo_id = EXCLUDED.repo_id, artifact_status = EXCLUDED.artifact_status, created_at = EXCLUDED.created_at,
      created_by = EXCLUDED.created_by, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by,
      server_id = EXCLUDED.server_id, provider_kind = EXCLUDED.provider_kind, owner = EXCLUDED.owner,
      is_system = EXCLUDED.is_system, source_type = EXCLUDED.source_type, doc = EXCLUDED.doc, search = EXCLUDED.search,
      api_json = EXCLUDED.api_json`,
};

/** Writes `b` in one transaction and returns what the bundle held; rejects (and rolls back) on any failure. */
export async function importBundle(pool: pg.Pool, b: Bundle): Promise<ImportCounts> {
  const c = await pool.connect();
  let counts: ImportCounts;
  try {
    await c.query('BEGIN');
    // An import is bulk work, not a request: the pool's statement timeout (the request deadline)
    // does not apply. Replicas seeding one empty database at once queue on this lock instead of
    // timing out on each other's rows, then each upsert is a no-op update.
    await c.query('SET LOCAL statement_timeout = 0');
    await c.query('SELECT pg_advisory_xact_lock($1)', [IMPORT_LOCK]);
    counts = await writeBundle(b, tableWrites(c));
    await c.query('UPDATE registry_generation SET n = n + 1 WHERE id = 1');
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
  return counts;
}

/** The table writes of an import (in the order of store/import-bundle.ts), on connection `c`. */
const tableWrites = (c: pg.PoolClient): BundleWrites<Promise<unknown>> => ({
  organization: (o) => c.query(SQL.org, [o.id, o.name, o.status]),
  user: (u) => c.query(SQL.user, userRow(u)),
  workspace: (w) => c.query(SQL.workspace, workspaceRow(w)),
  workspaceRoots: () =>
    c.query(`WITH RECURSIVE tree(id, root) AS (
        SELECT id, id FROM workspaces WHERE parent_id IS NULL
        UNION ALL SELECT w.id, tree.root FROM workspaces w JOIN tree ON w.parent_id = tree.id)
      UPDATE workspaces SET root_workspace_id = tree.root FROM tree WHERE tree.id = workspaces.id AND workspaces.root_workspace_id <> tree.root`),
  membership: (m) => c.query(SQL.membership, [m.workspace_id, m.user_id, m.role]),
  project: (p) => c.query(SQL.project, projectRow(p)),
  repo: (r) => c.query(SQL.repo, repoRow(r)),
  ...mcpServerWrites(c),
  unmarkLatest: async (ids) => {
    if (ids.length > 0) await c.query('UPDATE artifacts SET is_latest = FALSE WHERE id = ANY($1::text[])', [ids]);
  },
  // The full-text vector is part of the upsert (every version): no `indexLatest` step.
  artifact: (a) => {
    const d = a.doc;
    return c.query(SQL.artifact, [
      a.id,
      a.version_ordinal,
      a.is_latest,
      a.kind,
      a.name,
      orNull(a.display_name),
      a.workspace_id,
      orNull(a.project_id),
      a.artifact_status,
      a.created_at,
      a.created_by,
      a.updated_at,
      a.updated_by,
      orNull(a.server_id),
      str(d.provider_kind),
      str(d.owner),
      typeof d.is_system === 'boolean' ? d.is_system : null,
      str(d.source_type),
      JSON.stringify(d),
      str(d.instructions),
      orNull(a.repo_id),
      apiDocumentJson(a.kind, d),
    ]);
  },
  // A re-imported document whose ready form did not change lost it to the trigger (migration 003).
  readyDocuments: async () => {
    for (let after = '0'; after !== '';) after = (await fillReadyDocuments(c, after)).last;
  },
  relationship: (r) => c.query(SQL.relationship, relationshipRow(r)),
  identity: (i) =>
    c.query(
      SQL.identity,
      identityRow(i, (b) => b),
    ),
  profileImage: (img) => c.query(SQL.image, [img.agent_id, img.content_type, Buffer.from(img.bytes)]),
  // The triggers of migration 004 dropped the relationship forms this import changed.
  relationshipForms: () => fillAllRelationshipForms(c),
});
