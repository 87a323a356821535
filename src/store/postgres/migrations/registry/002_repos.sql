-- Registry schema, version 2 (PostgreSQL): source repositories, and each artifact version's
-- repository as a column, filled for existing rows from the `repo_id` their documents hold.
-- Never edit once released: add a new numbered file.
CREATE TABLE repos (
  id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL REFERENCES workspaces(id), name TEXT NOT NULL,
  display_name TEXT NOT NULL, source_uri TEXT NOT NULL, default_branch TEXT, created_at TEXT NOT NULL,
  created_by TEXT NOT NULL, updated_at TEXT NOT NULL, updated_by TEXT NOT NULL);
CREATE INDEX repos_workspace ON repos (workspace_id, id);

ALTER TABLE artifacts ADD COLUMN repo_id TEXT;
UPDATE artifacts SET repo_id = doc::jsonb ->> 'repo_id' WHERE jsonb_typeof(doc::jsonb -> 'repo_id') = 'string';
CREATE INDEX artifacts_latest_repo ON artifacts (repo_id, id) WHERE is_latest;
