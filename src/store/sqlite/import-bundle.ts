/**
 * SQLite's table writes of a validated bundle, taken in the import order of store/import-bundle.ts
 * within one IMMEDIATE transaction: upserts every object (re-import updates in place), moves
 * `is_latest` to the bundle's latest versions, derives `root_workspace_id` from the tree and keeps
 * the full-text index on latest versions only. Any failure rolls everything back.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { Bundle } from '../../domain/types.ts';
import { apiDocumentJson } from '../../shared/api-document.ts';
import { fillReadyDocuments } from './ready-documents.ts';
import { fillAllRelationshipForms } from './relationship-forms.ts';
import { mcpServerWrites } from './mcp-servers.ts';
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
import type { ImportCounts } from '../registry-port.ts';
import { type BundleWrites, writeBundleSync } from '../import-bundle.ts';

const bool = (v: unknown): number | null => (typeof v === 'boolean' ? (v ? 1 : 0) : null);
/** SQLite binds no booleans: rows carry 0/1. */
const bind = (row: (string | number | boolean | null)[]) => row.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));

/** Writes `b` in one IMMEDIATE transaction and returns what the bundle held; throws (and rolls back) on any failure. */
export function importBundle(db: DatabaseSync, b: Bundle): ImportCounts {
  db.exec('BEGIN IMMEDIATE');
  let counts: ImportCounts;
  try {
    counts = writeBundleSync(b, tableWrites(db));
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
  return counts;
}

/** The table writes of an import (in the order of store/import-bundle.ts), on statements prepared once. */
function tableWrites(db: DatabaseSync): BundleWrites<void> {
  const org = db.prepare(`INSERT INTO organizations (id, name, status) VALUES (?, ?, ?)
    ON CONFLICT(id) DO UPDATE SET name = excluded.name, status = excluded.status`);
  const user = db.prepare(`INSERT INTO users (id, org_id, name, email, status, created_at, updated_at, enrichment)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET org_id = excluded.org_id, name = excluded.name,
    email = excluded.email, status = excluded.status, created_at = excluded.created_at,
    updated_at = excluded.updated_at, enrichment = excluded.enrichment`);
  const ws = db.prepare(`INSERT INTO workspaces (id, org_id, parent_id, root_workspace_id, name, display_name, kind,
    workspace_status, created_at, created_by, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(id) DO UPDATE SET org_id = excluded.org_id, parent_id = excluded.parent_id, name = excluded.name,
    display_name = excluded.display_name, kind = excluded.kind, workspace_status = excluded.workspace_status,
    created_at = excluded.created_at, created_by = excluded.created_by, updated_at = excluded.updated_at,
    updated_by = excluded.updated_by`);
  const member = db.prepare(`INSERT INTO memberships (workspace_id, user_id, role) VALUES (?, ?, ?)
    ON CONFLICT(workspace_id, user_id) DO UPDATE SET role = excluded.role`);
  const project = db.prepare(`INSERT INTO projects (id, workspace_id, name, display_name, project_status,
    knowledge_urls, created_at, created_by, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(id) DO UPDATE SET workspace_id = excluded.workspace_id, name = excluded.name,
    display_name = excluded.display_name, project_status = excluded.project_status,
    knowledge_urls = excluded.knowledge_urls, created_at = excluded.created_at, created_by = excluded.created_by,
    updated_at = excluded.updated_at, updated_by = excluded.updated_by`);
  const repo = db.prepare(`INSERT INTO repos (id, workspace_id, name, display_name, source_uri, default_branch,
    created_at, created_by, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(id) DO UPDATE SET workspace_id = excluded.workspace_id, name = excluded.name,
    display_name = excluded.display_name, source_uri = excluded.source_uri, default_branch = excluded.default_branch,
    created_at = excluded.created_at, created_by = excluded.created_by, updated_at = excluded.updated_at,
    updated_by = excluded.updated_by`);
  const rel = db.prepare(`INSERT INTO relationships (from_id, from_kind, to_id, to_kind, rel_type, provenance,
    relationship_status, label, role, weight, confidence, attributes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(from_id, to_id, rel_type) DO UPDATE SET from_kind = excluded.from_kind, to_kind = excluded.to_kind,
    provenance = excluded.provenance, relationship_status = excluded.relationship_status, label = excluded.label,
    role = excluded.role, weight = excluded.weight, confidence = excluded.confidence, attributes = excluded.attributes`);
  const identity = db.prepare(`INSERT INTO identities (agent_id, client_id, credential_kind, api_key_hash,
    api_key_last4, expires_at, revoked) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(agent_id) DO UPDATE SET
    client_id = excluded.client_id, credential_kind = excluded.credential_kind, api_key_hash = excluded.api_key_hash,
    api_key_last4 = excluded.api_key_last4, expires_at = excluded.expires_at, revoked = excluded.revoked`);
  const image = db.prepare(`INSERT INTO profile_images (agent_id, content_type, bytes) VALUES (?, ?, ?)
    ON CONFLICT(agent_id) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes`);
  const artifacts = artifactWrites(db);
  return {
    organization: (o) => org.run(o.id, o.name, o.status),
    user: (u) => user.run(...bind(userRow(u))),
    workspace: (w) => ws.run(...bind(workspaceRow(w))),
    workspaceRoots: () => {
      db.exec(`WITH RECURSIVE tree(id, root) AS (
          SELECT id, id FROM workspaces WHERE parent_id IS NULL
          UNION ALL SELECT w.id, tree.root FROM workspaces w JOIN tree ON w.parent_id = tree.id)
        UPDATE workspaces SET root_workspace_id = (SELECT root FROM tree WHERE tree.id = workspaces.id)
        WHERE id IN (SELECT id FROM tree)`);
    },
    membership: (m) => member.run(m.workspace_id, m.user_id, m.role),
    project: (p) => project.run(...bind(projectRow(p))),
    repo: (r) => repo.run(...bind(repoRow(r))),
    ...mcpServerWrites(db),
    ...artifacts,
    // A re-imported document whose ready form did not change lost it to the trigger (migration 004).
    readyDocuments: () => {
      for (let after = 0; after >= 0;) after = fillReadyDocuments(db, after).last;
    },
    relationship: (r) => rel.run(...bind(relationshipRow(r))),
    identity: (i) => identity.run(...bind(identityRow(i, (b) => b))),
    profileImage: (img) => image.run(img.agent_id, img.content_type, img.bytes),
    // The triggers of migration 005 dropped the relationship forms this import changed.
    relationshipForms: () => {
      fillAllRelationshipForms(db);
    },
  };
}

/** The artifact writes: latest moved, each version upserted, the full-text index kept on latest versions only. */
function artifactWrites(db: DatabaseSync): Pick<BundleWrites<void>, 'unmarkLatest' | 'artifact' | 'indexLatest'> {
  const unlatest = db.prepare('UPDATE artifacts SET is_latest = 0 WHERE id = ?');
  const dropFts = db.prepare('DELETE FROM artifacts_fts WHERE rowid IN (SELECT seq FROM artifacts WHERE id = ?)');
  const upsert =
    db.prepare(`INSERT INTO artifacts (id, version_ordinal, is_latest, kind, name, name_lower, display_name,
    display_name_lower, workspace_id, project_id, repo_id, artifact_status, created_at, created_by, updated_at,
    updated_by, server_id, provider_kind, owner, is_system, source_type, doc, api_json)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(id, version_ordinal) DO UPDATE SET is_latest = excluded.is_latest, kind = excluded.kind,
    name = excluded.name, name_lower = excluded.name_lower, display_name = excluded.display_name,
    display_name_lower = excluded.display_name_lower, workspace_id = excluded.workspace_id,
    project_id = excluded.project_id, repo_id = excluded.repo_id, artifact_status = excluded.artifact_status, created_at = excluded.created_at,
    created_by = excluded.created_by, updated_at = excluded.updated_at, updated_by = excluded.updated_by,
    server_id = excluded.server_id, provider_kind = excluded.provider_kind, owner = excluded.owner,
    is_system = excluded.is_system, source_type = excluded.source_type, doc = excluded.doc,
    api_json = excluded.api_json`);
  const fts = db.prepare(`INSERT INTO artifacts_fts (rowid, name, display_name, instructions)
    SELECT seq, name, COALESCE(display_name, ''), COALESCE(json_extract(doc, '$.instructions'), '')
    FROM artifacts WHERE id = ? AND is_latest = 1`);
  return {
    unmarkLatest: (ids) => {
      for (const id of ids) {
        dropFts.run(id);
        unlatest.run(id);
      }
    },
    artifact: (a) => {
      const d = a.doc;
      upsert.run(
        a.id,
        a.version_ordinal,
        a.is_latest ? 1 : 0,
        a.kind,
        a.name,
        a.name.toLowerCase(),
        orNull(a.display_name),
        a.display_name?.toLowerCase() ?? null,
        a.workspace_id,
        orNull(a.project_id),
        orNull(a.repo_id),
        a.artifact_status,
        a.created_at,
        a.created_by,
        a.updated_at,
        a.updated_by,
        orNull(a.server_id),
        str(d.provider_kind),
        str(d.owner),
        bool(d.is_system),
        str(d.source_type),
        JSON.stringify(d),
        apiDocumentJson(a.kind, d),
      );
    },
    indexLatest: (ids) => {
      for (const id of ids) fts.run(id);
    },
  };
}
