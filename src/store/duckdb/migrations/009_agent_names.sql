-- Agent names as sent admitted per (organization, workspace, UTC day of the span's start): at most
-- OTLP_MAX_AGENT_NAMES each (store/agent-names.ts, otlp/ingest.ts). Written by the one writer in
-- its own transaction before the spans that carry the names; retention drops the days before its
-- cutoff. Names stored before are not counted here: a day under way may admit the cap again.
CREATE TABLE agent_names (org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, day INTEGER NOT NULL,
  name VARCHAR NOT NULL, PRIMARY KEY (org_id, workspace_id, day, name));
