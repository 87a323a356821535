-- Registry schema, version 5 (PostgreSQL): MCP servers, as SQLite's migration 006. One row per
-- published version (src/store/mcp-server-port.ts); `server_json` is the server.json document as
-- published, `name` and `version` its copies. Text columns that lists order by use the "C"
-- collation (byte order, as SQLite's). Timestamps are ISO 8601 UTC text with milliseconds.
-- Never edit once released: add a new numbered file.
CREATE TABLE mcp_servers (
  org_id TEXT NOT NULL REFERENCES organizations(id), id TEXT COLLATE "C" NOT NULL, version TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL, workspace_id TEXT NOT NULL REFERENCES workspaces(id), server_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'deprecated', 'deleted')), is_latest BOOLEAN NOT NULL,
  published_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL,
  status_changed_at TEXT COLLATE "C" NOT NULL, created_by TEXT NOT NULL,
  updated_by TEXT NOT NULL, PRIMARY KEY (org_id, id, version), UNIQUE (org_id, name, version));
-- The keyset lists: (name, version) order, filtered by workspace.
CREATE INDEX mcp_servers_list ON mcp_servers (name, version, workspace_id);
CREATE INDEX mcp_servers_latest ON mcp_servers (name, version, workspace_id) WHERE is_latest;
