-- Registry schema, version 1 (PostgreSQL). Never edit once released: add a new numbered file.
CREATE TABLE organizations (id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL);

CREATE TABLE users (
  id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES organizations(id), name TEXT, email TEXT, status TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, enrichment TEXT);
CREATE INDEX users_org ON users (org_id, id);

CREATE TABLE workspaces (
  id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES organizations(id), parent_id TEXT, root_workspace_id TEXT NOT NULL,
  name TEXT NOT NULL, display_name TEXT NOT NULL, kind TEXT NOT NULL, workspace_status TEXT NOT NULL,
  created_at TEXT NOT NULL, created_by TEXT NOT NULL, updated_at TEXT NOT NULL, updated_by TEXT NOT NULL);
CREATE INDEX workspaces_org ON workspaces (org_id);

CREATE TABLE memberships (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id), user_id TEXT NOT NULL REFERENCES users(id), role TEXT NOT NULL,
  PRIMARY KEY (workspace_id, user_id));
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE projects (
  id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL REFERENCES workspaces(id), name TEXT NOT NULL, display_name TEXT NOT NULL,
  project_status TEXT NOT NULL, knowledge_urls TEXT, created_at TEXT NOT NULL, created_by TEXT NOT NULL,
  updated_at TEXT NOT NULL, updated_by TEXT NOT NULL);
CREATE INDEX projects_workspace ON projects (workspace_id, id);

-- One row per artifact version; `doc` keeps the API-shaped artifact as text (key order preserved).
CREATE TABLE artifacts (
  seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL, version_ordinal INTEGER NOT NULL, is_latest BOOLEAN NOT NULL,
  kind TEXT NOT NULL, name TEXT NOT NULL, name_lower TEXT NOT NULL, display_name TEXT, display_name_lower TEXT,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id), project_id TEXT, artifact_status TEXT NOT NULL,
  created_at TEXT NOT NULL, created_by TEXT NOT NULL, updated_at TEXT NOT NULL, updated_by TEXT NOT NULL,
  server_id TEXT, provider_kind TEXT, owner TEXT, is_system BOOLEAN, source_type TEXT, doc TEXT NOT NULL,
  search TSVECTOR NOT NULL, UNIQUE (id, version_ordinal));
CREATE INDEX artifacts_latest_kind ON artifacts (kind, workspace_id, name_lower, id) WHERE is_latest;
CREATE INDEX artifacts_latest_id ON artifacts (id) WHERE is_latest;
CREATE INDEX artifacts_latest_project ON artifacts (project_id) WHERE is_latest;
CREATE INDEX artifacts_latest_creator ON artifacts (created_by) WHERE is_latest;
CREATE INDEX artifacts_search ON artifacts USING GIN (search);

CREATE TABLE relationships (
  from_id TEXT NOT NULL, from_kind TEXT NOT NULL, to_id TEXT NOT NULL, to_kind TEXT NOT NULL, rel_type TEXT NOT NULL,
  provenance TEXT NOT NULL, relationship_status TEXT NOT NULL, label TEXT, role TEXT, weight DOUBLE PRECISION,
  confidence DOUBLE PRECISION, attributes TEXT, PRIMARY KEY (from_id, to_id, rel_type));
CREATE INDEX relationships_to ON relationships (to_id);

CREATE TABLE identities (
  agent_id TEXT PRIMARY KEY, client_id TEXT NOT NULL UNIQUE, credential_kind TEXT NOT NULL, api_key_hash TEXT UNIQUE,
  api_key_last4 TEXT, expires_at TEXT, revoked BOOLEAN NOT NULL DEFAULT FALSE);

CREATE TABLE profile_images (agent_id TEXT PRIMARY KEY, content_type TEXT NOT NULL, bytes BYTEA NOT NULL);

-- Bumped by every import, in its transaction: every replica's response cache sees the change.
CREATE TABLE registry_generation (id INTEGER PRIMARY KEY, n BIGINT NOT NULL);
INSERT INTO registry_generation VALUES (1, 0);
