-- Registry schema, version 6: MCP servers, one row per published version (src/store/mcp-server-port.ts).
-- `server_json` is the server.json document as published; `name` and `version` are its copies.
-- Within an organization an id holds one name and a name one id (the store checks it when it
-- writes); `is_latest` marks the latest non-deleted version of a name. Timestamps are ISO 8601
-- UTC with milliseconds (`toISOString()`), so text order is time order.
-- Never edit once released: add a new numbered file instead.
CREATE TABLE mcp_servers (
  org_id TEXT NOT NULL REFERENCES organizations(id),
  id TEXT NOT NULL,
  version TEXT NOT NULL,
  name TEXT NOT NULL,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  server_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'deprecated', 'deleted')),
  is_latest INTEGER NOT NULL,
  published_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  status_changed_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  PRIMARY KEY (org_id, id, version),
  UNIQUE (org_id, name, version)
);
-- The keyset lists: (name, version) order, filtered by workspace.
CREATE INDEX mcp_servers_list ON mcp_servers(name, version, workspace_id);
CREATE INDEX mcp_servers_latest ON mcp_servers(name, version, workspace_id) WHERE is_latest = 1;
