-- Registry schema, version 3: source repositories, and each artifact version's repository as a
-- column. Files written before keep working: the column is filled from the `repo_id` their
-- documents already hold (a repository they name that no bundle has imported yet is simply absent).
-- Never edit once released: add a new numbered file instead.
CREATE TABLE repos (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  display_name TEXT NOT NULL,
  source_uri TEXT NOT NULL,
  default_branch TEXT,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  updated_by TEXT NOT NULL
);
CREATE INDEX repos_workspace ON repos(workspace_id, id);

ALTER TABLE artifacts ADD COLUMN repo_id TEXT;
UPDATE artifacts SET repo_id = json_extract(doc, '$.repo_id') WHERE json_type(doc, '$.repo_id') = 'text';
CREATE INDEX artifacts_latest_repo ON artifacts(repo_id, id) WHERE is_latest = 1;
