-- Agent names as sent admitted per (organization, workspace, UTC day of the span's start): at most
-- OTLP_MAX_AGENT_NAMES each (store/agent-names.ts, otlp/ingest.ts). Written before the spans that
-- carry the names, under an advisory lock per workspace and day (agent-names.ts), so replicas
-- admitting at once never pass the cap; retention drops the days before its cutoff. Names stored
-- before are not counted here: a day under way may admit the cap again.
CREATE TABLE agent_names (org_id TEXT NOT NULL, workspace_id TEXT NOT NULL, day INTEGER NOT NULL, name TEXT NOT NULL,
  PRIMARY KEY (org_id, workspace_id, day, name));
